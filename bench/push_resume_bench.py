"""A push SIGKILLed at about half of its upload, re-run with a fresh HF_HOME: bytes the Hub received.

Same release sizes (fresh bytes for each tool: the CAS deduplicates across repos), same loopback Hub
(in this process), same run, for ``hubrelease push`` and its peer ``hf upload`` (Xet on for both). Each tool is killed once the server has received half
of the release's bytes on the data routes (``faults.trip_after``: a byte count, not a time), then
re-run from a fresh ``HF_HOME`` (every CI runner starts with one). Printed: bytes received by the
killed run and by the re-run, the re-run's bytes as a share of the release and the ratio
hubrelease / hf; wall times for information. ``--drops`` also times how long a push whose xorb
connection drops every time takes to reach exit 4 with hf_xet's and push's own retry settings.

    python bench/push_resume_bench.py [--files 12] [--mib 256] [--no-peer] [--drops]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.faults import DATA_ROUTES

BIN = Path(sys.executable).parent


def make_release(folder: Path, files: int, mib: int, repo: str) -> tuple[Path, int]:
    folder.mkdir(parents=True)
    artifacts = []
    for index in range(files):
        name = f"model-{index + 1:05d}-of-{files:05d}.safetensors"
        digest = hashlib.sha256()
        with open(folder / name, "wb") as handle:
            for _ in range(mib):
                block = os.urandom(1 << 20)
                digest.update(block)
                handle.write(block)
        artifacts.append({"path": name, "size": mib << 20, "sha256": digest.hexdigest()})
    manifest = {"schema_version": 1, "release": {"repo_id": repo, "license": "mit"}, "artifacts": artifacts}
    path = folder / "hubrelease.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    return path, files * (mib << 20)


def data_bytes(hub: LoopbackHub) -> int:
    return sum(hub.requests.bytes_in(route) for route in DATA_ROUTES.split("|"))


def run(
    hub: LoopbackHub, command: list[str], env: dict[str, str], kill_after: int | None
) -> tuple[int, int, float]:
    """(exit code, data bytes the server received, seconds) of one run, killed after ``kill_after`` bytes."""
    hub.requests.clear()
    start = time.monotonic()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if kill_after is not None:
        hub.faults.trip_after(kill_after, lambda: os.kill(process.pid, signal.SIGKILL))
    _, err = process.communicate()
    hub.faults.clear()
    if kill_after is None and process.returncode != 0:
        raise SystemExit(f"{command[:3]} failed ({process.returncode}):\n{err[-3000:]}")
    return process.returncode, data_bytes(hub), time.monotonic() - start


def environment(hub: LoopbackHub, home: Path) -> dict[str, str]:
    env = dict(os.environ, HF_ENDPOINT=hub.url, HF_HOME=str(home), HF_TOKEN=hub.owner_token)
    env.update(HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_PROGRESS_BARS="1")
    env.pop("HF_HUB_DISABLE_XET", None)
    return env


def resume(hub: LoopbackHub, tmp: Path, name: str, command: list[str], size: int) -> tuple[int, int]:
    killed = run(hub, command, environment(hub, tmp / f"{name}-home-1"), size // 2)
    again = run(hub, command, environment(hub, tmp / f"{name}-home-2"), None)
    print(
        f"{name:10} killed run: exit {killed[0]}, {killed[1]:,} bytes received in {killed[2]:.1f} s; "
        f"re-run: {again[1]:,} bytes ({again[1] / size:.3f}x the release) in {again[2]:.1f} s"
    )
    return killed[1], again[1]


def drops(hub: LoopbackHub, tmp: Path) -> None:
    manifest, _ = make_release(tmp / "drops", 1, 8, "acme/drops")
    hub.faults.drop_xorb(times=100_000)
    env = environment(hub, tmp / "drops-home")
    for name in (
        "HF_XET_CLIENT_RETRY_MAX_ATTEMPTS",
        "HF_XET_CLIENT_RETRY_BASE_DELAY",
        "HF_XET_CLIENT_RETRY_MAX_DURATION",
    ):
        env.pop(name, None)
    hub.requests.clear()
    start = time.monotonic()
    done = subprocess.run(
        [str(BIN / "hubrelease"), "push", str(manifest)], env=env, capture_output=True, text=True
    )
    print(
        f"drops: exit {done.returncode} after {time.monotonic() - start:.1f} s, "
        f"{hub.requests.count('xet_xorb')} xorb tries; {done.stderr.strip().splitlines()[-1][:160]}"
    )
    hub.faults.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=12)
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--no-peer", action="store_true", help="skip `hf upload`")
    parser.add_argument("--drops", action="store_true", help="also time repeated drops to exit 4")
    options = parser.parse_args()
    with (
        tempfile.TemporaryDirectory(prefix="push-resume-bench-") as name,
        LoopbackHub(Path(name) / "hub") as hub,
    ):
        tmp = Path(name)
        manifest, size = make_release(tmp / "release", options.files, options.mib, "acme/resume")
        print(f"release: {options.files} files, {size:,} bytes; batches: push's default")
        push = [str(BIN / "hubrelease"), "push", str(manifest)]
        ours = resume(hub, tmp, "hubrelease", push, size)
        if not options.no_peer:
            # Fresh bytes of the same sizes: the CAS would deduplicate the same ones across repos.
            make_release(tmp / "peer", options.files, options.mib, "acme/resume-hf")
            (tmp / "peer" / "hubrelease.yaml").unlink()
            peer = [str(BIN / "hf"), "upload", "acme/resume-hf", str(tmp / "peer"), ".", "--quiet"]
            theirs = resume(hub, tmp, "hf upload", peer, size)
            print(f"re-run bytes, hubrelease / hf upload: {ours[1] / theirs[1]:.3f}")
        if options.drops:
            drops(hub, tmp)


if __name__ == "__main__":
    main()
