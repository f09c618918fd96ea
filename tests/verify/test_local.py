"""Verifying a release folder (``hubrelease.verify.local``): each kind of drift, found and named.

Through the CLI's --json report, as users and CI read it; the CLI's own behaviour (exit codes for bad
input, output formats) is in tests/cli/test_verify.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hubrelease.fsutil import STATE_DIR
from hubrelease.hashing.statcache import CACHE_NAME
from tests.factories.cli import findings, run_cli, verify_json
from tests.factories.releases import write_release


def test_missing_file(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    (tmp_path / "config.json").unlink()
    code, report = verify_json(manifest)
    assert code == 1
    assert findings(report) == [("missing", "config.json", "file is missing")]


def test_truncated_file_is_caught_by_size_without_hashing(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    with open(tmp_path / "model.safetensors", "r+b") as handle:
        handle.truncate(100)
    code, report = verify_json(manifest)
    assert code == 1
    assert findings(report) == [
        ("size_mismatch", "model.safetensors", "size mismatch: expected 4103 bytes, got 100")
    ]


def _corrupt_same_size(path: Path, keep_mtime: bool) -> None:
    before = os.stat(path)
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF
    path.write_bytes(bytes(data))
    if keep_mtime:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_same_size_corruption_caught_with_no_cache(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    assert verify_json(manifest)[0] == 0
    _corrupt_same_size(tmp_path / "model.safetensors", keep_mtime=True)
    code, report = verify_json(manifest, "--no-cache")
    assert code == 1
    assert [(k, p) for k, p, _ in findings(report)] == [("digest_mismatch", "model.safetensors")]


@pytest.mark.parametrize("keep_mtime", [False, True], ids=["mtime-changed", "mtime-restored"])
def test_same_size_corruption_caught_with_the_cache(tmp_path: Path, keep_mtime: bool) -> None:
    manifest = write_release(tmp_path)
    old = 10**9
    os.utime(tmp_path / "model.safetensors", ns=(old, old))
    assert verify_json(manifest)[0] == 0
    _corrupt_same_size(tmp_path / "model.safetensors", keep_mtime=keep_mtime)
    code, report = verify_json(manifest)
    assert code == 1
    kinds = findings(report)
    assert kinds[0][0] == "digest_mismatch"
    assert kinds[0][2].startswith("sha256 mismatch: expected ")


def test_unlisted_file_is_drift(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    (tmp_path / "sub" / "stray.bin").write_bytes(b"?")
    code, report = verify_json(manifest)
    assert code == 1
    assert findings(report) == [
        ("unlisted", "sub/stray.bin", "file is in the release folder but not in the manifest")
    ]


def test_ignore_patterns_silence_unlisted_files(tmp_path: Path) -> None:
    manifest = write_release(tmp_path, extra_manifest={"ignore": ["scratch/*"]})
    (tmp_path / "scratch").mkdir()
    (tmp_path / "scratch" / "a").write_bytes(b"a")
    assert verify_json(manifest)[0] == 0


def test_symlink_refused_unless_followed(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    real = tmp_path / "sub" / "real.json"
    os.replace(tmp_path / "config.json", real)
    os.symlink(real, tmp_path / "config.json")
    code, report = verify_json(manifest)
    assert code == 1
    assert (
        "symlink",
        "config.json",
        "is a symlink; refused (pass --follow-symlinks to hash its target)",
    ) in findings(report)
    code, report = verify_json(manifest, "--follow-symlinks")
    assert [k for k, _, _ in findings(report)] == ["unlisted"]  # only real.json, which the manifest omits


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = write_release(tmp_path)
    target = tmp_path / "config.json"
    target.chmod(0)
    if os.geteuid() == 0:  # root reads mode-000 files: make the open fail the way it would for a user
        real_open = open

        def deny(file: object, *args: object, **kwargs: object) -> object:
            if str(file) == str(target):
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

        monkeypatch.setattr("builtins.open", deny)
    code, report = verify_json(manifest, "--no-cache")
    target.chmod(0o644)
    assert code == 1
    assert findings(report) == [("unreadable", "config.json", "cannot read: Permission denied")]


def test_corrupt_cache_warns_and_still_verifies(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    (tmp_path / STATE_DIR).mkdir()
    (tmp_path / STATE_DIR / CACHE_NAME).write_bytes(b"garbage" * 50)
    code, report = verify_json(manifest)
    assert code == 0
    assert [(k, f) for k, f, _ in findings(report)] == [("cache_rebuilt", STATE_DIR)]
    assert report["findings"][0]["severity"] == "warning"


def test_unpinned_artifact_is_reported_with_its_actual_digest(tmp_path: Path) -> None:
    manifest = write_release(tmp_path, {"a.bin": b"a"})
    text = manifest.read_text()
    manifest.write_text("\n".join(line for line in text.splitlines() if "sha256" not in line) + "\n")
    code, report = verify_json(manifest)
    assert code == 1
    assert report["findings"][0]["kind"] == "unpinned"
    assert (
        report["findings"][0]["actual"] == "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
    )


def test_dir_option_verifies_another_folder(tmp_path: Path) -> None:
    manifest = write_release(tmp_path / "a")
    other = tmp_path / "b"
    write_release(other)
    (other / "hubrelease.yaml").unlink()
    code, report = verify_json(manifest, "--dir", str(other))
    assert code == 0
    assert report["root"] == str(other.resolve())


def test_checksums_round_trip_through_verify(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    code, _, _ = run_cli("checksums", str(manifest), "--out", str(tmp_path / "SHA256SUMS"))
    assert code == 0
    code, report = verify_json(tmp_path / "SHA256SUMS")
    assert code == 0
    assert report["summary"]["files"] == 4
    _corrupt_same_size(tmp_path / "config.json", keep_mtime=False)
    code, report = verify_json(tmp_path / "SHA256SUMS", "--no-cache")
    assert code == 1
    assert [(k, p) for k, p, _ in findings(report)] == [("digest_mismatch", "config.json")]
