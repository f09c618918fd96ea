"""Generated-conversation datasets as a generation run writes them: parquet or JSONL shards, and a tokenizer.

Rows are deterministic in their index, so tests can state totals without reading the files back.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

CATEGORIES = ("chat", "code", "math", "stem")
WORDS = ("the", "proof", "returns", "a", "value", "loop", "sum", "of", "cells", "energy")


def conversation(index: int, *, counts: bool = True) -> dict[str, Any]:
    """Row ``index``: a user turn and an assistant turn of ``index % 7 + 3`` words (its stored count)."""
    words = index % 7 + 3
    answer = " ".join(WORDS[(index + k) % len(WORDS)] for k in range(words))
    row: dict[str, Any] = {
        "messages": [
            {"role": "user", "content": f"question {index}"},
            {"role": "assistant", "content": answer},
        ],
        "category": CATEGORIES[index % len(CATEGORIES)],
        "license": "cc-by-4.0" if index % 5 else "odc-by",
        "generator": "ornith-1.5" if index % 3 else "ornith-1.5-nvfp4",
    }
    if counts:
        row["completion_tokens"] = words
    return row


def conversations(count: int, *, counts: bool = True) -> list[dict[str, Any]]:
    """Rows 0..count-1."""
    return [conversation(i, counts=counts) for i in range(count)]


def write_parquet_shards(folder: Path, rows: Sequence[dict[str, Any]], shards: int = 2) -> list[Path]:
    """``rows`` split into ``shards`` files named as ``datasets.push_to_hub`` names them."""
    folder.mkdir(parents=True, exist_ok=True)
    size = -(-len(rows) // shards)
    paths = []
    for i in range(shards):
        path = folder / f"train-{i:05d}-of-{shards:05d}.parquet"
        pq.write_table(pa.Table.from_pylist(list(rows[i * size : (i + 1) * size])), path)
        paths.append(path)
    return paths


def write_jsonl_shard(path: Path, rows: Sequence[dict[str, Any]]) -> Path:
    """One JSON object per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def write_tokenizer(path: Path, words: Sequence[str] = WORDS) -> Path:
    """A word-level tokenizer.json built locally (one token per whitespace-separated word, no downloads)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0, **{word: i + 1 for i, word in enumerate(words)}}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.save(str(path))
    return path
