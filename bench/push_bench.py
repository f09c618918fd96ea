"""`hubrelease push` against `hf upload`, side by side in one run: wall time and a resumed push.

Same release, each command in its own process with a fresh ``HF_HOME`` against a fresh loopback Hub
(in this process: the CAS deduplicates one owner's data across repos, so a Hub that held the
release would make every upload after the first free), over plain LFS (``HF_HUB_DISABLE_XET=1``)
and over Xet:

- speed: ``hubrelease push`` at each ``--batch`` size (``default``: push's own, 512 MiB) and
  ``hf upload`` of the same folder, ``--runs`` rounds interleaved; the median of each and its
  ratio to ``hf upload``'s. ``hubrelease verify`` runs first (CI's gate does), so push's preflight
  takes the digests from the stat cache; push's time includes its preflight and remote verify.
- resume: each tool SIGKILLed once the server has received half the release (``--kill-at``) on the data routes
  (``faults.trip_after``: a byte count, not a time), then re-run from a fresh ``HF_HOME``; the bytes
  the re-run sent, as a share of the release, and hubrelease / hf upload.
- ``--drops``: how long a push whose xorb connection drops every time takes to reach exit 4 with
  hf_xet's and push's own retry settings.

The default is small, for a 2-core machine; on 16 cores use e.g. ``--files 2 --mib 2048``.

    python bench/push_bench.py [--files 2] [--mib 256] [--batch default,8GiB] [--runs 1]
                               [--transport lfs,xet] [--no-speed] [--no-resume] [--drops]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import yaml
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.faults import DATA_ROUTES

BIN = Path(sys.executable).parent
MIB = 1 << 20


def make_release(folder: Path, files: int, mib: int) -> list[dict[str, object]]:
    """``files`` random files of ``mib`` MiB in ``folder``: their manifest artifacts."""
    folder.mkdir(parents=True)
    artifacts: list[dict[str, object]] = []
    for index in range(files):
        name = f"model-{index + 1:05d}-of-{files:05d}.safetensors"
        digest = hashlib.sha256()
        # An AES-CTR keystream: bytes no chunker can deduplicate, about 15x faster than
        # os.urandom (generating 4 GiB with it outlasted a 130 s device call).
        stream = Cipher(algorithms.AES(os.urandom(16)), modes.CTR(os.urandom(16))).encryptor()
        zeros = bytes(MIB)
        with open(folder / name, "wb") as handle:
            for _ in range(mib):
                block = stream.update(zeros)
                digest.update(block)
                handle.write(block)
        artifacts.append({"path": name, "size": mib * MIB, "sha256": digest.hexdigest()})
    return artifacts


def write_manifest(path: Path, repo: str, artifacts: list[dict[str, object]]) -> Path:
    release = {"repo_id": repo, "license": "mit"}
    text = yaml.safe_dump({"schema_version": 1, "release": release, "artifacts": artifacts}, sort_keys=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


class Bench:
    """One scratch folder: fresh loopback Hubs, repos and HF_HOMEs on demand."""

    def __init__(self, tmp: Path) -> None:
        self.tmp, self.count = tmp, 0
        self.hub: LoopbackHub | None = None

    @contextlib.contextmanager
    def fresh_hub(self) -> Iterator[LoopbackHub]:
        """A loopback Hub that holds nothing yet, removed (with what it stored) afterwards."""
        self.count += 1
        root = self.tmp / f"hub-{self.count}"
        try:
            with LoopbackHub(root) as hub:
                self.hub = hub
                yield hub
        finally:
            self.hub = None
            shutil.rmtree(root, ignore_errors=True)

    def fresh(self, name: str) -> str:
        self.count += 1
        return f"bench/{name}-{self.count}"

    def env(self, transport: str) -> dict[str, str]:
        """A fresh HF_HOME (as on a CI runner) at each call."""
        assert self.hub is not None
        self.count += 1
        env = dict(os.environ, HF_ENDPOINT=self.hub.url, HF_TOKEN=self.hub.owner_token)
        env.update(HF_HOME=str(self.tmp / "homes" / str(self.count)), HF_HUB_DISABLE_TELEMETRY="1")
        env.update(HF_HUB_DISABLE_PROGRESS_BARS="1")
        env.pop("HF_HUB_DISABLE_XET", None)
        if transport == "lfs":
            env["HF_HUB_DISABLE_XET"] = "1"
        return env

    def push(self, folder: Path, artifacts: list[dict[str, object]], batch: str) -> list[str]:
        """The command pushing ``folder`` to a new repo (its manifest outside the folder)."""
        manifest = write_manifest(
            self.tmp / "manifests" / f"{self.count}.yaml", self.fresh("push"), artifacts
        )
        command = [str(BIN / "hubrelease"), "push", str(manifest), "--dir", str(folder), "-q"]
        return command + ([] if batch == "default" else ["--batch-size", batch])

    def hf_upload(self, folder: Path) -> list[str]:
        return [str(BIN / "hf"), "upload", self.fresh("hf"), str(folder), ".", "--quiet"]

    def data_bytes(self) -> int:
        """Request bodies the Hub received on the data routes, once no request is still arriving
        (a killed client's connections end a little after the kill)."""
        assert self.hub is not None
        seen = -1
        while (now := sum(self.hub.requests.bytes_in(r) for r in DATA_ROUTES.split("|"))) != seen:
            seen = now
            time.sleep(1)
        return now

    def run(
        self, command: list[str], env: dict[str, str], kill_after: int | None = None
    ) -> tuple[int, float]:
        """(exit code, seconds) of one run; killed once ``kill_after`` data bytes arrived."""
        assert self.hub is not None
        self.hub.requests.clear()
        start = time.monotonic()
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        if kill_after is not None:
            self.hub.faults.trip_after(kill_after, lambda: os.kill(process.pid, signal.SIGKILL))
        _, err = process.communicate()
        seconds = time.monotonic() - start
        self.hub.faults.clear()
        if kill_after is None and process.returncode != 0:
            raise SystemExit(f"{' '.join(command[:3])} failed ({process.returncode}):\n{err[-3000:]}")
        return process.returncode, seconds

    def timed(self, command: list[str], transport: str) -> float:
        """Seconds of one run against a fresh Hub."""
        with self.fresh_hub():
            return self.run(command, self.env(transport))[1]


def speed(
    bench: Bench, folder: Path, artifacts: list[dict[str, object]], options: argparse.Namespace
) -> None:
    size = sum(int(str(a["size"])) for a in artifacts)
    for transport in options.transport:
        times: dict[str, list[float]] = {}
        for _ in range(options.runs):
            for batch in options.batch:
                times.setdefault(f"hubrelease push --batch-size {batch}", []).append(
                    bench.timed(bench.push(folder, artifacts, batch), transport)
                )
            times.setdefault("hf upload", []).append(bench.timed(bench.hf_upload(folder), transport))
        peer = statistics.median(times["hf upload"])
        for name, values in times.items():
            median = statistics.median(values)
            print(
                f"speed {transport:3} {name:40} {median:7.2f} s  {size / MIB / median:7.1f} MiB/s  "
                f"{median / peer:5.2f}x hf upload  (runs: {', '.join(f'{v:.2f}' for v in values)})"
            )


def resume(
    bench: Bench, folder: Path, artifacts: list[dict[str, object]], options: argparse.Namespace
) -> None:
    size = sum(int(str(a["size"])) for a in artifacts)
    for transport, share in ((t, k) for t in options.transport for k in options.kill_at):
        sent: dict[str, int] = {}
        push, peer = bench.push(folder, artifacts, options.resume_batch), bench.hf_upload(folder)
        for name, command in (("hubrelease push", push), ("hf upload", peer)):
            with bench.fresh_hub():
                code, _ = bench.run(command, bench.env(transport), kill_after=int(size * share))
                killed = bench.data_bytes()
                again = bench.run(command, bench.env(transport))[1]  # fresh HF_HOME, same repo
                sent[name] = bench.data_bytes()
            print(
                f"resume {transport:3} {name:16} killed at {share:g}: exit {code}, {killed:,} bytes; re-run: "
                f"{sent[name]:,} bytes = {sent[name] / size:.3f}x the release ({again:.1f} s); "
                f"both runs {(killed + sent[name]) / size:.3f}x"
            )
        ratio = sent["hubrelease push"] / max(sent["hf upload"], 1)
        print(f"resume {transport:3} killed at {share:g}: re-run bytes, hubrelease / hf upload: {ratio:.3f}")


def drops(bench: Bench) -> None:
    folder = bench.tmp / "drops"
    command = bench.push(folder, make_release(folder, 1, 8), "default")
    with bench.fresh_hub() as hub:
        hub.faults.drop_xorb(times=100_000)
        env = bench.env("xet")
        for name in (
            "HF_XET_CLIENT_RETRY_MAX_ATTEMPTS",
            "HF_XET_CLIENT_RETRY_BASE_DELAY",
            "HF_XET_CLIENT_RETRY_MAX_DURATION",
        ):
            env.pop(name, None)
        start = time.monotonic()
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        print(
            f"drops: exit {done.returncode} after {time.monotonic() - start:.1f} s, "
            f"{hub.requests.count('xet_xorb')} xorb tries; {done.stderr.strip().splitlines()[-1][:160]}"
        )


def machine() -> str:
    model = next(
        (
            line.split(":", 1)[1].strip()
            for line in subprocess.run(
                ["lscpu"], capture_output=True, text=True, check=False
            ).stdout.splitlines()
            if line.startswith("Model name")
        ),
        platform.processor(),
    )
    return (
        f"{model}, {os.cpu_count()} CPUs, Python {platform.python_version()}, huggingface_hub "
        f"{version('huggingface_hub')}, hf_xet {version('hf_xet')}, load average {os.getloadavg()[0]:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2)
    parser.add_argument("--mib", type=int, default=256)
    parser.add_argument("--batch", default="default,8GiB", help="push batch sizes, comma-separated")
    parser.add_argument("--resume-batch", default="default", help="push's batch size in the resumed push")
    parser.add_argument(
        "--kill-at",
        default="0.5",
        help="shares of the release received when each resumed push is killed, comma-separated (0.5: at "
        "half, which for equal files is where one LFS object ends and the next begins)",
    )
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--transport", default="lfs,xet")
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--no-resume", action="store_true")
    parser.add_argument("--drops", action="store_true")
    options = parser.parse_args()
    options.batch, options.transport = options.batch.split(","), options.transport.split(",")
    options.kill_at = [float(share) for share in options.kill_at.split(",")]
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # each figure as measured
    with tempfile.TemporaryDirectory(prefix="push-bench-") as name:
        bench = Bench(Path(name))
        folder = bench.tmp / "release"
        artifacts = make_release(folder, options.files, options.mib)
        print(f"machine: {machine()}")
        print(f"release: {options.files} x {options.mib} MiB = {options.files * options.mib} MiB")
        verify = write_manifest(bench.tmp / "manifests" / "verify.yaml", "bench/verify", artifacts)
        subprocess.run(
            [str(BIN / "hubrelease"), "verify", str(verify), "--dir", str(folder), "-q"], check=True
        )
        if not options.no_speed:
            speed(bench, folder, artifacts, options)
        if not options.no_resume:
            resume(bench, folder, artifacts, options)
        if options.drops:
            drops(bench)


if __name__ == "__main__":
    main()
