"""CLI start-up against ``python -c "import typer"``, and a warm verify against ``--help``, in one run.

Times (best of N fresh processes, rounds interleaved so machine load hits every command alike):
  - ``python -c "import typer"`` (the peer: the least a typer CLI can cost),
  - ``hubrelease --help`` and ``hubrelease <command> --help`` for every command and group,
  - ``hubrelease verify`` of a release of N small files whose digests all come from the stat cache
    (stdout to a pipe, as in CI or a pre-commit hook).
Prints each ratio targeted: every ``--help`` <= 1.1x import typer, warm verify <= ``--help`` + 50 ms.
The timed processes run without PYTHONDONTWRITEBYTECODE, after one warm-up run of each command: an
installed hubrelease has .pyc files, and a shell that sets it would time the compiler instead.

Each figure is given as wall-clock and as CPU time (user + system) of the process; ``--baseline``
times another source tree's ``--help`` runs in the same rounds, for a before/after on a busy machine.

Usage: python bench/startup_bench.py [--repeat 15] [--files 2000] [--importtime] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HELP_TARGET = 1.1
"""Every ``--help`` at most this many times ``python -c "import typer"``."""
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def hubrelease_cli() -> str:
    """The ``hubrelease`` script of this environment."""
    return shutil.which("hubrelease") or str(Path(sys.executable).parent / "hubrelease")


def machine() -> str:
    """cores, CPU model, load and Python: the figures mean nothing without them."""
    model = "unknown CPU"
    with contextlib.suppress(OSError):
        lines = Path("/proc/cpuinfo").read_text().splitlines()
        model = next(
            (line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), model
        )
    return f"{os.cpu_count()} cpus ({model}), load {os.getloadavg()[0]:.1f}, Python {sys.version.split()[0]}"


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


def run_once(command: list[str], env: dict[str, str] = ENV) -> tuple[float, float]:
    """Wall-clock and CPU (user + system) seconds of one process: on a loaded machine the CPU time
    is the steadier figure, as waiting for a core counts in the first only."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, env=env)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode()[:300]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, cpu


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=15, help="best of N processes per command")
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument(
        "--importtime", action="store_true", help="also print the 15 slowest imports of --help"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a source tree of another hubrelease (an older commit, say): its --help runs are timed "
        "in the same rounds, with PYTHONPATH set to it",
    )
    args = parser.parse_args()

    hubrelease = hubrelease_cli()
    env_note = machine()
    base = Path(tempfile.mkdtemp(prefix="startup-bench-"))
    try:
        manifest = make_release(base, args.files)
        verify = [hubrelease, "verify", str(manifest)]
        run_once(verify)  # fills the stat cache (and any other per-release cache)
        measured: dict[str, tuple[list[str], dict[str, str]]] = {
            "python -c 'import typer'": ([sys.executable, "-c", "import typer"], ENV),
            "hubrelease --help": ([hubrelease, "--help"], ENV),
        }
        paths = commands(hubrelease)
        for path in paths:
            measured[f"hubrelease {' '.join(path)} --help"] = ([hubrelease, *path, "--help"], ENV)
        measured[f"hubrelease verify (warm, {args.files} files)"] = (verify, ENV)
        if args.baseline is not None:
            old = {**ENV, "PYTHONPATH": str(args.baseline.resolve())}
            for path in [[], *paths]:
                measured[f"baseline: hubrelease {' '.join([*path, '--help'])}"] = (
                    [hubrelease, *path, "--help"],
                    old,
                )
        for command, env in measured.values():
            run_once(command, env)  # warm-up: writes any missing .pyc, fills the page cache
        best = dict.fromkeys(measured, float("inf"))
        best_cpu = dict.fromkeys(measured, float("inf"))
        for _ in range(args.repeat):
            for name, (command, env) in measured.items():
                wall, cpu = run_once(command, env)
                best[name] = min(best[name], wall)
                best_cpu[name] = min(best_cpu[name], cpu)
    finally:
        shutil.rmtree(base)

    typer_s = best["python -c 'import typer'"]
    typer_cpu = best_cpu["python -c 'import typer'"]
    help_s = best["hubrelease --help"]
    print(f"\n{env_note}; best of {args.repeat}")
    print(f"{'command':64s} {'wall s':>7s} {'/ typer':>8s} {'cpu s':>7s} {'/ typer':>8s}")
    for name, seconds in best.items():
        cpu = best_cpu[name]
        print(f"{name:64s} {seconds:7.3f} {seconds / typer_s:7.2f}x {cpu:7.3f} {cpu / typer_cpu:7.2f}x")
    print("\ntargets:")
    for label, table, peer in (("wall", best, typer_s), ("cpu", best_cpu, typer_cpu)):
        helps = {n: s for n, s in table.items() if n.startswith("hubrelease") and n.endswith("--help")}
        worst = max(helps, key=lambda n: helps[n])
        over = [name for name, seconds in helps.items() if seconds / peer > HELP_TARGET]
        print(
            f"  {label}: slowest --help / import typer {helps[worst] / peer:.2f}x ({worst}; target <= "
            f"{HELP_TARGET}); {len(over)} of {len(helps)} over"
        )
    warm = best[f"hubrelease verify (warm, {args.files} files)"]
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
