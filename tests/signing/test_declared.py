"""The manifest's ``signing:`` section: the card's instructions work as printed, sign and verify honour it."""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

from hubrelease.loopback import LoopbackHub
from hubrelease.release_files import SIGNATURE_NAME
from tests.factories.cli import run_cli, run_program
from tests.factories.hub import VENV_BIN, hf_env, unique_repo
from tests.factories.releases import write_release
from tests.factories.signing import KeyPair, ec_key_pair

WEIGHTS = os.urandom(120_000)


def _signed_release(
    folder: Path, repo: str, signing: dict[str, object] | None = None
) -> tuple[Path, KeyPair]:
    """A release whose public key is one of its files, declared in ``signing:``, with a rendered card."""
    keys = ec_key_pair(folder / "keys")
    files = {
        "model.safetensors": WEIGHTS,
        "config.json": b"{}\n",
        "signing-pub.pem": keys.public.read_bytes(),
    }
    manifest = write_release(
        folder / "rel",
        files,
        extra_manifest={
            "release": {"repo_id": repo, "license": "mit"},
            "card": {"template": "safetensors_drafter", "summary": "A signed release."},
            "signing": signing or {"method": "key", "public_key": "signing-pub.pem"},
        },
    )
    code, _, err = run_cli("render-card", manifest)
    assert code == 0, err
    return manifest, keys


def test_the_cards_commands_verify_the_release_as_printed(tmp_path: Path, loopback_hub: LoopbackHub) -> None:
    repo = unique_repo("card")
    manifest, keys = _signed_release(tmp_path, repo)
    card = (tmp_path / "rel" / "README.md").read_text(encoding="utf-8")
    section = card.split("## Signature\n", 1)[1]
    commands = re.search(r"```bash\n(.*?)```", section, re.S)
    assert commands is not None
    download, check = commands[1].strip().splitlines()
    name = repo.split("/")[1]
    assert download == f"hf download {repo} --revision main --local-dir {name}"
    assert (
        check
        == f"model_signing verify key {name} --signature {name}/model.sig --public_key {name}/signing-pub.pem"
    )
    assert f"`hubrelease verify {name}/hubrelease.yaml --signature`" in section
    assert run_cli("sign", manifest, "--key", keys.private)[0] == 0
    code, _, err = run_cli("push", manifest, "--endpoint", loopback_hub.url)
    assert code == 0, err
    env = hf_env(loopback_hub, tmp_path / "hf-home")
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env['PATH']}"
    for line in (download, check):  # run exactly what the card prints, in a reader's folder
        done = run_program(shlex.split(line), cwd=tmp_path, env=env)
        assert done.returncode == 0, (line, done.stdout, done.stderr)
    assert "Verification succeeded" in done.stdout
    code, out, err = run_cli("verify", tmp_path / name / "hubrelease.yaml", "--signature")  # the declared key
    assert code == 0 and out.startswith("OK (local)"), out + err


def test_sign_refuses_another_method_or_key_than_declared(tmp_path: Path) -> None:
    manifest, _ = _signed_release(tmp_path, "acme/declared")
    stranger = ec_key_pair(tmp_path / "stranger")
    code, _, err = run_cli("sign", manifest, "--key", stranger.private)
    assert code == 2 and "signing: the manifest's signer does not accept this signature" in err
    assert "Key mismatch" in err and not (tmp_path / "rel" / SIGNATURE_NAME).exists()
    code, _, err = run_cli("sign", manifest, "--sigstore")
    assert code == 2 and "signing.method: the manifest's signing.method is key, not sigstore" in err


def test_verify_trusts_the_declared_signer_unless_told_otherwise(tmp_path: Path) -> None:
    manifest, keys = _signed_release(tmp_path, "acme/declared")
    assert run_cli("sign", manifest, "--key", keys.private)[0] == 0
    assert run_cli("verify", manifest, "--signature")[0] == 0
    stranger = ec_key_pair(tmp_path / "stranger")
    code, out, _ = run_cli("verify", manifest, "--signature", "--public-key", stranger.public)
    assert code == 1 and "Key mismatch" in out


@pytest.mark.parametrize(
    ("signing", "message"),
    [
        ({"method": "key"}, "signing.method key needs public_key"),
        ({"method": "sigstore", "identity": "x"}, "signing.method sigstore needs issuer"),
        (
            {"method": "key", "public_key": "k.pem", "identity": "x"},
            "identity belongs to signing.method sigstore",
        ),
        ({"method": "gpg"}, "signing.method"),
    ],
)
def test_an_invalid_signing_section_names_its_field(
    tmp_path: Path, signing: dict[str, object], message: str
) -> None:
    manifest = write_release(tmp_path, {"a.bin": b"a"}, extra_manifest={"signing": signing})
    code, _, err = run_cli("verify", manifest)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_the_card_names_a_keyless_signer_and_a_dataset_download(tmp_path: Path) -> None:
    manifest = write_release(
        tmp_path,
        {"data.parquet": b"PAR1"},
        extra_manifest={
            "release": {"repo_id": "acme/data", "repo_type": "dataset", "license": "mit"},
            "card": {"template": "dataset_release"},
            "signing": {
                "method": "sigstore",
                "identity": "https://github.com/acme/data/.github/workflows/release.yml@refs/tags/v1",
                "issuer": "https://token.actions.githubusercontent.com",
            },
        },
    )
    code, _, err = run_cli("render-card", manifest)
    assert code == 0, err
    out = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert "hf download acme/data --repo-type dataset --revision main --local-dir data" in out
    assert (
        "model_signing verify sigstore data --signature data/model.sig --identity "
        "https://github.com/acme/data/.github/workflows/release.yml@refs/tags/v1 "
        "--identity_provider https://token.actions.githubusercontent.com"
    ) in out
