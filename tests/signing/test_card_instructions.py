"""The card's Signature section, run as a reader runs it: a fresh venv, exactly the card's install line,
then each command verbatim against the loopback Hub; and again after the attacks it must refuse.

The reader has only what the card installs (model-signing, pyOpenSSL, huggingface_hub), openssl and
coreutils. Only the endpoint is substituted (``HF_ENDPOINT``: the card cannot know the loopback Hub).
Each attack is published to the Hub as the attacker would publish it, then downloaded afresh with the
card's own ``hf download``; the checks run are those of the card at the commit the reader trusts.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from hubrelease.card.signature import INSTALL
from hubrelease.signing.identity import pem_fingerprint
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import run_cli, run_program
from tests.factories.hub import VENV_BIN, api_for, hf_env, unique_repo
from tests.factories.releases import example_release, write_release
from tests.factories.signing import certificate_chain, ec_key_pair, resign

WEIGHTS = os.urandom(150_000)


@pytest.fixture(scope="session")
def reader_bin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv (``python -m venv``) holding exactly what the card's install line installs: its bin."""
    venv = tmp_path_factory.mktemp("reader") / "venv"
    done = run_program(["python3", "-m", "venv", str(venv)])
    assert done.returncode == 0, done.stderr
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("VIRTUAL_ENV", None)
    done = run_program(["bash", "-c", INSTALL], env=env)  # the card's line, as printed
    assert done.returncode == 0, done.stdout + done.stderr
    yield venv / "bin"


class Reader(NamedTuple):
    commands: list[str]
    """The card's bash block: install, download, check."""
    env: dict[str, str]
    hub: LoopbackHub


def _commands(card: Path) -> list[str]:
    section = card.read_text(encoding="utf-8").split("## Signature\n", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S)
    assert block is not None
    return block[1].strip().splitlines()


def _reader(card: Path, reader_bin: Path, hub: LoopbackHub, home: Path) -> Reader:
    env = hf_env(hub, home)
    env["PATH"] = (
        f"{reader_bin}{os.pathsep}/usr/bin{os.pathsep}/bin"  # the reader's tools only: no hubrelease
    )
    env.pop("VIRTUAL_ENV", None)
    commands = _commands(card)
    assert commands[0] == INSTALL
    return Reader(commands, env, hub)


def _run_card(reader: Reader, cwd: Path) -> list[tuple[str, int, str]]:
    """Every line of the card in a new folder of the reader: (line, exit code, output)."""
    cwd.mkdir(parents=True)
    results = []
    for line in reader.commands:
        done = run_program(["bash", "-c", line], cwd=cwd, env=reader.env)
        results.append((line, done.returncode, done.stdout + done.stderr))
    return results


def _all_pass(results: list[tuple[str, int, str]]) -> None:
    for line, code, out in results:
        assert code == 0, (line, out)
    assert "Verification succeeded" in results[-1][2]


def _check_refuses(results: list[tuple[str, int, str]]) -> None:
    """The download works (it is what the attacker published); the card's check refuses it."""
    assert [code for _, code, _ in results[:2]] == [0, 0], results
    line, code, out = results[-1]
    assert code == 1 and "Verification succeeded" not in out, (line, out)


def _model_signing_alone_is_fooled(reader: Reader, cwd: Path) -> None:
    """The card's check line without its fingerprint comparison accepts the swapped download: the
    comparison is what refuses it."""
    done = run_program(["bash", "-c", reader.commands[-1].split(" && ")[1]], cwd=cwd, env=reader.env)
    assert done.returncode == 0 and "Verification succeeded" in done.stdout, done.stdout + done.stderr


def _publish(hub: LoopbackHub, repo: str, folder: Path) -> None:
    """What an attacker with write access pushes: the changed folder as a new commit on main."""
    api_for(hub).upload_folder(
        repo_id=repo, folder_path=folder, ignore_patterns=[".cache/**", ".hubrelease/**"]
    )


def _release(folder: Path, repo: str, files: dict[str, bytes], signing: dict[str, object]) -> Path:
    manifest = write_release(
        folder,
        {"model.safetensors": WEIGHTS, "config.json": b"{}\n", **files},
        extra_manifest={
            "release": {"repo_id": repo, "license": "mit"},
            "card": {"template": "safetensors_drafter", "summary": "A signed release."},
            "signing": signing,
        },
    )
    assert run_cli("render-card", manifest)[0] == 0
    return manifest


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _ok(*args: str | Path) -> None:
    code, out, err = run_cli(*args)
    assert code == 0, (args, out, err)


def test_the_signed_example_card_runs_as_written_and_refuses_a_key_swap_and_a_full_resign(
    tmp_path: Path, reader_bin: Path, loopback_hub: LoopbackHub
) -> None:
    """The example release, its signer declared and pinned the way a publisher does it: `add` the
    public key, a `signing:` section, `render-card`, then `sign --pin-identity` (which renders again)."""
    repo = unique_repo("card-key")
    manifest = example_release(tmp_path, repo)
    _ok("push", tmp_path / "example-target" / "hubrelease.yaml", "--endpoint", loopback_hub.url)
    keys = ec_key_pair(tmp_path / "keys")
    pinned = pem_fingerprint(keys.public)
    shutil.copy(keys.public, manifest.parent / "signing-pub.pem")
    _ok("add", manifest, manifest.parent / "signing-pub.pem")
    with manifest.open("a", encoding="utf-8") as text:
        text.write("signing:\n  method: key\n  public_key: signing-pub.pem\n")
    _ok("render-card", manifest)
    _ok("sign", manifest, "--key", keys.private, "--pin-identity")
    assert f"identity: {pinned}" in manifest.read_text(encoding="utf-8")
    _ok("push", manifest, "--endpoint", loopback_hub.url)
    card = manifest.parent / "README.md"
    reader = _reader(card, reader_bin, loopback_hub, tmp_path / "hf-home")
    first = _run_card(reader, tmp_path / "reader-0")
    _all_pass(first)
    name = repo.split("/")[1]
    download = tmp_path / "reader-0" / name
    assert f"`hubrelease verify {name}/hubrelease.yaml --signature --identity {pinned}`" in card.read_text(
        encoding="utf-8"
    )

    # Key swap: another public key and a signature made with it over the same files.
    attacked = tmp_path / "attack-1"
    shutil.copytree(download, attacked)
    attacker = ec_key_pair(tmp_path / "attacker")
    shutil.copy(attacker.public, attacked / "signing-pub.pem")
    resign(attacked, attacker.private)
    _publish(loopback_hub, repo, attacked)
    swapped = _run_card(reader, tmp_path / "reader-1")
    _check_refuses(swapped)
    _model_signing_alone_is_fooled(reader, tmp_path / "reader-1")
    code, out, _ = run_cli(
        "verify", tmp_path / "reader-1" / name / "hubrelease.yaml", "--signature", "--identity", pinned
    )
    assert code == 1 and "signer does not match the pinned identity" in out

    # Full re-sign: changed weights, `add`, the evaluation's drafter digest and its pin rewritten to
    # match, a new key pinned in the manifest, `render-card`, `sign`: a fake consistent in itself.
    attacked = tmp_path / "attack-2"
    shutil.copytree(download, attacked)
    fake = attacked / "hubrelease.yaml"
    weights, evaluation = attacked / "model.safetensors", attacked / "evaluation.json"
    before = (_sha256(weights), _sha256(evaluation))
    weights.write_bytes(weights.read_bytes()[:-4] + b"\x00\x00\x00\x00")  # still a safetensors file
    evaluation.write_text(
        evaluation.read_text(encoding="utf-8").replace(before[0], _sha256(weights)), encoding="utf-8"
    )
    other = ec_key_pair(tmp_path / "other")
    shutil.copy(other.public, attacked / "signing-pub.pem")
    _ok("add", fake, weights, attacked / "signing-pub.pem")
    rewritten = fake.read_text(encoding="utf-8").replace(pinned, pem_fingerprint(other.public))
    fake.write_text(rewritten.replace(before[1], _sha256(evaluation)), encoding="utf-8")
    _ok("render-card", fake)
    _ok("sign", fake, "--key", other.private)
    _publish(loopback_hub, repo, attacked)
    resigned = _run_card(reader, tmp_path / "reader-2")
    _check_refuses(resigned)
    folder = tmp_path / "reader-2" / name
    assert _commands(folder / "README.md")[-1] != reader.commands[-1]  # the fake card pins the fake key
    code, out, _ = run_cli("verify", folder / "hubrelease.yaml", "--signature", "--identity", pinned)
    assert code == 1 and "signer does not match the pinned identity" in out


def test_certificate_signed_card_runs_as_written_and_refuses_a_ca_swap(
    tmp_path: Path, reader_bin: Path, loopback_hub: LoopbackHub
) -> None:
    repo = unique_repo("card-ca")
    chain = certificate_chain(tmp_path / "pki")
    root = pem_fingerprint(chain.root)
    manifest = _release(
        tmp_path / "rel",
        repo,
        {"ca.pem": chain.root.read_bytes()},
        {"method": "certificate", "certificate_chain": ["ca.pem"], "identity": root},
    )
    _ok("sign", manifest, "--key", chain.key, "--certificate", chain.leaf, "--chain", chain.intermediate)
    _ok("push", manifest, "--endpoint", loopback_hub.url)
    reader = _reader(tmp_path / "rel" / "README.md", reader_bin, loopback_hub, tmp_path / "hf-home")
    assert reader.commands[-1].startswith("openssl x509 -in ")
    _all_pass(_run_card(reader, tmp_path / "reader-0"))
    download = tmp_path / "reader-0" / repo.split("/")[1]

    # ca.pem swap: the attacker's own CA in the download, and a signature by a leaf it issued.
    attacked = tmp_path / "attack"
    shutil.copytree(download, attacked)
    forged = certificate_chain(tmp_path / "forged")
    shutil.copy(forged.root, attacked / "ca.pem")
    resign(attacked, forged.key, forged.leaf, (forged.intermediate,))
    _publish(loopback_hub, repo, attacked)
    results = _run_card(reader, tmp_path / "reader-1")
    _check_refuses(results)
    folder = tmp_path / "reader-1" / repo.split("/")[1]
    _model_signing_alone_is_fooled(reader, tmp_path / "reader-1")
    code, out, _ = run_cli("verify", folder / "hubrelease.yaml", "--signature", "--identity", root)
    found = pem_fingerprint(forged.root)
    assert code == 1 and f"expected {root}, found {found} (ca.pem)" in out
    assert shutil.which("hubrelease", path=reader.env["PATH"]) is None and (VENV_BIN / "hubrelease").exists()
