"""`hubrelease sign` and local `verify --signature`: methods, refusals, and no second hash of the bytes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from huggingface_hub import HfApi

import hubrelease.hashing.pool as pool_module
import hubrelease.signing.release as release_module
from hubrelease.hashing import sha256_file
from hubrelease.release_files import SIGNATURE_NAME
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import run_cli, run_program
from tests.factories.hub import api_for, unique_repo
from tests.factories.releases import write_release
from tests.factories.signing import certificate_chain, ec_key_pair

FILES = {"model.safetensors": os.urandom(300_000), "config.json": b'{"a": 1}\n', "sub/notes.md": b"# notes\n"}


def _release(folder: Path, repo: str = "acme/signed") -> Path:
    return write_release(folder, FILES, extra_manifest={"release": {"repo_id": repo, "license": "mit"}})


def _verify(manifest: Path, *policy: str | Path) -> tuple[int, list[tuple[str, str, str]]]:
    code, out, err = run_cli("verify", manifest, "--signature", *policy, "--json")
    assert code in (0, 1), err
    findings = json.loads(out)["findings"]
    return code, [(f["kind"], f["path"], f["message"]) for f in findings if f["severity"] == "error"]


@pytest.mark.parametrize("curve", [ec.SECP256R1(), ec.SECP384R1()], ids=["P-256", "P-384"])
def test_key_signature_over_every_published_file(tmp_path: Path, curve: ec.EllipticCurve) -> None:
    manifest = _release(tmp_path / "rel")
    keys = ec_key_pair(tmp_path / "keys", curve=curve)
    code, out, err = run_cli("sign", manifest, "--key", keys.private, "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["method"] == "key" and payload["signature"] == str(tmp_path / "rel" / SIGNATURE_NAME)
    assert [f["path"] for f in payload["files"]] == [
        "config.json",
        "hubrelease.yaml",
        "model.safetensors",
        "sub/notes.md",
    ]
    assert ".cache/huggingface" in payload["ignore_paths"]
    assert _verify(manifest, "--public-key", keys.public) == (0, [])
    code, _, err = run_cli("verify", manifest)  # model.sig is a file of the release, not an unlisted one
    assert code == 0, err
    (tmp_path / "rel" / "sub" / "notes.md").write_bytes(b"# notez\n")
    code, found = _verify(manifest, "--public-key", keys.public)
    assert code == 1 and ("signature", "sub/notes.md") in {(k, p) for k, p, _ in found}


def test_sign_reads_no_artifact_byte_after_a_warm_verify(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Digests are the manifest's, verified through the stat cache: only the manifest itself is hashed."""
    manifest = _release(tmp_path / "rel")
    keys = ec_key_pair(tmp_path / "keys")
    old = 1_000_000_000  # well before the cache's stamp, so the entries are trusted
    for name in FILES:
        os.utime(tmp_path / "rel" / name, ns=(old, old))
    assert run_cli("verify", manifest)[0] == 0
    hashed: list[str] = []

    def hash_it(path: str | Path, *args: Any, **kwargs: Any) -> str:
        hashed.append(Path(path).name)
        return sha256_file(path, *args, **kwargs)

    monkeypatch.setattr(pool_module, "sha256_file", hash_it)
    monkeypatch.setattr(release_module, "sha256_file", hash_it)
    assert run_cli("sign", manifest, "--key", keys.private)[0] == 0
    assert hashed == ["hubrelease.yaml"]


def test_a_cold_sign_hashes_each_published_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No stat cache: the preflight's verify hashes the artifacts, the statement takes their pins."""
    manifest = _release(tmp_path / "rel")
    keys = ec_key_pair(tmp_path / "keys")
    hashed: list[str] = []

    def hash_it(path: str | Path, *args: Any, **kwargs: Any) -> str:
        hashed.append(Path(path).relative_to(tmp_path / "rel").as_posix())
        return sha256_file(path, *args, **kwargs)

    monkeypatch.setattr(pool_module, "sha256_file", hash_it)
    monkeypatch.setattr(release_module, "sha256_file", hash_it)
    assert run_cli("sign", manifest, "--key", keys.private)[0] == 0
    assert sorted(hashed) == sorted([*FILES, "hubrelease.yaml"])


def test_a_cold_key_sign_loads_no_lint_reader_and_no_round_trip_editor(tmp_path: Path) -> None:
    """A release without ``lint: true`` or ``root:``: nothing reads a GGUF or rewrites the manifest."""
    manifest = _release(tmp_path / "rel")
    keys = ec_key_pair(tmp_path / "keys")
    unneeded = ("ruamel", "hubrelease.lint.drafter", "hubrelease.manifest.editor", "hubrelease.formats.gguf")
    probe = (
        "import sys\n"
        "from hubrelease.cli.app import app\n"
        f"try:\n    app({['sign', str(manifest), '--key', str(keys.private)]!r})\n"
        "except SystemExit as exit:\n    code = exit.code\n"
        f"print(code, sorted(m for m in sys.modules if m.startswith({unneeded!r})))\n"
    )
    done = run_program([sys.executable, "-c", probe], check=True)
    assert (tmp_path / "rel" / SIGNATURE_NAME).is_file()
    assert done.stdout.strip().splitlines()[-1] == "0 []"


def test_certificate_chain_signature(tmp_path: Path) -> None:
    manifest = _release(tmp_path / "rel")
    chain = certificate_chain(tmp_path / "pki")
    code, _, err = run_cli(
        "sign", manifest, "--key", chain.key, "--certificate", chain.leaf, "--chain", chain.intermediate
    )
    assert code == 0, err
    assert _verify(manifest, "--certificate-chain", chain.root) == (0, [])
    stranger = certificate_chain(tmp_path / "other-pki")
    code, found = _verify(manifest, "--certificate-chain", stranger.root)
    assert (
        code == 1
        and found[0][:2] == ("signature", SIGNATURE_NAME)
        and "does not verify (certificate)" in found[0][2]
    )


def test_sign_refuses_a_release_that_does_not_verify_and_writes_nothing(tmp_path: Path) -> None:
    manifest = _release(tmp_path / "rel")
    (tmp_path / "rel" / "config.json").write_bytes(b'{"a": 2}\n')
    keys = ec_key_pair(tmp_path / "keys")
    code, _, err = run_cli("sign", manifest, "--key", keys.private)
    assert code == 1 and "local verify found 1 problem(s), first: config.json" in err
    assert not (tmp_path / "rel" / SIGNATURE_NAME).exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "say how to sign: --key PEM"),
        (("--sigstore", "--key", "k.pem"), "say how to sign"),
        (("--certificate", "c.pem", "--sigstore"), "--certificate and --chain sign with --key"),
        (("--key", "k.pem", "--trust-config", "t.json"), "--trust-config applies to --sigstore"),
        (("--sigstore",), "keyless signing needs an ambient OIDC identity token"),
    ],
)
def test_sign_usage_errors_are_one_line_exit_2(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    manifest = _release(tmp_path / "rel")
    code, _, err = run_cli("sign", manifest, *args)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err


def test_unusable_key_material_is_one_line_naming_the_file(tmp_path: Path) -> None:
    manifest = _release(tmp_path / "rel")
    garbage = tmp_path / "key.pem"
    garbage.write_text("not a key\n")
    code, _, err = run_cli("sign", manifest, "--key", garbage)
    assert code == 2 and err.startswith(f"error: {garbage}: cannot sign with it:"), err
    from cryptography.hazmat.primitives import serialization

    key = ec.generate_private_key(ec.SECP256R1())
    locked = tmp_path / "locked.pem"
    locked.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
    )
    code, _, err = run_cli("sign", manifest, "--key", locked)
    assert code == 2 and "HUBRELEASE_SIGNING_KEY_PASSWORD" in err, err
    os.environ["HUBRELEASE_SIGNING_KEY_PASSWORD"] = "secret"
    try:
        assert run_cli("sign", manifest, "--key", locked)[0] == 0
    finally:
        del os.environ["HUBRELEASE_SIGNING_KEY_PASSWORD"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--public-key", "p.pem"), "--public-key needs --signature"),
        (
            ("--signature",),
            "say whom to trust: --public-key, --certificate-chain, --identity (with --issuer), --github-workflow "
            "or --trust-manifest REPO@COMMIT (or declare",
        ),
        (("--signature", "--identity", "me@example.com"), "both --identity and --issuer"),
        (("--signature", "--public-key", "p.pem", "--identity", "x", "--issuer", "y"), "give one of"),
        (("--signature", "--public-key", "p.pem", "--trust-config", "t.json"), "--trust-config applies"),
        (("--allow-unpinned-signer",), "--allow-unpinned-signer needs --signature"),
        (("--signature", "--identity", "sha256:abc"), "a key fingerprint is sha256: and 64 lowercase hex"),
        (
            ("--signature", "--identity", f"sha256:{'a' * 64}"),
            "pass --public-key (or --certificate-chain) with it",
        ),
        (
            ("--signature", "--github-workflow", "acme/x@refs/tags/v1"),
            "say OWNER/REPO/.github/workflows/FILE.yml@REF",
        ),
        (
            ("--signature", "--trust-manifest", f"acme/x@{'0' * 40}", "--public-key", "p.pem"),
            "--trust-manifest takes the signer from that manifest: drop --public-key",
        ),
        (("--signature", "--trust-manifest", "acme/x@main"), "the full 40-hex commit"),
    ],
)
def test_verify_signature_usage_errors(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    manifest = _release(tmp_path / "rel")
    code, _, err = run_cli("verify", manifest, *args)
    assert code == 2 and message in err, err


def test_an_unsigned_release_has_no_signature_to_verify(tmp_path: Path) -> None:
    manifest = _release(tmp_path / "rel")
    keys = ec_key_pair(tmp_path / "keys")
    assert _verify(manifest, "--public-key", keys.public) == (
        1,
        [("signature", SIGNATURE_NAME, "no signature: `hubrelease sign` writes one")],
    )


def _hub_files(api: HfApi, repo: str) -> set[str]:
    return set(api.list_repo_files(repo)) if api.repo_exists(repo) else set()


def test_push_refuses_a_signature_that_does_not_sign_what_it_publishes(
    tmp_path: Path, loopback_hub: LoopbackHub
) -> None:
    repo = unique_repo("sig")
    manifest = _release(tmp_path / "rel", repo)
    keys = ec_key_pair(tmp_path / "keys")
    assert run_cli("sign", manifest, "--key", keys.private)[0] == 0
    (tmp_path / "rel" / "sub" / "notes.md").write_bytes(b"# more notes\n")
    assert run_cli("add", manifest, tmp_path / "rel" / "sub" / "notes.md")[0] == 0  # manifest and pin move on
    code, _, err = run_cli("push", manifest, "--endpoint", loopback_hub.url)
    assert code == 1, err
    assert "model.sig does not sign what this push publishes: hubrelease.yaml: sha256 " in err
    assert "(and 1 more); re-run `hubrelease sign`; nothing was pushed" in err
    assert _hub_files(api_for(loopback_hub), repo) == set()
    assert run_cli("sign", manifest, "--key", keys.private)[0] == 0
    code, out, err = run_cli("push", manifest, "--endpoint", loopback_hub.url)
    assert code == 0, err
    assert _hub_files(api_for(loopback_hub), repo) == {
        *FILES,
        "hubrelease.yaml",
        SIGNATURE_NAME,
        ".gitattributes",
    }
    (
        tmp_path / "rel" / SIGNATURE_NAME
    ).unlink()  # an unsigned release replaces the signed one: the stale signature goes
    code, out, err = run_cli("push", manifest, "--endpoint", loopback_hub.url)
    assert code == 0 and ["deleted", "model.sig"] in [line.split()[:2] for line in out.splitlines()], out
    assert SIGNATURE_NAME not in _hub_files(api_for(loopback_hub), repo)


def test_signing_an_unchanged_release_again_keeps_its_signature(tmp_path: Path) -> None:
    """ECDSA signatures differ every run: a re-sign would make push upload model.sig again for nothing."""
    manifest = _release(tmp_path / "rel")
    keys = ec_key_pair(tmp_path / "keys")
    assert run_cli("sign", manifest, "--key", keys.private)[0] == 0
    signature = tmp_path / "rel" / SIGNATURE_NAME
    first = signature.read_bytes()
    code, _, err = run_cli("sign", manifest, "--key", keys.private)
    assert code == 0 and "unchanged: " in err and signature.read_bytes() == first
    other = ec_key_pair(tmp_path / "other", "other")
    code, out, _ = run_cli("sign", manifest, "--key", other.private, "--json")
    assert code == 0 and json.loads(out)["written"] is True and signature.read_bytes() != first
    assert _verify(manifest, "--public-key", other.public) == (0, [])
    (tmp_path / "rel" / "config.json").write_bytes(b'{"a": 3}\n')
    assert run_cli("add", manifest, tmp_path / "rel" / "config.json")[0] == 0
    resigned = signature.read_bytes()
    code, out, _ = run_cli("sign", manifest, "--key", other.private, "--json")
    assert code == 0 and json.loads(out)["written"] is True and signature.read_bytes() != resigned
