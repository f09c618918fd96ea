"""Dataset card summary at seed-000 scale: 108,729 conversations, 100,014,884 stored completion tokens.

Compares, in one run and each in a fresh process (so peak RSS is its own):
  * hubrelease ``summarise`` (counts, tallies, per-shard sha256 and the re-shard-invariant content digest);
  * the peer: ``datasets.load_dataset("parquet")`` plus a column sum and value counts (no content digest;
    it converts the shards to an Arrow cache first);
and tokenizer throughput of the batched ``encode_batch`` path against per-text ``encode``, with a BPE
tokenizer.json trained locally by ``tokenizers`` (no downloads).

    python bench/dataset_card_bench.py [--workdir /tmp/hubrelease-bench]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

ROWS = 108_729
TOKENS = 100_014_884
SHARDS = 8
CHARS_PER_TOKEN = 4
CATEGORIES = ["chat", "code", "math", "stem"]


def _base_text(rng: np.random.Generator, size: int = 8_000_000) -> str:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocab = ["".join(rng.choice(letters, rng.integers(2, 9))) for _ in range(3000)]
    words = rng.choice(len(vocab), size // 5)
    return " ".join(vocab[i] for i in words)[:size]


def generate(folder: Path) -> None:
    """Eight parquet shards whose assistant turns are ~4 characters per stored token (~400 MB of text)."""
    if (folder / "done").exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    counts = rng.integers(100, 1740, ROWS)
    diff = TOKENS - int(counts.sum())
    counts += diff // ROWS
    counts[: diff % ROWS] += 1
    assert int(counts.sum()) == TOKENS
    base = _base_text(rng)
    per_shard = -(-ROWS // SHARDS)
    for shard in range(SHARDS):
        start, stop = shard * per_shard, min(ROWS, (shard + 1) * per_shard)
        offsets = rng.integers(0, len(base) - 1740 * CHARS_PER_TOKEN, stop - start)
        messages = [
            [
                {"role": "user", "content": base[o : o + 300]},
                {"role": "assistant", "content": base[o + 300 : o + 300 + int(c) * CHARS_PER_TOKEN]},
            ]
            for o, c in zip(offsets, counts[start:stop], strict=True)
        ]
        table = pa.table(
            {
                "messages": messages,
                "category": [CATEGORIES[i % 4] for i in range(start, stop)],
                "license": ["cc-by-4.0"] * (stop - start),
                "generator": ["Ornith-1.5-35B-A3B"] * (stop - start),
                "completion_tokens": counts[start:stop],
            }
        )
        pq.write_table(table, folder / f"train-{shard:05d}-of-{SHARDS:05d}.parquet")
    (folder / "done").write_text("ok\n")


def _peak_mib() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, children) / 1024


def measure(kind: str, data: Path, cache: Path) -> dict[str, object]:
    """One timed run in this (fresh) process."""
    start = time.perf_counter()
    if kind == "hubrelease":
        from hubrelease.builders.dataset_card import summarise

        summary = summarise(data)
        result: dict[str, object] = {"tokens": summary.completion_tokens, "rows": summary.conversations}
    else:
        import datasets
        import pyarrow.compute as pc

        datasets.disable_progress_bars()
        files = sorted(str(p) for p in data.glob("*.parquet"))
        ds = datasets.load_dataset("parquet", data_files=files, split="train", cache_dir=str(cache))
        result = {"tokens": pc.sum(ds.data.column("completion_tokens")).as_py(), "rows": ds.num_rows}
        ds.data.column("category").value_counts()
    result.update(seconds=time.perf_counter() - start, peak_mib=_peak_mib())
    return result


def _in_subprocess(kind: str, data: Path, cache: Path) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, __file__, "--measure", kind, "--data", str(data), "--cache", str(cache)],
        check=True,
        capture_output=True,
        text=True,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def tokenizer_throughput(data: Path, workdir: Path) -> dict[str, float]:
    """tokens/s of encode_batch (what summarise uses) vs a per-text encode loop, on 2,000 assistant turns."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    first = pq.ParquetFile(next(iter(sorted(data.glob("*.parquet")))))
    rows = first.read_row_group(0, columns=["messages"]).column("messages").to_pylist()[:2000]
    texts = [m[1]["content"] for m in rows]
    path = workdir / "tokenizer.json"
    if not path.exists():
        tokenizer = Tokenizer(models.BPE(unk_token="[UNK]"))
        tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
        tokenizer.train_from_iterator(
            texts[:500], trainers.BpeTrainer(vocab_size=8000, special_tokens=["[UNK]"])
        )
        tokenizer.save(str(path))
    tokenizer = Tokenizer.from_file(str(path))
    start = time.perf_counter()
    batched = sum(len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False))
    batch_s = time.perf_counter() - start
    start = time.perf_counter()
    single = sum(len(tokenizer.encode(t, add_special_tokens=False).ids) for t in texts)
    single_s = time.perf_counter() - start
    assert batched == single
    return {"tokens": batched, "batched_tok_s": batched / batch_s, "single_tok_s": single / single_s}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "hubrelease-bench")
    parser.add_argument("--measure")
    parser.add_argument("--data", type=Path)
    parser.add_argument("--cache", type=Path)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.data, args.cache)))
        return
    data = args.workdir / "data"
    generate(data)
    size = sum(p.stat().st_size for p in data.glob("*.parquet"))
    print(
        f"dataset: {ROWS:,} rows, {TOKENS:,} stored tokens, {SHARDS} shards, {size / 2**20:.0f} MiB parquet"
    )
    cache = args.workdir / "hf-cache"
    results = {}
    for kind in ("hubrelease", "datasets"):
        if kind == "datasets":
            subprocess.run(["rm", "-rf", str(cache)], check=True)  # cold: no Arrow cache from a previous run
        results[kind] = _in_subprocess(kind, data, cache)
        r = results[kind]
        assert r["tokens"] == TOKENS and r["rows"] == ROWS, r
        print(f"{kind:14s} {r['seconds']:6.2f} s  peak RSS {r['peak_mib']:6.0f} MiB")
    one = args.workdir / "one-shard"
    one.mkdir(exist_ok=True)
    first = sorted(data.glob("*.parquet"))[0]
    if not (one / first.name).exists():
        (one / first.name).symlink_to(first)
    small = _in_subprocess("hubrelease", one, cache)
    print(
        f"hubrelease, 1 of {SHARDS} shards: {small['seconds']:.2f} s  peak RSS {small['peak_mib']:.0f} MiB (memory is per batch)"
    )
    ours, peer = results["hubrelease"], results["datasets"]
    print(
        f"ratio datasets.load_dataset / hubrelease: {float(peer['seconds']) / float(ours['seconds']):.2f}x time"
    )
    tok = tokenizer_throughput(data, args.workdir)
    print(
        f"tokenizer on {tok['tokens']:,.0f} tokens: encode_batch {tok['batched_tok_s']:,.0f} tok/s, "
        f"per-text encode {tok['single_tok_s']:,.0f} tok/s, ratio {tok['batched_tok_s'] / tok['single_tok_s']:.2f}x"
    )
    print(f"machine: {os.cpu_count()} cores, python {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
