"""Read a folder of conversation shards (parquet or JSONL) once: counts, tallies, digests.

Shards are read in path order, in record batches of bounded size, with only vectorised Arrow work per
batch. ``datasets``' own fingerprint is not used as a digest: it hashes pickled state and file mtimes,
not content; the content digest is ``content_digest``'s, which survives re-sharding.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hubrelease.builders.content_digest import ContentDigest
from hubrelease.errors import FormatError, InputError
from hubrelease.evaluation.records import read_records
from hubrelease.hashing import sha256_file
from hubrelease.progress import NULL_PROGRESS, Progress

TALLY_COLUMNS = ("category", "license", "generator")
SHARD_SUFFIXES = (".parquet", ".jsonl")
_BATCH_ROWS = 4096

if TYPE_CHECKING:
    from tokenizers import Tokenizer
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
    for record in read_records(path):
        messages = record.data.get("messages")
        if not isinstance(messages, list) or not all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in messages
        ):
            raise record.error("expected a list of {role, content} strings", "messages")
        rows.append(record.data)
    if not rows:
        raise FormatError("empty shard: no rows", path=path)
    # Columns by first appearance over all rows: Table.from_pylist takes the keys of row 1 only and
    # would silently drop a key that row 1 lacks, from the tallies and the content digest alike.
    names = list(dict.fromkeys(key for row in rows for key in row))
    try:
        return pa.Table.from_pydict({name: [row.get(name) for row in rows] for name in names})
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as exc:
        raise FormatError(f"rows disagree on column types: {_one_line(exc)}", path=path) from None


def _batches(path: Path) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    if path.suffix == ".jsonl":
        table = _jsonl_table(path)
        return table.schema, iter(table.to_batches(max_chunksize=_BATCH_ROWS))
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise FormatError(f"not a readable parquet file ({_one_line(exc)})", path=path) from None
    if parquet.metadata.num_rows == 0:
        raise FormatError("empty shard: no rows", path=path)
    return parquet.schema_arrow, _checked(path, parquet.iter_batches(batch_size=_BATCH_ROWS))


def _checked(path: Path, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    # A corrupt page surfaces only when its batch is decoded (ArrowInvalid, or OSError from thrift).
    try:
        yield from batches
    except (pa.ArrowInvalid, OSError) as exc:
        raise FormatError(f"corrupt parquet data ({_one_line(exc)})", path=path) from None


def _one_line(exc: Exception) -> str:
    # pyarrow's messages can span lines (a thrift error ends in "\n)"): the CLI prints one line.
    return " ".join(str(exc).split())


def _row_error(path: Path, row: int, message: str, column: str) -> FormatError:
    # Parquet has no lines: the 1-based row number goes in the message, the column in the field.
    return FormatError(f"row {row}: {message}", path=path, field=column)


def _check_messages(messages: pa.Array, path: Path, first_row: int) -> tuple[pa.Array, pa.Array]:
    """Every row needs at least one message with a role and content; returns the flat (role, content)."""
    lengths = messages.value_lengths()
    empty = pc.or_kleene(pc.is_null(lengths), pc.equal(lengths, 0))
    if pc.any(empty).as_py():
        row = first_row + pc.index(empty, True).as_py()
        raise _row_error(path, row, "messages is null or empty", "messages")
    flat = pc.list_flatten(messages)
    fields = dict(
        zip([flat.type.field(i).name for i in range(flat.type.num_fields)], flat.flatten(), strict=True)
    )
    for name in ("role", "content"):
        if fields[name].null_count:
            item = pc.index(pc.is_null(fields[name]), True).as_py()
            row = first_row + pc.list_parent_indices(messages)[item].as_py()
            raise _row_error(path, row, f"a message has no {name}", "messages")
    return fields["role"], fields["content"]


def _scan(
    path: Path,
    relative: str,
    count_column: str,
    tokenizer: Tokenizer | None,
    digest: ContentDigest,
    *,
    file_sha256: Future[str],
) -> ShardScan:
    schema, batches = _batches(path)
    _check_schema(schema, path, count_column)
    if tokenizer is None and count_column not in schema.names:
        raise FormatError(
            "no stored token counts; pass --tokenizer tokenizer.json to count assistant tokens",
            path=path,
            field=count_column,
        )
    tallies: dict[str, Counter[str]] = {name: Counter() for name in TALLY_COLUMNS if name in schema.names}
    rows, tokens, arrow_bytes = 0, 0, 0
    for batch in batches:
        arrow_bytes += batch.nbytes
        role, content = _check_messages(batch.column("messages"), path, rows + 1)
        if tokenizer is None:
            counts = batch.column(count_column)
            bad = pc.or_kleene(pc.is_null(counts), pc.less(counts, 0))
            if pc.any(bad).as_py():
                row = rows + 1 + pc.index(bad, True).as_py()
                raise _row_error(path, row, "token count is missing or negative", count_column)
            tokens += pc.sum(counts).as_py() or 0
        else:
            # encode_batch tokenizes in parallel on all cores (Rust threads), so no process pool is needed.
            texts = pc.filter(content, pc.equal(role, "assistant")).to_pylist()
            tokens += sum(len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False))
        for name, counter in tallies.items():
            try:  # parquet stores strings as bytes: a damaged page can hold invalid UTF-8
                values = pc.value_counts(batch.column(name)).to_pylist()
            except UnicodeDecodeError as exc:
                raise FormatError(
                    f"corrupt parquet data (invalid UTF-8: {exc.reason})", path=path, field=name
                ) from None
            for item in values:
                counter[item["values"] if item["values"] is not None else "unspecified"] += item["counts"]
        try:
            digest.update(batch)
        except FormatError as exc:
            raise FormatError(exc.message, path=path, field=exc.field) from None
        rows += batch.num_rows
    return ShardScan(
        path=relative,
        rows=rows,
        file_bytes=path.stat().st_size,
        sha256=file_sha256.result(),
        arrow_bytes=arrow_bytes,
        completion_tokens=tokens,
        schema=schema.remove_metadata(),
        tallies={name: dict(counter) for name, counter in tallies.items()},
    )


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


@dataclass(frozen=True)
class ScanResult:
    """All shards of a folder, in order, with their shared columns and the content digest."""

    shards: list[ShardScan]
    features: list[dict[str, Any]]
    """Columns in ``datasets`` YAML form."""
    content_sha256: str
    """Version-1 digest of ``content_digest`` over every row, shards in path order."""


def scan_shards(
    data: Path,
    *,
    count_column: str = "completion_tokens",
    tokenizer: Path | None = None,
    progress: Progress = NULL_PROGRESS,
) -> ScanResult:
    """Scan every shard in path order (one pass each, batches of bounded size)."""
    shards = find_shards(data)
    loaded = None
    if tokenizer is not None:
        from tokenizers import Tokenizer

        try:
            loaded = Tokenizer.from_file(str(tokenizer))
        except Exception as exc:  # tokenizers raises a bare Exception for unreadable files
            raise InputError(f"not a tokenizer.json ({exc})", path=tokenizer) from None
    digest = ContentDigest()
    progress.start(sum(p.stat().st_size for p in shards), "scanning shards")
    scans = []
    # File digests run on a second thread (hashlib and Arrow release the GIL), overlapping the scan.
    with ThreadPoolExecutor(1) as hasher:
        file_digests = [hasher.submit(sha256_file, path) for path in shards]
        for path, file_sha256 in zip(shards, file_digests, strict=True):
            relative = path.relative_to(data).as_posix()
            scans.append(_scan(path, relative, count_column, loaded, digest, file_sha256=file_sha256))
            progress.advance(path.stat().st_size)
    progress.finish()
    return ScanResult(scans, _check_same_features(scans, data), digest.hexdigest())


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
