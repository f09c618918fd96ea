"""The stat cache on a real coarse-timestamp filesystem mounted inside a fine-grained release folder.

Measured on real filesystems instead of tests/hashing's simulated clock. Needs root
(a loop mount) and mkfs.ext4: an ext4 image made with 128-byte inodes has 1-second timestamps, as
NFS, SMB, FAT and FUSE bucket mounts do. Not part of scripts/check.sh (CI may not allow mounts);
tests/hashing/test_statcache_devices.py simulates the same layout without privileges.

Each trial writes one new artifact, runs verify (which hashes and caches it), rewrites
it with other bytes of the same size at once (in the same second, unless the clock ticked over),
then verifies again: a cached OK there is stale, which `--no-cache` confirms as drift. Once the
second has passed, the cache must vouch for the files again (two verifies: the first re-hashes).
Three layouts: weights/ on the coarse mount inside a fine release folder (the issue's case), the
whole release on the coarse mount, the whole release on the fine filesystem.

Usage: sudo .venv/bin/python scripts/statcache_mixed_fs.py [--trials 12] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from hubrelease.findings import FileCheck
from hubrelease.manifest import load_manifest
from hubrelease.verify import VerifyOptions, verify_manifest

SIZE = 4096


@contextlib.contextmanager
def coarse_mount(where: Path) -> Iterator[Path]:
    """A fresh 32 MiB ext4 image with 1-second timestamps (128-byte inodes), loop-mounted at ``where``."""
    image = where.with_suffix(".img")
    with open(image, "wb") as handle:
        handle.truncate(32 << 20)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-I", "128", str(image)], check=True, capture_output=True)
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-o", "loop", str(image), str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)
        image.unlink()


def write(path: Path, data: bytes) -> None:
    """Rewrite in place (same inode), as an editor's save or a re-run of a build does."""
    with open(path, "r+b" if path.exists() else "wb") as handle:
        handle.truncate(0)
        handle.write(data)


def manifest(release: Path, files: dict[str, bytes]) -> Path:
    lines = ["schema_version: 1", "release:", "  repo_id: acme/mixed-fs", "  license: mit", "artifacts:"]
    for name, data in files.items():
        lines += [
            f"  - path: {name}",
            f"    size: {len(data)}",
            f"    sha256: {hashlib.sha256(data).hexdigest()}",
        ]
    path = release / "hubrelease.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def verify(path: Path, *, use_cache: bool = True) -> dict[str, FileCheck]:
    """What `hubrelease verify` checks, in process: a CLI start-up (~0.5 s) would let the clock tick over."""
    report = verify_manifest(load_manifest(path), path, options=VerifyOptions(use_cache=use_cache))
    return {check.path: check for check in report.files}


def trials(release: Path, folder: str, count: int) -> dict[str, int]:
    """Stale cached OKs, drift seen by --no-cache, and trials whose rewrite stayed in the write's second."""
    stale = drift = same_second = 0
    files: dict[str, bytes] = {}
    for trial in range(count):
        name = f"{folder}w{trial:02d}.bin" if folder else f"w{trial:02d}.bin"
        first, second = os.urandom(SIZE), os.urandom(SIZE)
        files[name] = first
        path = manifest(release, files)
        write(release / name, first)
        before = os.stat(release / name).st_mtime_ns
        verify(path)  # hashes the new file and caches its digest
        write(release / name, second)  # same size, other bytes, at once
        same_second += os.stat(release / name).st_mtime_ns == before
        cached = verify(path)[name]
        stale += cached.status == "ok" and cached.source == "cache"
        drift += verify(path, use_cache=False)[name].status == "digest_mismatch"
        files[name] = second  # the next trial's manifest pins what is on disk now
    path = manifest(release, files)
    time.sleep(1.1)  # past every file's second: from here on the cache may vouch for them
    verify(path)
    cached = sum(check.source == "cache" and check.status == "ok" for check in verify(path).values())
    return {
        "trials": count,
        "stale_ok": stale,
        "no_cache_drift": drift,
        "same_second_rewrites": same_second,
        "cached_ok_later": cached,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=12)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if os.geteuid() != 0 or shutil.which("mkfs.ext4") is None:
        print("needs root and mkfs.ext4 (a loop mount)", file=sys.stderr)
        return 2
    results: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        mixed = base / "mixed"
        mixed.mkdir()
        with coarse_mount(mixed / "weights"):
            results["weights/ on a 1 s mount, release folder fine"] = trials(mixed, "weights/", args.trials)
        with coarse_mount(base / "coarse") as coarse:
            results["whole release on the 1 s mount"] = trials(coarse, "", args.trials)
            shutil.rmtree(coarse / ".hubrelease", ignore_errors=True)
        fine = base / "fine"
        fine.mkdir()
        results["whole release on the fine filesystem"] = trials(fine, "", args.trials)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for layout, counts in results.items():
            print(
                f"{layout}: {counts['stale_ok']} of {counts['trials']} stale cached OKs "
                f"(--no-cache drift {counts['no_cache_drift']}, same-second rewrites {counts['same_second_rewrites']}; "
                f"a second later {counts['cached_ok_later']} of {counts['trials']} from the cache)"
            )
    return 1 if any(c["stale_ok"] for c in results.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
