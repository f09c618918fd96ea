"""`hubrelease init` vs hashing by hand, and `hubrelease import` vs downloading to hash, in one run.

init: a tree of big shards + many small files. Peers: `sha256sum` over every file (what an author
types today to fill a checksum table) as one process and as `xargs -P <cores>`. init also guesses
roles, reads headers and writes YAML; its second run (stat cache) is what `verify` right after
costs. import: a release on a loopback Hub (LFS shards + small regular files). Peer: `hf download`
then `sha256sum` of the copy, the only other way to get every sha256; the server counts requests
and bytes.

    python bench/onboarding_bench.py [--big-mib 512] [--big-count 2] [--small 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ["HF_HUB_DISABLE_XET"] = "1"  # before huggingface_hub is imported

from huggingface_hub import HfApi

from hubrelease_loopback import LoopbackHub

CHUNK = 1 << 20
REPO = "bench/onboarding"


def make_tree(root: Path, big_count: int, big_mib: int, small: int) -> int:
    block = os.urandom(CHUNK)
    for index in range(big_count):
        with open(root / f"model-{index + 1:05d}-of-{big_count:05d}.safetensors", "wb") as handle:
            handle.write(bytes([index]) + block[1:])
            for _ in range(big_mib - 1):
                handle.write(block)
    (root / "docs").mkdir()
    for index in range(small):
        (root / "docs" / f"note-{index:04d}.md").write_bytes(f"note {index}\n".encode() * 64)
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return time.perf_counter() - start


def init_rows(root: Path, repeat: int, jobs: int) -> dict[str, float]:
    hubrelease = shutil.which("hubrelease") or str(Path(sys.executable).parent / "hubrelease")
    env = dict(os.environ, CI="1")
    out = root.parent / "hubrelease.yaml"
    init = [hubrelease, "init", str(root), "--out", str(out), "--force"]
    files = "find . -type f -not -path './.hubrelease/*' -print0"

    def cold() -> float:
        shutil.rmtree(root / ".hubrelease", ignore_errors=True)
        return timed(init, root, env)

    timed(["sh", "-c", f"{files} | xargs -0 cat > /dev/null"], root)  # page cache warm for everybody
    rows = {"hubrelease init (cold)": min(cold() for _ in range(repeat))}
    timed(init, root, env)  # entries written after the files' mtime are trusted from now on
    rows["hubrelease init (warm, stat cache)"] = min(timed(init, root, env) for _ in range(repeat))
    rows["sha256sum (1 process)"] = min(
        timed(["sh", "-c", f"{files} | xargs -0 sha256sum > /dev/null"], root) for _ in range(repeat)
    )
    rows[f"sha256sum (xargs -P {jobs})"] = min(
        timed(["sh", "-c", f"{files} | xargs -0 -n 64 -P {jobs} sha256sum > /dev/null"], root)
        for _ in range(repeat)
    )
    return rows


def import_rows(tmp: Path, lfs: int, lfs_mib: int, small: int) -> list[tuple[str, int, int, float]]:
    with LoopbackHub(tmp / "hub") as hub:
        folder = tmp / "published"
        folder.mkdir()
        for index in range(lfs):
            (folder / f"model-{index:05d}.safetensors").write_bytes(os.urandom(lfs_mib << 20))
        for index in range(small):
            (folder / f"note-{index:04d}.md").write_bytes(f"note {index}\n".encode() * 64)
        api = HfApi(endpoint=hub.url, token=False)
        api.create_repo(REPO)
        api.upload_folder(repo_id=REPO, folder_path=folder)
        env = dict(
            os.environ, HF_ENDPOINT=hub.url, HF_HOME=str(tmp / "hf"), HF_HUB_DISABLE_TELEMETRY="1", CI="1"
        )
        bin_dir = Path(sys.executable).parent

        def measure(label: str, run: Callable[[], None]) -> tuple[str, int, int, float]:
            hub.requests.clear()
            start = time.perf_counter()
            run()
            elapsed = time.perf_counter() - start
            return label, hub.requests.count(), hub.requests.bytes_in() + hub.requests.bytes_out(), elapsed

        def ours() -> None:
            out = tmp / "imported.yaml"
            command = [str(bin_dir / "hubrelease"), "import", REPO, "--out", str(out), "--force"]
            subprocess.run([*command, "--endpoint", hub.url], env=env, check=True, capture_output=True)

        def peer() -> None:
            copy = tmp / "copy"
            command = [str(bin_dir / "hf"), "download", REPO, "--quiet", "--local-dir", str(copy)]
            subprocess.run(command, env=env, check=True, capture_output=True)
            subprocess.run(
                [
                    "sh",
                    "-c",
                    "find . -type f -not -path './.cache/*' -print0 | xargs -0 sha256sum > /dev/null",
                ],
                cwd=copy,
                check=True,
            )

        return [measure("hubrelease import", ours), measure("hf download + sha256sum", peer)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big-mib", type=int, default=512)
    parser.add_argument("--big-count", type=int, default=2)
    parser.add_argument("--small", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--lfs", type=int, default=8)
    parser.add_argument("--lfs-mib", type=int, default=4)
    parser.add_argument("--regular", type=int, default=200)
    args = parser.parse_args()
    jobs = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory(prefix="onboarding-bench-") as tmp:
        root = Path(tmp) / "release"
        root.mkdir()
        total = make_tree(root, args.big_count, args.big_mib, args.small)
        rows = init_rows(root, args.repeat, jobs)
        imports = import_rows(Path(tmp), args.lfs, args.lfs_mib, args.regular)
    print(
        f"init tree: {args.big_count} x {args.big_mib} MiB + {args.small} small = {total / 2**20:.0f} MiB; {jobs} cores"
    )
    for name, seconds in rows.items():
        print(f"{name:36s} {seconds:8.3f} s  {total / seconds / 1e9:6.2f} GB/s")
    cold = rows["hubrelease init (cold)"]
    for name, seconds in rows.items():
        if name.startswith("sha256sum"):
            print(f"init (cold) / {name} = {cold / seconds:.2f}x")
    print(f"init (warm) / init (cold) = {rows['hubrelease init (warm, stat cache)'] / cold:.3f}x")
    repo_bytes = args.lfs * (args.lfs_mib << 20)
    print(
        f"\nimport repo: {args.lfs} LFS x {args.lfs_mib} MiB + {args.regular} regular files ({repo_bytes / 2**20:.0f} MiB LFS)"
    )
    print(f"{'tool':28} {'requests':>9} {'bytes moved':>14} {'seconds':>8}")
    for label, requests, moved, elapsed in imports:
        print(f"{label:28} {requests:>9} {moved:>14,} {elapsed:>8.2f}")
    (_, our_req, our_bytes, our_s), (_, peer_req, peer_bytes, peer_s) = imports
    print(
        f"peer / import: requests {peer_req / our_req:.1f}x, bytes {peer_bytes / max(our_bytes, 1):.0f}x, "
        f"seconds {peer_s / our_s:.1f}x"
    )


if __name__ == "__main__":
    main()
