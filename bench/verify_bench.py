"""Local verify throughput against its peers, measured in one run on one tree.

Generates a release (default: 4 x 1 GiB shards + 1,000 small files) with a manifest, then times:
  - ``hubrelease verify`` cold: a first run (no ``.hubrelease/`` at all) and ``--no-cache``,
  - ``hubrelease verify`` warm (unchanged tree, stat cache),
  - ``sha256sum -c`` (coreutils, one process),
  - the practical limit: one ``openssl dgst -sha256`` per large file plus the small files
    in batches, as many processes at once as there are cores, largest first,
  - N parallel ``openssl`` processes over equal shares of bytes (the earlier ceiling),
  - ``model_signing verify`` (sign with an EC key first) if its CLI is on PATH or given with --model-signing.
Prints throughput and the ratios the issue targets. The files sit in the page cache after the
first pass, so every tool is measured hashing from memory: this compares hashing, not disks.

Usage: python bench/verify_bench.py [--big-gib 1] [--big-count 4] [--small 1000] [--keep DIR]
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

CHUNK = 1 << 20


def make_tree(root: Path, big_count: int, big_gib: float, small: int) -> Path:
    artifacts = []
    block = os.urandom(CHUNK)
    for index in range(big_count):
        name = f"model-{index + 1:05d}-of-{big_count:05d}.safetensors"
        digest = hashlib.sha256()
        size = int(big_gib * (1 << 30))
        with open(root / name, "wb") as handle:
            written = 0
            while written < size:
                piece = bytes([index]) + block[1:] if written == 0 else block
                piece = piece[: size - written]
                handle.write(piece)
                digest.update(piece)
                written += len(piece)
        artifacts.append({"path": name, "size": size, "sha256": digest.hexdigest()})
    (root / "small").mkdir()
    for index in range(small):
        data = os.urandom(4096 + index)
        name = f"small/file-{index:04d}.json"
        (root / name).write_bytes(data)
        artifacts.append({"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    manifest = {
        "schema_version": 1,
        "release": {"repo_id": "bench/release", "license": "apache-2.0"},
        "artifacts": artifacts,
        "ignore": ["SHA256SUMS"],
    }
    path = root / "hubrelease.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    with open(root / "SHA256SUMS", "w") as handle:
        for item in artifacts:
            handle.write(f"{item['sha256']}  {item['path']}\n")
    return path


def tree_options(parser: argparse.ArgumentParser) -> None:
    """The tree's shape (``make_tree``) and the repeat count, as every bench over this tree takes them."""
    parser.add_argument("--big-gib", type=float, default=1.0)
    parser.add_argument("--big-count", type=int, default=4)
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="take the best of N timings per tool")


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[:500]}")
    return elapsed


def parallel_openssl(root: Path, names: list[str], jobs: int) -> float:
    """N openssl processes, each given an equal share of bytes (largest first, greedy)."""
    sizes = sorted(((os.path.getsize(root / n), n) for n in names), reverse=True)
    buckets: list[list[str]] = [[] for _ in range(jobs)]
    loads = [0] * jobs
    for size, name in sizes:
        slot = loads.index(min(loads))
        buckets[slot].append(name)
        loads[slot] += size
    start = time.perf_counter()
    procs = [
        subprocess.Popen(["openssl", "dgst", "-sha256", *bucket], cwd=root, stdout=subprocess.DEVNULL)
        for bucket in buckets
        if bucket
    ]
    if any(p.wait() != 0 for p in procs):
        raise SystemExit("openssl failed")
    return time.perf_counter() - start


def practical_limit(root: Path, names: list[str], jobs: int, large: int = 16 << 20) -> float:
    """One openssl per large file, small files in batches of 256, ``jobs`` processes at a time, largest first."""
    sized = sorted(((os.path.getsize(root / n), n) for n in names), reverse=True)
    tasks = [[n] for size, n in sized if size >= large]
    small = [n for size, n in sized if size < large]
    tasks += [small[i : i + 256] for i in range(0, len(small), 256)]
    start = time.perf_counter()
    running: list[subprocess.Popen[bytes]] = []
    for task in tasks:
        while len(running) >= jobs:
            running[0].wait()
            running = [p for p in running if p.poll() is None]
        running.append(
            subprocess.Popen(["openssl", "dgst", "-sha256", *task], cwd=root, stdout=subprocess.DEVNULL)
        )
    if any(p.wait() != 0 for p in running):
        raise SystemExit("openssl failed")
    return time.perf_counter() - start


def single_core_rate(path: Path) -> float:
    """Bytes per second one core hashes (our digest, in process, file in the page cache)."""
    from hubrelease.hashing import sha256_file

    start = time.perf_counter()
    sha256_file(path)
    return path.stat().st_size / (time.perf_counter() - start)


def model_signing_verify(cli: str, root: Path, model: Path) -> float | None:
    keys = root.parent / "keys"
    keys.mkdir(exist_ok=True)
    subprocess.run(
        ["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", keys / "key.pem"],
        check=True,
    )
    subprocess.run(
        ["openssl", "ec", "-in", keys / "key.pem", "-pubout", "-out", keys / "pub.pem"],
        check=True,
        stderr=subprocess.DEVNULL,
    )
    sig = root.parent / "model.sig"
    timed(
        [cli, "sign", "key", str(model), "--private_key", str(keys / "key.pem"), "--signature", str(sig)],
        root,
    )
    return timed(
        [cli, "verify", "key", str(model), "--signature", str(sig), "--public_key", str(keys / "pub.pem")],
        root,
    )


def in_process(manifest: Path, repeat: int) -> tuple[float, float]:
    """Library-level verify (no interpreter start-up or imports): cold (no cache) and warm."""
    from hubrelease.manifest import load_manifest
    from hubrelease.verify import VerifyOptions, verify_manifest

    release = load_manifest(manifest)

    def once(options: VerifyOptions) -> float:
        start = time.perf_counter()
        report = verify_manifest(release, manifest, options=options)
        elapsed = time.perf_counter() - start
        assert not report.has_drift, report.findings[:3]
        return elapsed

    cold = min(once(VerifyOptions(use_cache=False)) for _ in range(repeat))
    once(VerifyOptions())
    warm = min(once(VerifyOptions()) for _ in range(repeat))
    return cold, warm


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    tree_options(parser)
    parser.add_argument(
        "--model-signing", default=shutil.which("model_signing"), help="model_signing CLI path"
    )
    parser.add_argument("--keep", type=Path, help="build the tree here and keep it")
    parser.add_argument("--limit-16", type=float, default=1.88, help="practical limit measured on 16 cores")
    args = parser.parse_args()

    hubrelease = shutil.which("hubrelease") or str(Path(sys.executable).parent / "hubrelease")
    jobs = len(os.sched_getaffinity(0))
    base = args.keep or Path(tempfile.mkdtemp(prefix="verify-bench-"))
    root = base / "release"
    root.mkdir(parents=True, exist_ok=True)
    print(f"building tree in {root} ...", flush=True)
    manifest = make_tree(root, args.big_count, args.big_gib, args.small)
    total = sum(
        p.stat().st_size
        for p in root.rglob("*")
        if p.is_file() and p.name not in ("hubrelease.yaml", "SHA256SUMS")
    )
    names = [line.split("  ", 1)[1].strip() for line in (root / "SHA256SUMS").read_text().splitlines()]
    env = dict(os.environ, CI="1")

    def best(fn: object) -> float:
        return min(fn() for _ in range(args.repeat))  # type: ignore[operator]

    results: dict[str, float] = {}
    timed(["cat", *names[: args.big_count]], root)  # warm the page cache for everybody

    def first_run() -> float:
        shutil.rmtree(root / ".hubrelease", ignore_errors=True)
        return timed([hubrelease, "verify", str(manifest)], root, env)

    results["hubrelease verify (cold, first run)"] = best(first_run)
    results["hubrelease verify (cold, --no-cache)"] = best(
        lambda: timed([hubrelease, "verify", str(manifest), "--no-cache"], root, env)
    )
    results["hubrelease --help (start-up alone)"] = best(lambda: timed([hubrelease, "--help"], root, env))
    timed([hubrelease, "verify", str(manifest)], root, env)  # fill the stat cache
    timed([hubrelease, "verify", str(manifest)], root, env)  # entries are no longer racy
    results["hubrelease verify (warm, stat cache)"] = best(
        lambda: timed([hubrelease, "verify", str(manifest)], root, env)
    )
    results["sha256sum -c"] = best(lambda: timed(["sha256sum", "--quiet", "-c", "SHA256SUMS"], root))
    results["practical limit: openssl per large file + batches"] = best(
        lambda: practical_limit(root, names, jobs)
    )
    results[f"openssl dgst x{jobs} processes"] = best(lambda: parallel_openssl(root, names, jobs))
    lib_cold, lib_warm = in_process(manifest, args.repeat)
    results["library verify_manifest (cold)"] = lib_cold
    results["library verify_manifest (warm)"] = lib_warm
    if args.model_signing:
        (root / "hubrelease.yaml").rename(base / "hubrelease.yaml")
        (root / "SHA256SUMS").rename(base / "SHA256SUMS")
        shutil.rmtree(root / ".hubrelease", ignore_errors=True)
        ms = model_signing_verify(args.model_signing, root, root)
        if ms is not None:
            results["model_signing verify (key)"] = ms
    print(
        f"\ntree: {args.big_count} x {args.big_gib:g} GiB + {args.small} small files = {total / 2**30:.2f} GiB; {jobs} cores"
    )
    for name, seconds in results.items():
        print(f"{name:40s} {seconds:8.3f} s  {total / seconds / 1e9:7.2f} GB/s")
    cold = results["hubrelease verify (cold, first run)"]
    no_cache = results["hubrelease verify (cold, --no-cache)"]
    warm = results["hubrelease verify (warm, stat cache)"]
    limit = results["practical limit: openssl per large file + batches"]
    print("\nratios (higher is better for hubrelease):")
    print(f"  cold (first run) vs practical limit:  {limit / cold:.2f}x (target >= 0.9)")
    print(f"  cold (--no-cache) vs practical limit: {limit / no_cache:.2f}x")
    print(
        f"  cold vs openssl x{jobs} equal shares:   {results[f'openssl dgst x{jobs} processes'] / cold:.2f}x"
    )
    print(f"  cold vs sha256sum -c:                {results['sha256sum -c'] / cold:.2f}x")
    if "model_signing verify (key)" in results:
        print(
            f"  cold vs model_signing verify:        {results['model_signing verify (key)'] / cold:.2f}x (target >= 1.0)"
        )
    print(f"  warm vs cold, whole process:         {cold / warm:.0f}x (target >= 100)")
    print(f"  warm vs cold, library call:          {lib_cold / lib_warm:.0f}x (no interpreter start-up)")
    # A model for more cores: hashing scales with cores on both sides (same bytes, same largest-first
    # makespan), so ours_N = fixed + limit_N * speed, where fixed = what does not shrink with cores
    # (interpreter start-up, imports, manifest load: the CLI's --no-cache time minus the library's
    # cold verify of the already-loaded manifest) and speed = our hashing time over the limit's for
    # the same bytes. The issue measured the limit on 16 cores (17 GB, 2,008 files): 1.88 s.
    fixed = no_cache - lib_cold
    speed = lib_cold / limit
    rate = max(single_core_rate(root / names[0]) for _ in range(args.repeat))
    print(
        f"\nmodel: fixed cost {fixed * 1000:.0f} ms, hashing speed {speed:.2f}x the limit's time "
        f"(one core hashes {rate / 1e9:.2f} GB/s here)"
    )
    for label, limit_n in ((f"{jobs} cores, this tree", limit), ("16 cores, issue's tree", args.limit_16)):
        ours = fixed + limit_n * speed
        print(f"  {label}: limit {limit_n:.2f} s, ours {ours:.2f} s -> predicted ratio {limit_n / ours:.2f}x")
    if not args.keep:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
