"""The stat cache never trusts a file against another filesystem's clock.

The layout is the issue's: a release folder on a fine-grained filesystem with ``weights/`` on a
mount whose timestamps have 1-second granularity (NFS, SMB, FAT, FUSE bucket mounts), simulated by
``FakeClockFS`` so the "same second" is exact. scripts/statcache_mixed_fs.py runs the same trials
on a real loop-mounted ext4 image with 1-second timestamps (root only: not part of this suite).
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path

import pytest

from hubrelease.findings import FileCheck
from hubrelease.fsutil import STATE_DIR
from hubrelease.hashing import StatCache, StatKey
from hubrelease.hashing.statcache import CACHE_NAME
from hubrelease.manifest import load_manifest
from hubrelease.verify import VerifyOptions, verify_manifest
from tests.factories.clock_fs import SECOND_NS, FakeClockFS
from tests.factories.releases import write_release

MS = 1_000_000
TRIALS = 12


def _verify(manifest: Path, use_cache: bool = True) -> dict[str, FileCheck]:
    report = verify_manifest(load_manifest(manifest), manifest, options=VerifyOptions(use_cache=use_cache))
    return {check.path: check for check in report.files}


def _trials(fs: FakeClockFS, root: Path, folder: str) -> tuple[int, int, int]:
    """The issue's experiment: (stale cached OKs, same-second rewrites, cache hits a second later).

    Each trial writes a new 4 KiB artifact, verifies (hashing and caching it) 50 ms later, rewrites
    it with other bytes of the same size 50 ms after that and verifies again; the trials start at
    a whole second, so the clock ticks over in the middle of the run.
    """
    files: dict[str, bytes] = {}
    stale = same_second = 0
    for trial in range(TRIALS):
        name = f"{folder}w{trial:02d}.bin"
        first, second = bytes([trial]) * 4096, bytes([trial + 100]) * 4096
        files[name] = first
        manifest = write_release(root, files)
        fs.write(root / name, first)
        fs.advance(50 * MS)
        assert _verify(manifest)[name].status == "ok"
        before = StatKey.of(os.stat(root / name))
        fs.advance(50 * MS)
        fs.write(root / name, second)
        same_second += StatKey.of(os.stat(root / name)) == before  # the key cannot tell the bytes apart
        fs.advance(50 * MS)
        check = _verify(manifest)[name]
        stale += check.status == "ok"
        assert _verify(manifest, use_cache=False)[name].status == "digest_mismatch"
        files[name] = second
    manifest = write_release(root, files)
    fs.advance(SECOND_NS)
    _verify(manifest)
    later = sum(check.source == "cache" for check in _verify(manifest).values())
    return stale, same_second, later


@pytest.mark.parametrize(
    ("layout", "same_second"),
    [("weights/ on a 1 s mount", 11), ("whole release on a 1 s filesystem", 11), ("whole release fine", 0)],
)
def test_same_size_rewrite_in_the_same_second_is_never_a_cached_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str, same_second: int
) -> None:
    """0 stale OKs in every layout; before per-device stamps the first layout gave one per same-second rewrite."""
    fs = FakeClockFS(monkeypatch, granularity_ns=SECOND_NS if layout.startswith("whole release on") else 1)
    folder = ""
    if layout.startswith("weights/"):
        (tmp_path / "weights").mkdir()
        fs.mount(tmp_path / "weights")
        folder = "weights/"
    stale, rewrites, later = _trials(fs, tmp_path, folder)
    assert rewrites == same_second  # the clock ticked over mid-run: both kinds of trial happened
    assert stale == 0
    assert later == TRIALS  # the cache still vouches for every file once its second has passed


def test_each_filesystem_is_stamped_on_its_own_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fine filesystem's stamp is later than a coarse mtime of the same second; the mount's is not."""
    fs = FakeClockFS(monkeypatch, granularity_ns=1)
    (tmp_path / "weights").mkdir()
    coarse_dev = fs.mount(tmp_path / "weights")
    fs.advance(400 * MS)
    fine_file, coarse_file = tmp_path / "config.json", tmp_path / "weights" / "a.bin"
    fs.write(fine_file, b"{}")
    fs.write(coarse_file, b"weights")
    fs.advance(100 * MS)
    cache = StatCache(tmp_path)
    keys = {path: StatKey.of(os.stat(path)) for path in (fine_file, coarse_file)}
    stamps = cache.stamps((key, path) for path, key in keys.items())
    assert set(stamps) == {keys[fine_file].dev, coarse_dev}
    assert stamps[keys[fine_file].dev] == fs.now_ns > keys[coarse_file].mtime_ns  # would trust the rewrite
    assert stamps[coarse_dev] == keys[coarse_file].mtime_ns  # same second: racy, so not trusted
    cache.store(
        [("config.json", keys[fine_file], "f" * 64), ("weights/a.bin", keys[coarse_file], "c" * 64)], stamps
    )
    assert cache.lookup("config.json", keys[fine_file]) == "f" * 64
    assert cache.lookup("weights/a.bin", keys[coarse_file]) is None
    assert not [p for p in (tmp_path / "weights").iterdir() if p.name != "a.bin"]  # its stamp file is gone
    cache.close()


@pytest.mark.parametrize("why", ["read-only mount", "file bind-mounted into a fine folder"])
def test_a_filesystem_that_cannot_be_stamped_is_hashed_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, why: str
) -> None:
    fs = FakeClockFS(monkeypatch, granularity_ns=1)
    manifest = write_release(tmp_path, {"config.json": b"{}", "weights/a.bin": b"weights"})
    for name in ("config.json", "weights/a.bin"):
        fs.write(tmp_path / name, (tmp_path / name).read_bytes())
    if why == "read-only mount":
        fs.mount(tmp_path / "weights")
        real_mkstemp = tempfile.mkstemp

        def read_only(*args: object, dir: str, **kwargs: object) -> tuple[int, str]:
            if Path(dir) == tmp_path / "weights":
                raise OSError(30, "Read-only file system")
            return real_mkstemp(*args, dir=dir, **kwargs)  # type: ignore[call-overload, no-any-return]

        monkeypatch.setattr(tempfile, "mkstemp", read_only)
    else:
        fs.mount(tmp_path / "weights" / "a.bin")  # its folder, where a stamp would go, is the fine one
    for _ in range(3):
        fs.advance(SECOND_NS)
        checks = _verify(manifest)
    assert checks["weights/a.bin"].status == "ok" and checks["weights/a.bin"].source == "hashed"
    assert checks["config.json"].source == "cache"


def test_a_cache_from_the_single_stamp_version_is_discarded(tmp_path: Path) -> None:
    """Version 1 stamped every device on .hubrelease/'s clock: its entries may be stale, so none is read."""
    manifest = write_release(tmp_path, {"a.bin": b"abc"})
    cache = StatCache(tmp_path)
    cache.close()
    with sqlite3.connect(tmp_path / STATE_DIR / CACHE_NAME) as db:
        db.execute("UPDATE meta SET value = 'hubrelease-statcache-1' WHERE key = 'format'")
    db.close()
    report = verify_manifest(load_manifest(manifest), manifest)
    rebuilt = [f for f in report.findings if f.kind == "cache_rebuilt"]
    assert len(rebuilt) == 1 and "another hubrelease version (hubrelease-statcache-1)" in rebuilt[0].message
