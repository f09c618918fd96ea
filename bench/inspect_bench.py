"""Header parse of a 250k-token-vocabulary GGUF: hubrelease's reader vs gguf.GGUFReader (target >= 10x).

Two files: one with a mainline tensor type (both readers succeed) and one with an ik_llama.cpp type
(IQ4_KS, id 144), which GGUFReader rejects after parsing the metadata.

    python bench/inspect_bench.py [--tokens 250000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import gguf

from hubrelease.formats.gguf_header import read_gguf
from tests.factories.drafters import write_vocab_gguf


def _ours(path: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        read_gguf(path)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _peer(path: Path) -> tuple[float, str]:
    start = time.perf_counter()
    try:
        reader = gguf.GGUFReader(path)
        outcome = f"ok ({len(reader.fields)} fields)"
    except ValueError as exc:
        outcome = f"raised ValueError: {exc}"
    return time.perf_counter() - start, outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokens", type=int, default=250_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, gguf {version('gguf')}, {platform.machine()}")
    with tempfile.TemporaryDirectory() as tmp:
        for label, type_id in (("mainline F32 tensor", 0), ("ik IQ4_KS tensor (id 144)", 144)):
            path = write_vocab_gguf(Path(tmp) / f"vocab-{type_id}.gguf", args.tokens, type_id=type_id)
            ours = _ours(path, args.repeat)
            summary = read_gguf(path)
            peer, outcome = _peer(path)
            print(
                f"\n{label}: {path.stat().st_size / 2**20:.1f} MiB, {args.tokens} tokens + {args.tokens} merges"
            )
            print(
                f"  hubrelease read_gguf  median {ours * 1000:8.1f} ms  composition {summary.composition()}"
            )
            print(f"  gguf.GGUFReader       once   {peer * 1000:8.1f} ms  {outcome}")
            print(f"  ratio                 {peer / ours:8.1f}x")


if __name__ == "__main__":
    main()
