"""Requests and bytes moved by `hubrelease verify --remote` vs `hf download` + `hf cache verify`.

Both check the same published release on a loopback Hub; the server counts every request and the
body bytes in each direction, and the file bytes downloaded (the ``resolve`` route). The release
publishes its card (README.md, rendered) and manifest too; ``verify --remote`` checks both (a fresh
render, the local manifest) by git blob id, downloading nothing. `hf cache verify` can only check a
local copy, so its honest cost includes the download that makes that copy; the warm-cache cost is
printed too.

    python bench/remote_verify_bench.py [--files 600] [--lfs 8] [--lfs-mib 4]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ["HF_HUB_DISABLE_XET"] = "1"  # before huggingface_hub is imported

import yaml
from typer.testing import CliRunner

from hubrelease.cli.app import app
from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.faults import FILE_ROUTES

REPO = "bench/remote-verify"


def make_release(folder: Path, files: int, lfs: int, lfs_mib: int) -> Path:
    """A release with ``lfs`` weight shards and ``files - lfs`` small regular files (configs, notes)."""
    artifacts = []
    for index in range(files):
        name = f"shards/model-{index:05d}.safetensors" if index < lfs else f"docs/note-{index:05d}.md"
        data = os.urandom(lfs_mib << 20) if index < lfs else f"note {index}\n".encode() * 64
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        artifacts.append({"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    manifest = {
        "schema_version": 1,
        "release": {"repo_id": REPO, "license": "mit"},
        "artifacts": artifacts,
    }
    target = folder / "hubrelease.yaml"
    target.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    return target


def measure(hub: LoopbackHub, label: str, run: Callable[[], None]) -> tuple[str, int, int, int, float]:
    """Run one tool and read what it moved from the server's request log (all bodies; file downloads)."""
    hub.requests.clear()
    start = time.perf_counter()
    run()
    elapsed = time.perf_counter() - start
    moved = hub.requests.bytes_in() + hub.requests.bytes_out()
    return label, hub.requests.count(), moved, hub.requests.bytes_out(FILE_ROUTES), elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=600)
    parser.add_argument("--lfs", type=int, default=8)
    parser.add_argument("--lfs-mib", type=int, default=4)
    args = parser.parse_args()
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp, LoopbackHub(Path(tmp) / "hub") as hub:
        manifest = make_release(Path(tmp) / "release", args.files, args.lfs, args.lfs_mib)
        # The card is published too, and verify --remote checks it against a fresh render.
        rendered = runner.invoke(app, ["render-card", str(manifest)])
        assert rendered.exit_code == 0, rendered.stderr
        pushed = runner.invoke(app, ["push", str(manifest), "--endpoint", hub.url])
        assert pushed.exit_code == 0, pushed.stderr
        env = dict(
            os.environ, HF_ENDPOINT=hub.url, HF_HOME=str(Path(tmp) / "hf"), HF_HUB_DISABLE_TELEMETRY="1"
        )
        hf = str(Path(sys.executable).parent / "hf")

        def remote() -> None:
            result = runner.invoke(app, ["verify", str(manifest), "--remote", "--endpoint", hub.url])
            assert result.exit_code == 0, result.stdout

        def cache_verify() -> None:
            subprocess.run([hf, "cache", "verify", REPO], env=env, check=True, capture_output=True)

        def download_and_verify() -> None:
            subprocess.run([hf, "download", REPO, "--quiet"], env=env, check=True, capture_output=True)
            cache_verify()

        rows = [
            measure(hub, "hubrelease verify --remote", remote),
            measure(hub, "hf download + hf cache verify", download_and_verify),
            measure(hub, "hf cache verify (warm cache)", cache_verify),
        ]
    total = args.lfs * (args.lfs_mib << 20)
    print(f"release: {args.files} files ({args.lfs} LFS x {args.lfs_mib} MiB = {total / 2**20:.0f} MiB)")
    print(f"{'tool':34} {'requests':>9} {'bytes moved':>14} {'downloaded':>12} {'seconds':>8}")
    for label, requests, moved, downloaded, elapsed in rows:
        print(f"{label:34} {requests:>9} {moved:>14,} {downloaded:>12,} {elapsed:>8.2f}")
    ours, cold, warm = rows
    print(f"requests: hf download+verify / verify --remote = {cold[1] / ours[1]:.1f}x")
    print(f"bytes:    hf download+verify / verify --remote = {cold[2] / max(ours[2], 1):.0f}x")
    print(f"requests: hf cache verify (warm) / verify --remote = {warm[1] / ours[1]:.1f}x")
    print(f"bytes:    hf cache verify (warm) / verify --remote = {warm[2] / max(ours[2], 1):.2f}x")


if __name__ == "__main__":
    main()
