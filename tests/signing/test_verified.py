"""Signatures verified once: a warm `sign` or `verify --signature` recalls the statement (and the
folder's model-signing view) instead of importing model-signing, and only on this machine, for
these bytes and this key."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

import hubrelease.card.render as render_module
import hubrelease.manifest.load as load_module
from hubrelease.fsutil import STATE_DIR
from hubrelease.release_files import SIGNATURE_NAME
from hubrelease.signing import verified
from hubrelease.signing.identity import pem_fingerprint
from hubrelease.signing.statement import read_unverified
from tests.factories.cli import run_cli, run_program
from tests.factories.releases import example_release, write_release
from tests.factories.signing import KeyPair, ec_key_pair

HEAVY = (
    "model_signing",
    "sigstore",
    "sigstore_models",
    "OpenSSL",
    "google.protobuf",
    "huggingface_hub",
    "jinja2",
    "pydantic",
)


def _example(work: Path) -> Path:
    """The example release without its build inputs (model_signing would hash checkpoint/)."""
    manifest = example_release(work, "acme/warm")
    shutil.rmtree(manifest.parent / "checkpoint")
    assert run_cli("render-card", manifest, "--force")[0] == 0  # its card names the new repo
    return manifest


def _signed(work: Path) -> tuple[Path, KeyPair]:
    manifest = _example(work)
    keys = ec_key_pair(work / "keys")
    assert run_cli("verify", manifest)[0] == 0
    code, _, err = run_cli("sign", manifest, "--key", keys.private)
    assert code == 0, err
    return manifest, keys


def _verify(manifest: Path, public: Path) -> tuple[int, list[str]]:
    code, out, err = run_cli("verify", manifest, "--signature", "--public-key", public, "--json")
    assert code in (0, 1), err
    return code, [f["message"] for f in json.loads(out)["findings"] if f["severity"] == "error"]


def test_a_warm_sign_and_verify_signature_import_no_model_signing(tmp_path: Path) -> None:
    manifest, keys = _signed(tmp_path)
    assert _verify(manifest, keys.public) == (0, [])  # fills the folder view's entry
    probe = (
        "import sys\n"
        "from hubrelease.cli.app import app\n"
        "codes = []\n"
        f"for args in ({['sign', str(manifest), '--key', str(keys.private)]!r}, "
        f"{['verify', str(manifest), '--signature', '--public-key', str(keys.public)]!r}):\n"
        "    try:\n        app(args)\n    except SystemExit as exit:\n        codes.append(exit.code)\n"
        f"print(codes, sorted({{m.split('.')[0] for m in sys.modules if m.startswith({HEAVY!r})}}))\n"
    )
    done = run_program([sys.executable, "-c", probe], check=True)
    assert "unchanged: " in done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[0, 0] []"


def test_a_warm_sign_loads_no_manifest_and_renders_no_card(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan verify stored holds the card's digest, and verify recalls its lint and provenance
    findings: sign loads and re-renders only when their inputs changed."""
    manifest, keys = _signed(tmp_path)
    calls: dict[str, int] = {"load": 0, "render": 0}

    def counted(name: str, real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        return call

    monkeypatch.setattr(load_module, "_load", counted("load", load_module._load))
    monkeypatch.setattr(render_module, "render", counted("render", render_module.render))
    code, _, err = run_cli("sign", manifest, "--key", keys.private)
    assert code == 0 and "unchanged: " in err, err
    assert calls == {"load": 0, "render": 0}
    manifest.write_text(manifest.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    assert run_cli("render-card", manifest)[0] == 0
    calls.update(render=0)
    assert run_cli("sign", manifest, "--key", keys.private)[0] == 0
    assert calls["render"] == 1  # an edited manifest: the card is checked against a new render
    assert calls["load"] >= 1


def test_a_signature_cache_that_came_with_the_folder_decides_nothing(tmp_path: Path) -> None:
    """An entry is bound to model.sig's inode and ctime: a copied `.hubrelease/` never matches."""
    manifest, _ = _signed(tmp_path / "a")
    other = ec_key_pair(tmp_path / "keys", "other")
    signature = manifest.parent / SIGNATURE_NAME
    seen = verified.seen(signature)
    assert seen is not None
    # A forged entry: "model.sig verified under the other key", with this file's own stat.
    verified._store(signature, seen, pem_fingerprint(other.public), read_unverified(signature))
    assert _verify(manifest, other.public) == (0, [])  # trusted where this machine wrote it
    copy = shutil.copytree(manifest.parent, tmp_path / "b" / "example")
    shutil.copytree(tmp_path / "a" / "example-target", tmp_path / "b" / "example-target")
    code, errors = _verify(copy / manifest.name, other.public)
    assert code == 1 and any("signature does not verify" in e for e in errors), errors


def test_a_changed_signature_is_verified_again(tmp_path: Path) -> None:
    manifest, keys = _signed(tmp_path)
    assert _verify(manifest, keys.public) == (0, [])
    signature = manifest.parent / SIGNATURE_NAME
    bundle = json.loads(signature.read_text())
    envelope = bundle["dsseEnvelope"]["signatures"][0]
    raw = bytearray(envelope["sig"].encode())
    raw[10] = ord("A") if raw[10] != ord("A") else ord("B")
    envelope["sig"] = raw.decode()
    stat = signature.stat()
    signature.write_text(json.dumps(bundle))
    os.utime(signature, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    code, errors = _verify(manifest, keys.public)
    assert code == 1 and any("signature does not verify" in e for e in errors), errors


def test_a_file_added_after_a_warm_verify_signature_is_still_an_unsigned_one(tmp_path: Path) -> None:
    manifest, keys = _signed(tmp_path)
    assert _verify(manifest, keys.public) == (0, [])
    assert (manifest.parent / STATE_DIR / verified.CACHE_NAME).is_file()
    (manifest.parent / "extra.bin").write_bytes(b"x")
    code, errors = _verify(manifest, keys.public)
    assert code == 1
    assert (
        "not published, but in the folder and not signed: `model_signing verify` refuses the folder" in errors
    )


def test_an_unchanged_release_is_signed_without_validating_its_manifest(tmp_path: Path) -> None:
    """No lint, no evaluations: the plan a sign marked holds every published digest."""
    manifest = write_release(tmp_path / "rel", {"model.safetensors": b"w" * 1000, "config.json": b"{}\n"})
    keys = ec_key_pair(tmp_path / "keys")
    assert run_cli("verify", manifest)[0] == 0
    assert run_cli("sign", manifest, "--key", keys.private)[0] == 0
    probe = (
        "import sys\n"
        "from hubrelease.cli.app import app\n"
        f"try:\n    app({['sign', str(manifest), '--key', str(keys.private)]!r})\n"
        "except SystemExit as exit:\n    code = exit.code\n"
        f"print(code, sorted({{m.split('.')[0] for m in sys.modules if m.startswith({(*HEAVY, 'yaml', 'ruamel')!r})}}))\n"
    )
    done = run_program([sys.executable, "-c", probe], check=True)
    assert "unchanged: " in done.stderr
    assert done.stdout.strip().splitlines()[-1] == "0 []"
    (tmp_path / "rel" / "config.json").write_bytes(b"[]\n")  # drift: the full check says what is wrong
    code, _, err = run_cli("sign", manifest, "--key", keys.private)
    assert code == 1 and "config.json" in err
    (tmp_path / "rel" / "config.json").write_bytes(b"{}\n")
    other = ec_key_pair(tmp_path / "keys", "other")
    code, out, err = run_cli("sign", manifest, "--key", other.private, "--json")
    assert code == 0 and json.loads(out)["written"] is True, err
