"""Read a folder of conversation shards (parquet or JSONL) once: counts, tallies, digests.

Each shard is scanned in batches (bounded memory) and, with several shards, in worker processes.
The content digest is re-shard invariant: every row is encoded as canonical JSON (keys sorted,
``(",", ":")`` separators, UTF-8, null top-level fields dropped), each line is hashed, and the
dataset digest is sha256 over the concatenated 32-byte row digests in shard-name order. Anyone can
recompute it with ``datasets`` or pyarrow and a few lines of Python. A two-level hash (rather than one
stream) lets shards be hashed in parallel. ``datasets``' own fingerprint is not used: it hashes
pickled state and file mtimes, not content.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hubrelease.errors import FormatError, HubReleaseError, InputError
from hubrelease.hashing import sha256_file
from hubrelease.progress import NULL_PROGRESS, Progress

TALLY_COLUMNS = ("category", "license", "generator")
SHARD_SUFFIXES = (".parquet", ".jsonl")
_BATCH_ROWS = 1024
_EXPECTED_MESSAGES = "list<struct<role: string, content: string>>"


@dataclass(frozen=True)
class ShardScan:
    """What one shard contributes to the summary."""

    path: str
    """Shard path relative to the data folder (POSIX)."""
    rows: int
    file_bytes: int
    sha256: str
    arrow_bytes: int
    """In-memory Arrow size, which ``datasets`` reports as num_bytes."""
    completion_tokens: int
    schema: pa.Schema
    """Arrow schema (without metadata); every shard must agree."""
    tallies: dict[str, dict[str, int]] = field(default_factory=dict)
    row_digests: bytes = b""


@dataclass(frozen=True)
class _Failure:
    """A HubReleaseError crossing the process boundary (its kwargs do not survive pickling)."""

    kind: type[HubReleaseError]
    message: str
    path: str | None
    line: int | None
    field: str | None

    def reraise(self) -> None:
        raise self.kind(self.message, path=self.path, line=self.line, field=self.field)


def _is_string(kind: pa.DataType) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind))


def _check_schema(schema: pa.Schema, path: Path, count_column: str | None) -> None:
    """Refuse a shard whose columns cannot be a conversation dataset, naming the column."""
    if "messages" not in schema.names:
        raise FormatError(f"column missing; expected {_EXPECTED_MESSAGES}", path=path, field="messages")
    kind = schema.field("messages").type
    ok = (pa.types.is_list(kind) or pa.types.is_large_list(kind)) and pa.types.is_struct(kind.value_type)
    if ok:
        members = {
            kind.value_type.field(i).name: kind.value_type.field(i).type
            for i in range(kind.value_type.num_fields)
        }
        ok = all(name in members and _is_string(members[name]) for name in ("role", "content"))
    if not ok:
        raise FormatError(f"expected {_EXPECTED_MESSAGES}, got {kind}", path=path, field="messages")
    for name in TALLY_COLUMNS:
        if name in schema.names and not _is_string(schema.field(name).type):
            raise FormatError(f"expected string, got {schema.field(name).type}", path=path, field=name)
    if (
        count_column
        and count_column in schema.names
        and not pa.types.is_integer(schema.field(count_column).type)
    ):
        raise FormatError(
            f"expected integer, got {schema.field(count_column).type}", path=path, field=count_column
        )


def _jsonl_table(path: Path) -> pa.Table:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise FormatError(f"malformed JSON line: {exc.msg}", path=path, line=number) from None
            messages = row.get("messages") if isinstance(row, dict) else None
            if not isinstance(messages, list) or not all(
                isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
                for m in messages
            ):
                raise FormatError(
                    "expected a list of {role, content} strings", path=path, line=number, field="messages"
                )
            rows.append(row)
    if not rows:
        raise FormatError("empty shard: no rows", path=path)
    try:
        return pa.Table.from_pylist(rows)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
        raise FormatError(f"rows disagree on column types: {exc}", path=path) from None


def _batches(path: Path) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    if path.suffix == ".jsonl":
        table = _jsonl_table(path)
        return table.schema, iter(table.to_batches(max_chunksize=_BATCH_ROWS))
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise FormatError(f"not a readable parquet file ({exc})", path=path) from None
    if parquet.metadata.num_rows == 0:
        raise FormatError("empty shard: no rows", path=path)
    return parquet.schema_arrow, parquet.iter_batches(batch_size=_BATCH_ROWS)


def _row_error(path: Path, row: int, message: str, column: str) -> FormatError:
    # Parquet has no lines: the 1-based row number goes in the message, the column in the field.
    return FormatError(f"row {row}: {message}", path=path, field=column)


def _scan(path: Path, relative: str, count_column: str, tokenizer_path: str | None) -> ShardScan:
    schema, batches = _batches(path)
    _check_schema(schema, path, count_column)
    tokenizer = None
    if tokenizer_path is not None:
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(tokenizer_path)
    elif count_column not in schema.names:
        raise FormatError(
            "no stored token counts; pass --tokenizer tokenizer.json to count assistant tokens",
            path=path,
            field=count_column,
        )
    encoder = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    tallies: dict[str, Counter[str]] = {name: Counter() for name in TALLY_COLUMNS if name in schema.names}
    digests = bytearray()
    rows, tokens, arrow_bytes = 0, 0, 0
    for batch in batches:
        arrow_bytes += batch.nbytes
        if tokenizer is None:
            counts = batch.column(count_column)
            if counts.null_count or pc.min(counts).as_py() < 0:
                first = next(i for i, v in enumerate(counts.to_pylist()) if v is None or v < 0)
                raise _row_error(path, rows + first + 1, "token count is missing or negative", count_column)
            tokens += pc.sum(counts).as_py() or 0
        assistant: list[str] = []
        for offset, row in enumerate(batch.to_pylist()):
            messages = row.get("messages")
            if not messages or any(m is None or m["role"] is None or m["content"] is None for m in messages):
                raise _row_error(
                    path, rows + offset + 1, "messages is empty or has a null role/content", "messages"
                )
            assistant.extend(m["content"] for m in messages if m["role"] == "assistant")
            line = encoder.encode({k: v for k, v in row.items() if v is not None}) + "\n"
            digests += hashlib.sha256(line.encode("utf-8")).digest()
        if tokenizer is not None:
            tokens += sum(len(e.ids) for e in tokenizer.encode_batch(assistant, add_special_tokens=False))
        for name, counter in tallies.items():
            for item in pc.value_counts(batch.column(name)).to_pylist():
                counter[item["values"] if item["values"] is not None else "unspecified"] += item["counts"]
        rows += batch.num_rows
    return ShardScan(
        path=relative,
        rows=rows,
        file_bytes=path.stat().st_size,
        sha256=sha256_file(path),
        arrow_bytes=arrow_bytes,
        completion_tokens=tokens,
        schema=schema.remove_metadata(),
        tallies={name: dict(counter) for name, counter in tallies.items()},
        row_digests=bytes(digests),
    )


def scan_shard(path: Path, relative: str, count_column: str, tokenizer: str | None) -> ShardScan | _Failure:
    """Scan one shard; in a worker process errors come back as values."""
    try:
        return _scan(path, relative, count_column, tokenizer)
    except HubReleaseError as exc:
        return _Failure(type(exc), exc.message, exc.path, exc.line, exc.field)


def find_shards(data: Path) -> list[Path]:
    """Parquet and JSONL files under ``data`` in path order, skipping hidden folders and files."""
    if not data.is_dir():
        raise InputError("expected a folder of .parquet or .jsonl shards", path=data)
    shards = sorted(
        p
        for p in data.rglob("*")
        if p.suffix in SHARD_SUFFIXES
        and p.is_file()
        and not any(part.startswith(".") for part in p.relative_to(data).parts)
    )
    if not shards:
        raise InputError("no .parquet or .jsonl shards found", path=data)
    return shards


def scan_shards(
    data: Path,
    *,
    count_column: str = "completion_tokens",
    tokenizer: Path | None = None,
    jobs: int | None = None,
    progress: Progress = NULL_PROGRESS,
) -> tuple[list[ShardScan], list[dict[str, Any]]]:
    """Scan every shard (in ``jobs`` processes when there are several); return the scans and shared columns."""
    shards = find_shards(data)
    workers = min(jobs or os.cpu_count() or 1, len(shards))
    args = [
        (p, p.relative_to(data).as_posix(), count_column, str(tokenizer) if tokenizer else None)
        for p in shards
    ]
    progress.start(sum(p.stat().st_size for p in shards), "scanning shards")
    results: list[ShardScan | _Failure] = []
    if workers == 1:
        for arg in args:
            results.append(scan_shard(*arg))
            progress.advance(arg[0].stat().st_size)
    else:
        # spawn, not fork: pyarrow and tokenizers keep thread pools that a forked child must not inherit.
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            for arg, result in zip(args, pool.map(scan_shard, *zip(*args, strict=True)), strict=True):
                results.append(result)
                progress.advance(arg[0].stat().st_size)
    progress.finish()
    scans = []
    for result in results:
        if isinstance(result, _Failure):
            result.reraise()
        else:
            scans.append(result)
    return scans, _check_same_features(scans, data)


def _check_same_features(scans: Sequence[ShardScan], data: Path) -> list[dict[str, Any]]:
    """The shards' columns in ``datasets`` YAML form; shards must agree (list item names may differ)."""
    from datasets import Features  # heavy import: parent process only

    features: list[list[dict[str, Any]]] = [
        Features.from_arrow_schema(s.schema)._to_yaml_list() for s in scans
    ]
    first = scans[0]
    for scan, columns in zip(scans[1:], features[1:], strict=True):
        if columns != features[0]:
            theirs, ours = ([c["name"] for c in f] for f in (columns, features[0]))
            what = f"columns {theirs} differ from" if theirs != ours else "column types differ from"
            raise FormatError(f"{what} {first.path}'s {ours}", path=data / scan.path)
    return features[0]
