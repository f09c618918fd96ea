"""The input screen (``hubrelease.safe_parse``) against plain ``json.loads`` on the same text, in one run.

Times, best of R, in this process:
  - the cost on good input: a bench_serving-like JSONL file (N lines, each with per-request arrays
    of integers and floats, as ``--output-details`` writes them) parsed line by line by
    ``json.loads`` (the peer) and by ``safe_parse.parse_json`` (digit hook, depth, key and surrogate walk);
  - the cost of refusing hostile input: a 5,000-digit integer, 100,000-deep nesting, a lone
    surrogate (``parse_json``), and a safetensors header of 3,000 shape dimensions of 4,200 digits
    (``parse_safetensors_header``); the peer is ``json.loads`` of the same text, which is how main
    met it (``ValueError`` / ``RecursionError``: exit 3, or for the shape header a parse that
    converts every dimension, then a product of millions of digits that is not timed here).
Prints seconds and the screen / peer ratio.

Usage: python bench/input_screen_bench.py [--lines 2000] [--requests 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import struct
import time
from collections.abc import Callable
from pathlib import Path

from hubrelease.errors import HubReleaseError
from hubrelease.formats.safetensors_header import parse_safetensors_header
from hubrelease.safe_parse import parse_json


def best(repeat: int, call: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        with contextlib.suppress(HubReleaseError, ValueError, RecursionError):  # refusing is the work
            call()
        times.append(time.perf_counter() - start)
    return min(times)


def jsonl(lines: int, requests: int) -> list[str]:
    rng = random.Random(0)
    out = []
    for index in range(lines):
        record = {
            "tag": f"run-{index}",
            "completed": requests,
            "output_lens": [rng.randint(1, 4096) for _ in range(requests)],
            "input_lens": [rng.randint(1, 8192) for _ in range(requests)],
            "ttfts": [rng.random() for _ in range(requests)],
            "itls": [[rng.random() for _ in range(4)] for _ in range(requests)],
            "server_info": {"model_path": "acme/target", "speculative_num_steps": 3},
        }
        out.append(json.dumps(record))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    text = jsonl(args.lines, args.requests)
    size = sum(len(line) + 1 for line in text)
    peer = best(args.repeat, lambda: [json.loads(line) for line in text])
    ours = best(args.repeat, lambda: [parse_json(line) for line in text])
    print(f"good JSONL, {args.lines:,} lines, {size / 2**20:.1f} MiB:")
    print(f"  json.loads {peer:.3f} s   parse_json {ours:.3f} s   ratio {ours / peer:.2f}")

    header = '{"a":{"dtype":"F32","shape":[' + ",".join(["9" * 4200] * 3000) + '],"data_offsets":[0,4]}}'
    raw = header.encode()
    framed = struct.pack("<Q", len(raw)) + raw + b"\0" * 4
    cases = {
        "5,000-digit integer": '{"a": ' + "9" * 5000 + "}",
        "100,000-deep array": "[" * 100_000 + "]" * 100_000,
        "lone surrogate": '{"label": "\\ud800"}',
    }
    print("refusing hostile input (the peer: json.loads, which main ran into):")
    for name, case in cases.items():
        peer = best(args.repeat, lambda: json.loads(case))  # noqa: B023  # called before the next case
        ours = best(args.repeat, lambda: parse_json(case))  # noqa: B023
        print(f"  {name:38s} json.loads {peer * 1000:8.2f} ms   screen {ours * 1000:8.2f} ms")
    peer = best(1, lambda: json.loads(raw))
    ours = best(args.repeat, lambda: parse_safetensors_header(framed, len(framed), Path("h.safetensors")))
    print(
        f"  {'3,000 shape dims of 4,200 digits':38s} json.loads {peer * 1000:8.2f} ms   screen {ours * 1000:8.2f} ms"
        " (main then multiplied the dimensions)"
    )


if __name__ == "__main__":
    main()
