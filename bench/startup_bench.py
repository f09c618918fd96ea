"""CLI start-up against ``python -c "import typer"``, and a warm verify against ``--help``, in one run.

Times fresh processes of:
  - ``python -c "import typer"`` (the peer: the least a typer CLI can cost),
  - ``hubrelease --help`` and ``hubrelease <command> --help`` for every command and group (read from
    the CLI's own help, so a new command is measured too),
  - ``hubrelease verify`` of a release of N small files whose digests all come from the stat cache
    (stdout to a pipe, as in CI or a pre-commit hook).
Rounds are interleaved (one run of every command per round, in a shuffled order), so machine load
hits every command alike; each figure is the median of the rounds, as wall-clock and as CPU time
(user + system) of the process, and each ratio is a median over ``import typer``'s median.
Targets: every ``--help`` <= 1.1x import typer (wall), warm verify <= ``--help`` + 50 ms.
The timed processes run without PYTHONDONTWRITEBYTECODE, after one warm-up run of each command: an
installed hubrelease has .pyc files, and a shell that sets it would time the compiler instead.

``--baseline DIR`` times another source tree's screens (an older commit's ``hubrelease/``, from
``git archive``) in the same rounds with PYTHONPATH set to DIR, against ``import typer`` timed with
the same PYTHONPATH (an extra path entry slows every import a little). ``--instructions`` adds
the instructions each screen executes (valgrind's cachegrind, the least of three runs): a count
that machine load does not move, for a before/after on a busy machine.

Usage: python bench/startup_bench.py [--repeat 21] [--files 2000] [--importtime] [--baseline DIR]
       [--instructions]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import yaml

HELP_TARGET = 1.1
"""Every ``--help`` at most this many times ``python -c "import typer"``."""
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
PEER = "python -c 'import typer'"


class Measured(NamedTuple):
    """One process to time: its command line, environment, and the peer its ratio is taken to."""

    command: list[str]
    env: dict[str, str]
    peer: str


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


def instructions(command: list[str], env: dict[str, str], runs: int = 3) -> int | None:
    """Instructions a run executes (valgrind --tool=cachegrind), the least of ``runs``: the count
    moves by a few million between runs, as the cyclic GC collects at different points; None
    without valgrind."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    counts = []
    for _ in range(runs):
        done = subprocess.run(
            [valgrind, "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", *command],
            capture_output=True,
            text=True,
            env={**env, "PYTHONHASHSEED": "0"},
        )
        found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
        if found is None:
            return None
        counts.append(int(found.group(1).replace(",", "")))
    return min(counts)


def to_measure(hubrelease: str, verify: list[str], baseline: Path | None) -> dict[str, Measured]:
    """Every process of the run, by the name it is printed under."""
    paths = [[], *commands(hubrelease)]
    peer = [sys.executable, "-c", "import typer"]
    measured = {PEER: Measured(peer, ENV, PEER)}
    for path in paths:
        measured[f"hubrelease {' '.join([*path, '--help'])}"] = Measured(
            [hubrelease, *path, "--help"], ENV, PEER
        )
    measured["hubrelease verify (warm)"] = Measured(verify, ENV, PEER)
    if baseline is not None:
        old = {**ENV, "PYTHONPATH": str(baseline.resolve())}
        old_peer = f"baseline: {PEER}"
        measured[old_peer] = Measured(peer, old, old_peer)
        for path in paths:
            measured[f"baseline: hubrelease {' '.join([*path, '--help'])}"] = Measured(
                [hubrelease, *path, "--help"], old, old_peer
            )
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--repeat", type=int, default=21, help="rounds (the median of N processes per command)"
    )
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
    parser.add_argument(
        "--instructions", action="store_true", help="also count each screen's instructions (valgrind)"
    )
    args = parser.parse_args()

    hubrelease = hubrelease_cli()
    env_note = machine()
    base = Path(tempfile.mkdtemp(prefix="startup-bench-"))
    try:
        manifest = make_release(base, args.files)
        verify = [hubrelease, "verify", str(manifest)]
        run_once(verify)  # fills the stat cache (and any other per-release cache)
        measured = to_measure(hubrelease, verify, args.baseline)
        for item in measured.values():
            run_once(item.command, item.env)  # warm-up: writes any missing .pyc, fills the page cache
        walls: dict[str, list[float]] = {name: [] for name in measured}
        cpus: dict[str, list[float]] = {name: [] for name in measured}
        order = list(measured)
        for _ in range(args.repeat):
            random.shuffle(order)
            for name in order:
                seconds, cpu_seconds = run_once(measured[name].command, measured[name].env)
                walls[name].append(seconds)
                cpus[name].append(cpu_seconds)
        counts = (
            {name: instructions(item.command, item.env) for name, item in measured.items()}
            if args.instructions
            else {}
        )
    finally:
        shutil.rmtree(base)

    wall = {name: statistics.median(times) for name, times in walls.items()}
    cpu = {name: statistics.median(times) for name, times in cpus.items()}
    print(f"\n{env_note}; median of {args.repeat} interleaved rounds")
    header = f"{'command':58s} {'wall s':>7s} {'/ typer':>8s} {'cpu s':>7s} {'/ typer':>8s}"
    print(header + (f" {'instructions':>13s} {'/ typer':>8s}" if counts else ""))
    for name, item in measured.items():
        line = (
            f"{name:58s} {wall[name]:7.3f} {wall[name] / wall[item.peer]:7.2f}x "
            f"{cpu[name]:7.3f} {cpu[name] / cpu[item.peer]:7.2f}x"
        )
        count, peer_count = counts.get(name), counts.get(item.peer)
        if count is not None and peer_count is not None:
            line += f" {count:13,d} {count / peer_count:7.3f}x"
        print(line)
    print("\ntargets:")
    tables = [("wall", wall), ("cpu", cpu)]
    if counts and all(counts.values()):
        tables.append(("instructions", {name: float(count or 0) for name, count in counts.items()}))
    for label, table in tables:
        for prefix in ("", "baseline: ") if args.baseline is not None else ("",):
            helps = {
                name: table[name] / table[measured[name].peer]
                for name in measured
                if name.startswith(f"{prefix}hubrelease") and name.endswith("--help")
            }
            worst = max(helps, key=lambda name: helps[name])
            over = [name for name, ratio in helps.items() if ratio > HELP_TARGET]
            print(
                f"  {label}: slowest {prefix}--help / import typer {helps[worst]:.2f}x ({worst}; target "
                f"<= {HELP_TARGET}); {len(over)} of {len(helps)} over"
            )
    warm = wall["hubrelease verify (warm)"] - wall["hubrelease --help"]
    print(f"  warm verify ({args.files} files) - hubrelease --help: {warm * 1000:+.0f} ms (target <= +50 ms)")
    if args.importtime:
        done = subprocess.run(
            [
                sys.executable,
                "-X",
                "importtime",
                "-c",
                "from hubrelease.cli.start import main; main()",
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
