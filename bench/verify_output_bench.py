"""``hubrelease verify`` with thousands of findings: the text listing against ``--json``, in one run.

A manifest of N files (default 20,000), none of which exists: every file is one ``missing`` finding.
Times ``hubrelease verify`` (best of N fresh processes, after a warm-up run that also stores the
verify plan) with stdout to a pipe, as CI and pre-commit hooks see it: the text listing (one line
per finding) and ``--json`` (the peer: the same report, no layout at all). Also on a terminal (a
pty), where the listing stops after ``cli.output.TTY_ROWS`` rows and says how many more there are.
Prints each against ``--json``; run without PYTHONDONTWRITEBYTECODE (an install has .pyc files).

Usage: python bench/verify_output_bench.py [--files 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pty
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import yaml
from startup_bench import ENV, hubrelease_cli, machine  # this folder is on sys.path when run as a script


def make_manifest(root: Path, count: int) -> Path:
    artifacts = [
        {
            "path": f"shard-{i // 1000:02d}/file-{i:05d}.json",
            "size": 80,
            "sha256": hashlib.sha256(b"%d" % i).hexdigest(),
        }
        for i in range(count)
    ]
    manifest = {
        "schema_version": 1,
        "release": {"repo_id": "bench/missing", "license": "apache-2.0"},
        "artifacts": artifacts,
    }
    path = root / "hubrelease.yaml"
    path.write_text(yaml.dump(manifest, Dumper=yaml.CSafeDumper, sort_keys=False))
    return path


def run_pipe(command: list[str]) -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=ENV)
    elapsed = time.perf_counter() - start
    if done.returncode != 1:  # every file is missing: drift
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[:300]}")
    return elapsed, done.stdout


def run_tty(command: list[str]) -> tuple[float, bytes]:
    """The command with stdout on a pseudo-terminal, read to the end."""
    leader, follower = pty.openpty()
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, stdout=follower, stderr=subprocess.DEVNULL, env={**ENV, "COLUMNS": "160"}
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait()
    elapsed = time.perf_counter() - start
    os.close(leader)
    return elapsed, b"".join(chunks)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5, help="best of N processes per variant")
    args = parser.parse_args()

    env_note = machine()
    base = Path(tempfile.mkdtemp(prefix="verify-output-bench-"))
    try:
        verify = [hubrelease_cli(), "verify", str(make_manifest(base, args.files))]
        variants = {
            "text to a pipe": (run_pipe, verify),
            "--json to a pipe (peer)": (run_pipe, [*verify, "--json"]),
            "text on a terminal": (run_tty, verify),
        }
        best = dict.fromkeys(variants, float("inf"))
        out: dict[str, bytes] = {}
        for runner, command in variants.values():
            runner(command)  # warm-up: .pyc files, the verify plan
        for _ in range(args.repeat):
            for name, (runner, command) in variants.items():
                seconds, out[name] = runner(command)
                best[name] = min(best[name], seconds)
    finally:
        shutil.rmtree(base)

    listed = sum(1 for line in out["text to a pipe"].splitlines() if b" missing " in line)
    peer = best["--json to a pipe (peer)"]
    print(f"\n{env_note}; {args.files} missing files; best of {args.repeat}")
    print(f"{'hubrelease verify':28s} {'seconds':>8s} {'/ --json':>9s}")
    for name, seconds in best.items():
        print(f"{name:28s} {seconds:8.3f} {seconds / peer:8.2f}x")
    tail = out["text on a terminal"].decode(errors="replace").strip().splitlines()[-2:]
    print(f"\ntext to a pipe lists {listed} of {args.files} findings; a terminal ends with:")
    for line in tail:
        print(f"  {line.strip()}")


if __name__ == "__main__":
    main()
