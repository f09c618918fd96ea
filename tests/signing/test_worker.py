"""A large release is signed in the signing worker: the same signature, the same refusals, and
model-signing never imported by the command's own process."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import hubrelease.signing.sign as sign_module
import hubrelease.signing.worker as worker_module
from hubrelease.release_files import SIGNATURE_NAME
from hubrelease.signing.identity import pem_fingerprint
from tests.factories.cli import run_cli, run_program
from tests.factories.releases import write_release
from tests.factories.signing import certificate_chain, ec_key_pair

WEIGHTS = os.urandom(100_000)


@pytest.fixture
def workers(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every release counts as large; each worker started is counted."""
    started: list[int] = []
    start = worker_module.SigningWorker.__init__

    def counted(self: worker_module.SigningWorker) -> None:
        start(self)
        started.append(self._process.pid)

    monkeypatch.setattr(sign_module, "WORKER_BYTES", 0)
    monkeypatch.setattr(worker_module.SigningWorker, "__init__", counted)
    return started


def _release(folder: Path, signing: dict[str, object] | None = None, **files: bytes) -> Path:
    extra: dict[str, object] = {"release": {"repo_id": "acme/worker", "license": "mit"}}
    if signing is not None:
        extra["signing"] = signing
    return write_release(folder, {"model.safetensors": WEIGHTS, **files}, extra_manifest=extra)


def test_a_key_signature_made_in_the_worker_verifies(tmp_path: Path, workers: list[int]) -> None:
    manifest = _release(tmp_path / "rel")
    keys = ec_key_pair(tmp_path / "keys")
    code, _, err = run_cli("sign", manifest, "--key", keys.private)
    assert code == 0 and len(workers) == 1, err
    code, out, err = run_cli("verify", manifest, "--signature", "--public-key", keys.public)
    assert code == 0, out + err
    (tmp_path / "rel" / "model.safetensors").write_bytes(WEIGHTS[::-1])
    assert run_cli("verify", manifest, "--signature", "--public-key", keys.public)[0] == 1


def test_a_small_release_is_signed_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below ``WORKER_BYTES`` a second interpreter would cost more than it overlaps."""

    def refuse(self: worker_module.SigningWorker) -> None:
        raise AssertionError("a worker was started for a small release")

    monkeypatch.setattr(worker_module.SigningWorker, "__init__", refuse)
    manifest = _release(tmp_path / "rel")
    code, _, err = run_cli("sign", manifest, "--key", ec_key_pair(tmp_path / "keys").private)
    assert code == 0, err


def test_a_certificate_signature_made_in_the_worker_is_held_to_the_declared_root(
    tmp_path: Path, workers: list[int]
) -> None:
    chain = certificate_chain(tmp_path / "pki")
    manifest = _release(
        tmp_path / "rel",
        {"method": "certificate", "certificate_chain": ["ca.pem"]},
        **{"ca.pem": chain.root.read_bytes()},
    )
    by = ("--key", chain.key, "--certificate", chain.leaf, "--chain", chain.intermediate)
    code, _, err = run_cli("sign", manifest, *by)
    assert code == 0, err
    root = pem_fingerprint(chain.root)
    code, out, _ = run_cli("verify", manifest, "--signature", "--identity", root)
    assert code == 0 and f"signer matches the pinned identity {root}" in out
    forged = certificate_chain(tmp_path / "forged")
    before = (tmp_path / "rel" / SIGNATURE_NAME).read_bytes()
    code, _, err = run_cli(
        "sign", manifest, "--key", forged.key, "--certificate", forged.leaf, "--chain", forged.intermediate
    )
    assert code == 2 and err.startswith(
        f"error: {manifest}: signing: the manifest's signer does not accept"
    ), err
    assert (tmp_path / "rel" / SIGNATURE_NAME).read_bytes() == before
    assert len(workers) == 2


def test_unusable_key_material_is_the_same_one_line_from_the_worker(
    tmp_path: Path, workers: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = _release(tmp_path / "rel")
    garbage = tmp_path / "key.pem"
    garbage.write_text("not a key\n")
    code, _, err = run_cli("sign", manifest, "--key", garbage)
    assert code == 2 and err.startswith(f"error: {garbage}: cannot sign with it:"), err
    assert err.count("\n") == 1 and "Traceback" not in err
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    locked = tmp_path / "locked.pem"
    locked.write_bytes(
        ec.generate_private_key(ec.SECP256R1()).private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        )
    )
    code, _, err = run_cli("sign", manifest, "--key", locked)
    assert code == 2 and "HUBRELEASE_SIGNING_KEY_PASSWORD" in err, err
    monkeypatch.setenv(
        "HUBRELEASE_SIGNING_KEY_PASSWORD", "secret"
    )  # the worker reads it from its environment
    assert run_cli("sign", manifest, "--key", locked)[0] == 0
    assert len(workers) == 3


def test_the_command_itself_never_imports_model_signing_when_the_worker_signs(tmp_path: Path) -> None:
    manifest = _release(tmp_path / "rel")
    keys = ec_key_pair(tmp_path / "keys")
    probe = (
        "import sys\n"
        "import hubrelease.signing.sign as sign\n"
        "sign.WORKER_BYTES = 0\n"
        "from hubrelease.cli.app import app\n"
        f"try:\n    app({['sign', str(manifest), '--key', str(keys.private)]!r})\n"
        "except SystemExit as exit:\n    code = exit.code\n"
        "print(code, sorted(m for m in sys.modules if m.split('.')[0] in ('model_signing', 'sigstore')))\n"
    )
    done = run_program([sys.executable, "-c", probe], check=True)
    assert done.stdout.strip().splitlines()[-1] == "0 []"
    assert run_cli("verify", manifest, "--signature", "--public-key", keys.public)[0] == 0


def test_a_worker_that_dies_is_an_internal_error_and_writes_nothing(
    tmp_path: Path, workers: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = _release(tmp_path / "rel")
    monkeypatch.setattr(sys, "executable", "/bin/false")
    code, _, err = run_cli("sign", manifest, "--key", ec_key_pair(tmp_path / "keys").private)
    assert code == 3 and "the signing process ended with exit 1" in err, err
    assert not (tmp_path / "rel" / SIGNATURE_NAME).exists()
