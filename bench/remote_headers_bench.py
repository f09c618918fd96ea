"""Header-only `inspect hf://` vs downloading the files with `hf_hub_download` (then inspecting locally).

A third row shows what ``HfFileSystem`` costs just to read the first 64 KiB of each file (block size
64 KiB), a lower bound for a header reader built on it. Four models on a loopback Hub: a 5-shard ik_llama.cpp GGUF set, the same with a 250k-token
vocabulary in shard 1 (seed 001's target in miniature), a GGUF that is nearly all 250k-token
vocabulary, a sharded safetensors drafter. For each, the server's request log counts requests and
body bytes of `hubrelease inspect hf://...` (range reads) and of `hf_hub_download` of every file of
the model followed by a local `inspect` (the peer, in the same run); the two summaries must agree.

    python bench/remote_headers_bench.py [--rows 4096] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

os.environ["HF_HUB_DISABLE_XET"] = "1"  # before huggingface_hub is imported: the loopback Hub speaks LFS here
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from huggingface_hub import HfFileSystem, hf_hub_download

from hubrelease.formats.summary import summarize
from hubrelease.hub.remote_headers import INITIAL_READ
from hubrelease.hub.remote_headers import summarize as summarize_remote
from hubrelease_loopback import LoopbackHub
from tests.factories.drafters import write_vocab_gguf
from tests.factories.hub import api_for, upload_files
from tests.factories.split_models import write_ik_split_target, write_sharded_safetensors


def measure(
    hub: LoopbackHub, run: Callable[[], dict[str, object]], repeat: int
) -> tuple[int, int, float, dict[str, object]]:
    """Median seconds over ``repeat`` runs; requests and bytes out of the last run (they do not vary)."""
    times = []
    for _ in range(repeat):
        hub.requests.clear()
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    settled = -1
    while settled != hub.requests.count():  # the server logs a request just after answering it
        settled = hub.requests.count()
        time.sleep(0.1)
    return hub.requests.count(), hub.requests.bytes_out(), statistics.median(times), result


def comparable(summary: dict[str, object]) -> dict[str, object]:
    files = [{**f, "path": Path(f["path"]).name} for f in summary["files"]]  # type: ignore[attr-defined]
    rest = {k: v for k, v in summary.items() if k not in ("files", "requests", "fetched_bytes")}
    return {**rest, "files": files}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--rows", type=int, default=4096, help="rows per ik tensor (shard size scales with it)"
    )
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"python {platform.python_version()}, huggingface_hub {version('huggingface_hub')}, {platform.machine()}, {os.cpu_count()} cores"
    )
    with tempfile.TemporaryDirectory() as tmp, LoopbackHub(Path(tmp) / "hub") as hub:
        root = Path(tmp)
        api = api_for(hub)
        models: list[tuple[str, str, list[Path], str]] = []
        shards = write_ik_split_target(root / "split", rows=args.rows)
        upload_files(api, "bench/split", {p.name: p.read_bytes() for p in shards})
        models.append(("5-shard ik GGUF set", "bench/split", shards, shards[0].name))
        seed = write_ik_split_target(root / "seed", rows=args.rows, vocab=250_000)
        upload_files(api, "bench/seed", {p.name: p.read_bytes() for p in seed})
        models.append(("5-shard set, 250k vocabulary", "bench/seed", seed, seed[2].name))
        (root / "vocab").mkdir()
        vocab = write_vocab_gguf(root / "vocab" / "target.gguf", 250_000, type_id=144)
        upload_files(api, "bench/vocab", {vocab.name: vocab.read_bytes()})
        models.append(("GGUF, 250k-token vocabulary", "bench/vocab", [vocab], vocab.name))
        drafter = write_sharded_safetensors(root / "st" / "drafter")
        files = sorted(drafter.iterdir())
        upload_files(api, "bench/st", {p.name: p.read_bytes() for p in files})
        models.append(("sharded safetensors (index)", "bench/st", files, "model.safetensors.index.json"))

        header = f"{'model':30} {'MiB':>8} {'tool':26} {'requests':>8} {'bytes':>13} {'seconds':>8}"
        print(header)
        for label, repo, paths, entry in models:
            size = sum(p.stat().st_size for p in paths)

            def remote(repo: str = repo, entry: str = entry) -> dict[str, object]:
                return summarize_remote(api, f"hf://{repo}/{entry}")

            def download(
                repo: str = repo, paths: list[Path] = paths, entry: str = entry
            ) -> dict[str, object]:
                folder = Path(tempfile.mkdtemp(dir=tmp))
                for p in paths:
                    hf_hub_download(repo, p.name, local_dir=folder, endpoint=hub.url, token=False)
                return summarize(folder / entry)

            def fsspec(repo: str = repo, paths: list[Path] = paths) -> dict[str, object]:
                fs = HfFileSystem(endpoint=hub.url, token=False, skip_instance_cache=True)
                for p in paths:
                    with fs.open(f"{repo}/{p.name}", "rb", block_size=INITIAL_READ) as handle:
                        handle.read(INITIAL_READ)
                return {}

            ours = measure(hub, remote, args.repeat)
            peer = measure(hub, download, args.repeat)
            first_reads = measure(hub, fsspec, args.repeat)
            assert comparable(ours[3]) == comparable(peer[3]), label
            rows = (
                ("inspect hf:// (ranges)", ours),
                ("hf_hub_download + inspect", peer),
                ("HfFileSystem 1st 64 KiB", first_reads),
            )
            for tool, row in rows:
                print(f"{label:30} {size / 2**20:>8.1f} {tool:26} {row[0]:>8} {row[1]:>13,} {row[2]:>8.3f}")
            print(
                f"{'':30} {'':>8} {'ratio download/ranges':26} {peer[0] / ours[0]:>7.1f}x {peer[1] / ours[1]:>12.0f}x "
                f"{peer[2] / ours[2]:>7.1f}x   (ranges read {100 * ours[1] / size:.2f}% of the bytes)"
            )


if __name__ == "__main__":
    main()
