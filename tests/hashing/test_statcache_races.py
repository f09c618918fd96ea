"""The stat cache never answers a digest for bytes it did not hash, on a coarse-timestamp filesystem.

``FakeClockFS`` (tests/factories/clock_fs.py) stands in for a filesystem whose timestamps tick
slowly (ext4/xfs before Linux 6.13 are coarse; FAT has 2 s): every write made through it, and every
file the code under test writes itself (the cache's stamp file), gets the current tick as mtime and
ctime, and only the test advances the tick. That makes "a same-size rewrite in the same tick as the
previous write" and "the tick moved on while another file was still hashing" exact instead of
timing-dependent.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hubrelease.hashing.pool as pool_module
from hubrelease.hashing import HashJob, StatCache, StatKey, hash_files, sha256_file
from hubrelease.manifest import load_manifest
from hubrelease.verify import VerifyOptions, verify_manifest
from tests.factories.clock_fs import FakeClockFS
from tests.factories.releases import write_release
from tests.factories.waiting import CEILING_S


def _job(path: Path) -> HashJob:
    return HashJob(path.name, path, StatKey.of(os.stat(path)))


def test_same_size_rewrite_in_the_same_tick_while_another_file_hashes_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The issue-13 race: the old code stamped after all hashing and trusted the stale digest."""
    fs = FakeClockFS(monkeypatch)
    # big.bin is large enough to be its own task (small files are batched onto one thread).
    manifest = write_release(tmp_path, {"big.bin": b"B" * pool_module.BATCH_BYTES, "small.json": b'{"v": 1}'})
    for name in ("big.bin", "small.json"):
        fs.write(tmp_path / name, (tmp_path / name).read_bytes())
    release = load_manifest(manifest)
    small_hashed = threading.Event()
    real_sha = sha256_file

    def racing_sha(path: str | Path, on_bytes: Callable[[int], None] | None = None, **kwargs: Any) -> str:
        if Path(path).name == "big.bin":
            assert small_hashed.wait(CEILING_S)
            fs.advance()  # the clock moves on while the big file is still hashing
            return real_sha(path, on_bytes, **kwargs)
        digest = real_sha(path, on_bytes, **kwargs)
        fs.write(Path(path), b'{"v": 2}')  # same size, same tick as its previous write
        small_hashed.set()
        return digest

    monkeypatch.setattr(pool_module, "sha256_file", racing_sha)
    verify_manifest(release, manifest, options=VerifyOptions(jobs=2))
    monkeypatch.setattr(pool_module, "sha256_file", real_sha)
    fs.advance()
    report = verify_manifest(release, manifest)
    by_path = {check.path: check for check in report.files}
    assert by_path["small.json"].status == "digest_mismatch"
    assert by_path["small.json"].source == "hashed"
    assert by_path["big.bin"].status == "ok"


def test_file_written_in_the_stamps_tick_is_rehashed_until_the_tick_has_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = FakeClockFS(monkeypatch)
    target = tmp_path / "a.bin"
    fs.write(target, b"one")
    cache = StatCache(tmp_path)
    assert hash_files([_job(target)], cache=cache)["a.bin"].from_cache is False
    assert hash_files([_job(target)], cache=cache)["a.bin"].from_cache is False  # still the same tick
    fs.advance()
    hash_files([_job(target)], cache=cache)  # stamped a tick after the write: a trustworthy entry
    assert hash_files([_job(target)], cache=cache)["a.bin"].from_cache is True
    cache.close()


# One step of a run: write file i (same size) now; advance the clock; hash all three files, where
# "hash_write" rewrites file i just after it was read and "hash_write_tick" also advances the clock
# before the next file is read (the tick passing while other files still hash).
_Step = tuple[str, int, int]
_ACTIONS = ["write", "tick", "hash", "hash_write", "hash_write_tick"]
_steps = st.lists(
    st.tuples(st.sampled_from(_ACTIONS), st.integers(0, 2), st.integers(0, 255)), min_size=1, max_size=12
)


def _hash_all(
    fs: FakeClockFS, paths: list[Path], cache: StatCache, rewrite: tuple[Path, bytes, bool] | None
) -> None:
    """Hash ``paths`` one by one; ``rewrite`` = (file, new bytes, advance the clock) just after it is read."""
    real_sha = sha256_file

    def sha(path: str | Path, on_bytes: Callable[[int], None] | None = None, **kwargs: Any) -> str:
        digest = real_sha(path, on_bytes, **kwargs)
        if rewrite is not None and Path(path) == rewrite[0]:
            fs.write(rewrite[0], rewrite[1])
            if rewrite[2]:
                fs.advance()
        return digest

    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(pool_module, "sha256_file", sha)
        hash_files([_job(p) for p in paths], threads=1, cache=cache)


@pytest.mark.parametrize("layout", ["one coarse filesystem", "coarse mount in a fine release folder"])
@settings(max_examples=60, deadline=None)
@given(steps=_steps)
def test_cache_answers_only_the_current_bytes_under_any_interleaving(layout: str, steps: list[_Step]) -> None:
    """Model check: after every step, a cache hit for any file equals the sha256 of its bytes now.

    The second layout is the one a campaign found: two of the files sit on a 1-second filesystem mounted at
    ``weights/`` inside a release folder whose own clock ticks every 300 ms.
    """
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as monkeypatch:
        root = Path(folder)
        if layout == "one coarse filesystem":
            fs = FakeClockFS(monkeypatch)
            paths = [root / f"f{i}.bin" for i in range(3)]
        else:
            fs = FakeClockFS(monkeypatch, granularity_ns=300_000_000)
            (root / "weights").mkdir()
            fs.mount(root / "weights")
            paths = [root / "f0.bin", root / "weights" / "f1.bin", root / "weights" / "f2.bin"]
        for path in paths:
            fs.write(path, b"\0" * 8)
        cache = StatCache(root)
        for action, index, byte in steps:
            data = bytes([byte]) * 8
            if action == "write":
                fs.write(paths[index], data)
            elif action == "tick":
                fs.advance()
            else:
                rewrite = None if action == "hash" else (paths[index], data, action == "hash_write_tick")
                _hash_all(fs, paths, cache, rewrite)
            for path in paths:
                cached = cache.lookup(path.name, StatKey.of(os.stat(path)))
                if cached is not None:
                    assert cached == hashlib.sha256(path.read_bytes()).hexdigest()
        cache.close()
