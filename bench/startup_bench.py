"""CLI start-up against ``python -c "import typer"``, and a warm verify against ``--help``, in one run.

Times (best of N fresh processes, rounds interleaved so machine load hits every command alike):
  - ``python -c "import typer"`` (the peer: the least a typer CLI can cost),
  - ``hubrelease --help`` and ``hubrelease <command> --help`` for every command and group,
  - ``hubrelease verify`` of a release of N small files whose digests all come from the stat cache
    (stdout to a pipe, as in CI or a pre-commit hook).
Prints each ratio the issue targets: every ``--help`` <= 2x import typer, warm verify <= ``--help`` + 50 ms.
The timed processes run without PYTHONDONTWRITEBYTECODE, after one warm-up run of each command: an
installed hubrelease has .pyc files, and a shell that sets it would time the compiler instead.

Usage: python bench/startup_bench.py [--repeat 15] [--files 2000] [--importtime]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def hubrelease_cli() -> str:
    """The ``hubrelease`` script of this environment."""
    return shutil.which("hubrelease") or str(Path(sys.executable).parent / "hubrelease")


def machine() -> str:
    return f"{os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}, Python {sys.version.split()[0]}"


def commands(hubrelease: str) -> list[list[str]]:
    """Every command path, read from the CLI's own help (so new commands are measured too)."""
    found: list[list[str]] = []

    def walk(path: list[str]) -> None:
        text = subprocess.run(
            [hubrelease, *path, "--help"], capture_output=True, text=True, check=True, env=ENV
        ).stdout
        if "Commands:" not in text:
            return
        for line in text.split("Commands:", 1)[1].splitlines():
            parts = line.split()
            if line.startswith("  ") and not line.startswith("   ") and parts:
                found.append([*path, parts[0]])
                walk([*path, parts[0]])

    walk([])
    return found


def make_release(root: Path, count: int) -> Path:
    artifacts = []
    for index in range(count):
        data = f"file {index}\n".encode() * 8
        name = f"shard-{index // 100:02d}/file-{index:05d}.json"
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
        os.utime(root / name, ns=(10**18, 10**18))  # well before any stamp: cache entries are not racy
        artifacts.append({"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    manifest = {
        "schema_version": 1,
        "release": {"repo_id": "bench/startup", "license": "apache-2.0"},
        "artifacts": artifacts,
    }
    path = root / "hubrelease.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return path


def run_once(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=ENV)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[:300]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=15, help="best of N processes per command")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument(
        "--importtime", action="store_true", help="also print the 15 slowest imports of --help"
    )
    args = parser.parse_args()

    hubrelease = hubrelease_cli()
    env_note = machine()
    base = Path(tempfile.mkdtemp(prefix="startup-bench-"))
    try:
        manifest = make_release(base, args.files)
        verify = [hubrelease, "verify", str(manifest)]
        run_once(verify)  # fills the stat cache (and any other per-release cache)
        measured: dict[str, list[str]] = {
            "python -c 'import typer'": [sys.executable, "-c", "import typer"],
            "hubrelease --help": [hubrelease, "--help"],
        }
        for path in commands(hubrelease):
            measured[f"hubrelease {' '.join(path)} --help"] = [hubrelease, *path, "--help"]
        measured[f"hubrelease verify (warm, {args.files} files)"] = verify
        for command in measured.values():
            run_once(command)  # warm-up: writes any missing .pyc, fills the page cache
        best = dict.fromkeys(measured, float("inf"))
        for _ in range(args.repeat):
            for name, command in measured.items():
                best[name] = min(best[name], run_once(command))
    finally:
        shutil.rmtree(base)

    typer_s = best["python -c 'import typer'"]
    help_s = best["hubrelease --help"]
    print(f"\n{env_note}; best of {args.repeat}")
    print(f"{'command':56s} {'seconds':>8s} {'/ import typer':>15s}")
    for name, seconds in best.items():
        print(f"{name:56s} {seconds:8.3f} {seconds / typer_s:14.2f}x")
    helps = {n: s for n, s in best.items() if n.endswith("--help")}
    worst = max(helps, key=lambda n: helps[n])
    warm = best[f"hubrelease verify (warm, {args.files} files)"]
    print("\ntargets:")
    print(f"  slowest --help / import typer: {helps[worst] / typer_s:.2f}x ({worst}; target <= 2.0)")
    print(f"  warm verify - hubrelease --help: {(warm - help_s) * 1000:+.0f} ms (target <= +50 ms)")
    if args.importtime:
        done = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-c",
                "from hubrelease.cli.app import main; main()",
                "--help",
            ],
            capture_output=True,
            text=True,
            env=ENV,
        )
        rows = [line.split("|") for line in done.stderr.splitlines() if line.startswith("import time:")]
        rows = [r for r in rows if r[1].strip().isdigit()]
        print("\nslowest imports of --help (cumulative us):")
        for row in sorted(rows, key=lambda r: -int(r[1]))[:15]:
            print(f"  {int(row[1]):>8d}  {row[2].strip()}")


if __name__ == "__main__":
    main()
