"""The manifest's ``signing:`` section: the card's instructions work as printed, sign and verify honour it."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import NamedTuple

import pytest
from huggingface_hub import CommitOperationAdd

from hubrelease.release_files import SIGNATURE_NAME
from hubrelease.signing.identity import pem_fingerprint
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import run_cli, run_program
from tests.factories.hub import VENV_BIN, api_for, hf_env, unique_repo
from tests.factories.releases import write_release
from tests.factories.signing import KeyPair, certificate_chain, ec_key_pair, resign

WEIGHTS = os.urandom(120_000)


def _signed_release(
    folder: Path, repo: str, signing: dict[str, object] | None = None, *, pin: bool = True
) -> tuple[Path, KeyPair]:
    """A release whose public key is one of its files, declared (and pinned) in ``signing:``, with a card."""
    keys = ec_key_pair(folder / "keys")
    files = {
        "model.safetensors": WEIGHTS,
        "config.json": b"{}\n",
        "signing-pub.pem": keys.public.read_bytes(),
    }
    declared: dict[str, object] = {"method": "key", "public_key": "signing-pub.pem"}
    if pin:
        declared["identity"] = pem_fingerprint(keys.public)
    manifest = write_release(
        folder / "rel",
        files,
        extra_manifest={
            "release": {"repo_id": repo, "license": "mit"},
            "card": {"template": "safetensors_drafter", "summary": "A signed release."},
            "signing": signing or declared,
        },
    )
    code, _, err = run_cli("render-card", manifest)
    assert code == 0, err
    return manifest, keys


def _card_commands(card: Path) -> list[str]:
    section = card.read_text(encoding="utf-8").split("## Signature\n", 1)[1]
    commands = re.search(r"```bash\n(.*?)```", section, re.S)
    assert commands is not None
    return commands[1].strip().splitlines()


def _run_line(line: str, cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    """One line of the card, as a reader's shell runs it (its fingerprint check is a pipeline)."""
    done = run_program(["bash", "-c", line], cwd=cwd, env=env)
    return done.returncode, done.stdout + done.stderr


def test_the_cards_commands_verify_the_release_as_printed_and_refuse_a_swapped_key(
    tmp_path: Path, loopback_hub: LoopbackHub
) -> None:
    repo = unique_repo("card")
    manifest, keys = _signed_release(tmp_path, repo)
    install, download, check = _card_commands(tmp_path / "rel" / "README.md")
    name = repo.split("/")[1]
    pinned = pem_fingerprint(keys.public)
    assert install == "pip install model-signing pyOpenSSL huggingface_hub"
    assert download == f"hf download {repo} --revision main --local-dir {name}"
    assert check == (
        f"openssl pkey -pubin -in {name}/signing-pub.pem -outform DER | sha256sum | grep -q '^{pinned[7:]} ' && "
        f"model_signing verify key {name} --signature {name}/model.sig --public_key {name}/signing-pub.pem"
    )
    card = (tmp_path / "rel" / "README.md").read_text(encoding="utf-8")
    assert f"the key with SHA-256 fingerprint `{pinned}`" in card
    assert f"`hubrelease verify {name}/hubrelease.yaml --signature --identity {pinned}`" in card
    assert run_cli("sign", manifest, "--key", keys.private)[0] == 0
    code, _, err = run_cli("push", manifest, "--endpoint", loopback_hub.url)
    assert code == 0, err
    env = hf_env(loopback_hub, tmp_path / "hf-home")
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env['PATH']}"
    for line in (download, check):  # run exactly what the card prints, in a reader's folder
        code, out = _run_line(line, tmp_path, env)
        assert code == 0, (line, out)
    assert "Verification succeeded" in out
    # A key swap: another key's public half, and the same statement signed with it.
    attacker = ec_key_pair(tmp_path / "attacker")
    shutil.copy(attacker.public, tmp_path / name / "signing-pub.pem")
    resign(tmp_path / name, attacker.private)
    code, out = _run_line(check.split(" && ")[1], tmp_path, env)
    assert code == 0, out  # model_signing alone trusts the swapped key ...
    code, out = _run_line(check, tmp_path, env)
    assert code == 1 and "Verification succeeded" not in out, out  # ... the card's comparison refuses it


def test_sign_refuses_another_method_or_key_than_declared(tmp_path: Path) -> None:
    manifest, keys = _signed_release(tmp_path, "acme/declared")
    stranger = ec_key_pair(tmp_path / "stranger")
    code, _, err = run_cli("sign", manifest, "--key", stranger.private)
    pinned, found = pem_fingerprint(keys.public), pem_fingerprint(stranger.public)
    assert code == 2 and f"signing.identity pins {pinned}, but --key is {found}" in err, err
    assert not (tmp_path / "rel" / SIGNATURE_NAME).exists()
    code, _, err = run_cli("sign", manifest, "--sigstore")
    assert code == 2 and "signing.method: the manifest's signing.method is key, not sigstore" in err


def test_sign_refuses_a_key_whose_public_half_is_not_the_published_one(tmp_path: Path) -> None:
    manifest, _ = _signed_release(tmp_path, "acme/declared", pin=False)
    stranger = ec_key_pair(tmp_path / "stranger")
    code, _, err = run_cli("sign", manifest, "--key", stranger.private)
    assert code == 2 and "signing: the manifest's signer does not accept this signature" in err
    assert "Key mismatch" in err and not (tmp_path / "rel" / SIGNATURE_NAME).exists()


def _signer(out: str) -> dict[str, str]:
    report = json.loads(out)
    found = [f for f in report["findings"] if f["path"] == SIGNATURE_NAME]
    assert len(found) == 1, found
    return {"severity": found[0]["severity"], "message": found[0]["message"]}


def test_verify_trusts_a_signer_pinned_from_outside_the_folder_only(tmp_path: Path) -> None:
    manifest, keys = _signed_release(tmp_path, "acme/declared")
    assert run_cli("sign", manifest, "--key", keys.private)[0] == 0
    pinned = pem_fingerprint(keys.public)
    code, out, _ = run_cli("verify", manifest, "--signature", "--json")  # the folder's own manifest
    signer = _signer(out)
    assert code == 1 and signer["severity"] == "error", signer
    assert (
        f"the signer is unverified: {pinned} is pinned only by the manifest in the folder"
        in signer["message"]
    )
    code, out, _ = run_cli("verify", manifest, "--signature", "--allow-unpinned-signer", "--json")
    assert code == 0 and _signer(out)["severity"] == "warning"
    code, out, err = run_cli("verify", manifest, "--signature", "--identity", pinned)
    assert (
        code == 0 and f"signature valid, signer matches the pinned identity {pinned} (from --identity)" in out
    )
    assert out.rstrip().splitlines()[-1].startswith("OK (local)"), out + err
    stranger = ec_key_pair(tmp_path / "stranger")
    other = pem_fingerprint(stranger.public)
    code, out, _ = run_cli("verify", manifest, "--signature", "--identity", other, "--json")
    message = _signer(out)["message"]
    assert code == 1 and message == (
        f"signer does not match the pinned identity: expected {other}, found {pinned} (signing-pub.pem)"
    )
    code, out, _ = run_cli("verify", manifest, "--signature", "--public-key", stranger.public)
    assert code == 1 and "Key mismatch" in out
    code, out, _ = run_cli("verify", manifest, "--signature", "--public-key", keys.public)
    assert code == 0 and f"signer matches the pinned identity {pinned} (from --public-key)" in out


def test_pin_identity_records_the_key_once_keeping_comments_and_the_card_current(tmp_path: Path) -> None:
    manifest, keys = _signed_release(tmp_path, "acme/declared", pin=False)
    manifest.write_text("# the release\n" + manifest.read_text(encoding="utf-8"), encoding="utf-8")
    assert run_cli("render-card", manifest)[0] == 0
    code, out, err = run_cli("sign", manifest, "--key", keys.private, "--pin-identity")
    pinned = pem_fingerprint(keys.public)
    assert code == 0 and f"pinned signing.identity: {pinned}" in out + err, out + err
    text = manifest.read_text(encoding="utf-8")
    assert text.startswith("# the release\n") and f"identity: {pinned}" in text
    assert pinned in (tmp_path / "rel" / "README.md").read_text(encoding="utf-8")
    assert (
        run_cli("verify", manifest, "--signature", "--identity", pinned)[0] == 0
    )  # card and manifest signed
    code, out, err = run_cli("sign", manifest, "--key", keys.private, "--pin-identity")
    assert code == 0 and "pinned" not in out + err and manifest.read_text(encoding="utf-8") == text
    stranger = ec_key_pair(tmp_path / "stranger")
    assert run_cli("sign", manifest, "--key", stranger.private, "--pin-identity")[0] == 2  # never re-pinned


@pytest.mark.parametrize(
    ("signing", "message"),
    [
        ({"method": "key"}, "signing.method key needs public_key"),
        ({"method": "sigstore", "identity": "x"}, "signing.method sigstore needs issuer"),
        (
            {"method": "key", "public_key": "k.pem", "identity": "x"},
            "signing.method key pins a key fingerprint: sha256: and 64 lowercase hex digits",
        ),
        (
            {"method": "key", "public_key": "k.pem", "issuer": "https://x"},
            "issuer belongs to signing.method sigstore, not key",
        ),
        (
            {"method": "sigstore", "identity": {"repository": "acme/r", "workflow": "release.yml"}},
            "workflow",
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


def test_push_refuses_another_keys_signature_before_any_write(
    tmp_path: Path, loopback_hub: LoopbackHub
) -> None:
    repo = unique_repo("swapped")
    manifest, keys = _signed_release(tmp_path, repo)
    assert run_cli("sign", manifest, "--key", keys.private)[0] == 0
    stranger = ec_key_pair(tmp_path / "stranger")
    resign(tmp_path / "rel", stranger.private)  # the same files, signed with another key
    loopback_hub.requests.clear()
    code, out, err = run_cli("push", manifest, "--endpoint", loopback_hub.url)
    assert (
        code == 1
        and "model.sig is not signed by the manifest's signer: signature does not verify (key)" in err
    ), out + err
    assert "Key mismatch" in err and "nothing was pushed" in err
    writes = [r for r in loopback_hub.requests.records if r.method not in ("GET", "HEAD")]
    assert writes == [] and not api_for(loopback_hub).repo_exists(repo)


class Published(NamedTuple):
    repo: str
    commit: str
    keys: KeyPair
    download: Path
    hub: LoopbackHub


@pytest.fixture
def published(tmp_path: Path, loopback_hub: LoopbackHub) -> Published:
    """A pinned, signed release pushed to the loopback Hub and downloaded with the real `hf download`."""
    repo = unique_repo("trusted")
    manifest, keys = _signed_release(tmp_path, repo)
    assert run_cli("sign", manifest, "--key", keys.private)[0] == 0
    code, _, err = run_cli("push", manifest, "--endpoint", loopback_hub.url)
    assert code == 0, err
    commit = api_for(loopback_hub).list_repo_commits(repo)[0].commit_id
    download = tmp_path / "download"
    done = run_program(
        ["hf", "download", repo, "--revision", commit, "--local-dir", str(download), "--quiet"],
        env=hf_env(loopback_hub, tmp_path / "hf-home"),
    )
    assert done.returncode == 0, done.stderr
    return Published(repo, commit, keys, download, loopback_hub)


def _trusting(published: Published, *extra: str) -> tuple[int, dict[str, str]]:
    code, out, err = run_cli(
        "verify", published.download / "hubrelease.yaml", "--signature", "--endpoint", published.hub.url,
        "--trust-manifest", f"{published.repo}@{published.commit}", *extra, "--json",
    )  # fmt: skip
    assert code in (0, 1), err
    return code, _signer(out)


def test_trust_manifest_takes_the_signer_from_the_hub_at_a_commit(published: Published) -> None:
    pinned = pem_fingerprint(published.keys.public)
    code, signer = _trusting(published)
    assert code == 0 and signer == {
        "severity": "info",
        "message": f"signature valid, signer matches the pinned identity {pinned} "
        f"(from the manifest at {published.repo}@{published.commit})",
    }
    code, _, err = run_cli(
        "verify",
        published.download / "hubrelease.yaml",
        "--signature",
        "--trust-manifest",
        f"{published.repo}@main",
    )
    assert code == 2 and "the full 40-hex commit" in err


def test_a_key_swap_is_refused_against_the_trusted_manifest(published: Published, tmp_path: Path) -> None:
    attacker = ec_key_pair(tmp_path / "attacker")
    shutil.copy(attacker.public, published.download / "signing-pub.pem")
    resign(published.download, attacker.private)
    code, signer = _trusting(published)
    pinned, found = pem_fingerprint(published.keys.public), pem_fingerprint(attacker.public)
    assert code == 1 and signer["message"] == (
        f"signer does not match the pinned identity: expected {pinned}, found {found} (signing-pub.pem)"
    )
    code, out, _ = run_cli("verify", published.download / "hubrelease.yaml", "--signature", "--json")
    assert code == 1 and _signer(out) == {
        **signer,
        "severity": "error",
    }  # the folder's own pin refuses it too


def test_a_full_resign_is_refused_against_the_trusted_manifest(published: Published, tmp_path: Path) -> None:
    """Changed weights, `add`, a new key pinned in the manifest, `render-card`, `sign`: a consistent fake."""
    folder = published.download
    manifest = folder / "hubrelease.yaml"
    (folder / "model.safetensors").write_bytes(os.urandom(120_000))
    assert run_cli("add", manifest, folder / "model.safetensors")[0] == 0
    attacker = ec_key_pair(tmp_path / "attacker")
    shutil.copy(attacker.public, folder / "signing-pub.pem")
    assert run_cli("add", manifest, folder / "signing-pub.pem")[0] == 0
    text = manifest.read_text(encoding="utf-8")
    manifest.write_text(
        text.replace(pem_fingerprint(published.keys.public), pem_fingerprint(attacker.public)),
        encoding="utf-8",
    )
    assert run_cli("render-card", manifest)[0] == 0
    code, _, err = run_cli("sign", manifest, "--key", attacker.private)
    assert code == 0, err
    code, out, err = run_cli("verify", manifest, "--signature", "--allow-unpinned-signer")
    assert code == 0, out + err  # a consistent fake: integrity alone cannot tell
    code, out, _ = run_cli("verify", manifest, "--signature", "--json")
    assert code == 1 and "the signer is unverified" in _signer(out)["message"]
    code, signer = _trusting(published)
    assert code == 1 and signer["message"].startswith(
        f"signer does not match the pinned identity: expected {pem_fingerprint(published.keys.public)}"
    )
    code, out, _ = run_cli(
        "verify", manifest, "--signature", "--identity", pem_fingerprint(published.keys.public), "--json"
    )
    assert code == 1 and "signer does not match the pinned identity" in _signer(out)["message"]


def test_remote_verify_checks_the_signer_the_given_manifest_pins(
    published: Published, tmp_path: Path
) -> None:
    manifest = published.download / "hubrelease.yaml"
    pinned = pem_fingerprint(published.keys.public)
    hub = ("--endpoint", published.hub.url, "--signature", "--json")
    code, out, err = run_cli("verify", manifest, "--remote", "--revision", published.commit, *hub)
    assert code == 0 and _signer(out) == {
        "severity": "info",
        "message": f"signature valid, signer matches the pinned identity {pinned} (from the manifest {manifest})",
    }, err
    # The key and the signature swapped on the Hub; the local copy is such a download.
    attacker = ec_key_pair(tmp_path / "attacker")
    shutil.copy(attacker.public, published.download / "signing-pub.pem")
    resign(published.download, attacker.private)
    swap = [
        CommitOperationAdd(name, str(published.download / name))
        for name in ("signing-pub.pem", SIGNATURE_NAME)
    ]
    commit = api_for(published.hub).create_commit(published.repo, swap, commit_message="swap").oid
    code, out, _ = run_cli("verify", manifest, "--remote", "--revision", commit, *hub)
    assert code == 1 and _signer(out)["message"].startswith(
        f"signer does not match the pinned identity: expected {pinned}, found {pem_fingerprint(attacker.public)}"
    )


def test_a_certificate_signer_pins_its_root_and_sign_refuses_another_ca(tmp_path: Path) -> None:
    chain = certificate_chain(tmp_path / "pki")
    manifest = write_release(
        tmp_path / "rel",
        {"model.safetensors": WEIGHTS, "ca.pem": chain.root.read_bytes()},
        extra_manifest={
            "release": {"repo_id": "acme/certified", "license": "mit"},
            "signing": {"method": "certificate", "certificate_chain": ["ca.pem"]},
        },
    )
    by = ("--key", chain.key, "--certificate", chain.leaf, "--chain", chain.intermediate)
    code, out, err = run_cli("sign", manifest, *by, "--pin-identity")
    root = pem_fingerprint(chain.root)
    assert code == 0 and f"pinned signing.identity: {root}" in out + err, out + err
    assert f"identity: {root}" in manifest.read_text(encoding="utf-8")
    code, out, _ = run_cli("verify", manifest, "--signature", "--identity", root)
    assert code == 0 and f"signer matches the pinned identity {root} (from --identity)" in out
    forged = certificate_chain(tmp_path / "forged")
    code, _, err = run_cli(
        "sign", manifest, "--key", forged.key, "--certificate", forged.leaf, "--chain", forged.intermediate
    )
    assert code == 2 and "signing: the manifest's signer does not accept this signature" in err, err


def test_an_unpinned_cards_commands_never_trust_the_downloaded_key(tmp_path: Path) -> None:
    _signed_release(tmp_path, "acme/unpinned", pin=False)
    card = tmp_path / "rel" / "README.md"
    check = _card_commands(card)[-1]
    assert (
        check
        == "model_signing verify key unpinned --signature unpinned/model.sig --public_key signing-pub.pem"
    )
    text = card.read_text(encoding="utf-8")
    assert "**Signer:** not pinned." in text and "get it from the publisher" in text
    assert "`hubrelease verify unpinned/hubrelease.yaml --signature --public-key signing-pub.pem`" in text


def test_trust_manifest_refuses_a_published_manifest_that_pins_no_signer(
    tmp_path: Path, loopback_hub: LoopbackHub
) -> None:
    repo = unique_repo("unpinned")
    manifest, keys = _signed_release(tmp_path, repo, pin=False)
    assert run_cli("sign", manifest, "--key", keys.private)[0] == 0
    assert run_cli("push", manifest, "--endpoint", loopback_hub.url)[0] == 0
    commit = api_for(loopback_hub).list_repo_commits(repo)[0].commit_id
    code, _, err = run_cli(
        "verify",
        manifest,
        "--signature",
        "--endpoint",
        loopback_hub.url,
        "--trust-manifest",
        f"{repo}@{commit}",
    )
    assert code == 2 and err == (
        f"error: the manifest at {repo}@{commit} pins no signer (signing.identity): nothing outside the folder "
        "says who signs\n"
    )
    code, _, err = run_cli(
        "verify",
        manifest,
        "--signature",
        "--endpoint",
        loopback_hub.url,
        "--trust-manifest",
        f"acme/nowhere@{commit}",
    )
    assert code != 0 and err.startswith("error: ") and len(err.splitlines()) == 1, err
