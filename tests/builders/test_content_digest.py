"""The version-1 content digest: a pure-Python reference of the documented recipe, and batch invariance."""

from __future__ import annotations

import hashlib
import struct
from collections import defaultdict
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hubrelease.builders.content_digest import ContentDigest
from hubrelease.errors import FormatError


def reference_digest(rows: list[dict[str, Any]]) -> str:
    """The docstring's recipe for conversation rows (strings, ints, list<struct<strings>>), without Arrow."""
    streams: dict[str, bytearray] = defaultdict(bytearray)

    def string(name: str, value: str | None) -> None:
        streams[f"{name}.valid"] += bytes([value is not None])
        data = (value or "").encode("utf-8")
        streams[f"{name}.len"] += struct.pack("<q", len(data))
        streams[f"{name}.bytes"] += data

    for row in rows:
        for name in sorted(row):
            value = row[name]
            if name == "messages":
                streams["messages.valid"] += b"\x01"
                streams["messages.len"] += struct.pack("<q", len(value))
                for message in value:
                    streams["messages[].valid"] += b"\x01"
                    for field in sorted(message):
                        string(f"messages[].{field}", message[field])
            elif isinstance(value, int):
                streams[f"{name}.valid"] += b"\x01"
                streams[f"{name}.values"] += struct.pack("<q", value)
            else:
                string(name, value)
    text = f"hubrelease-content-v1 rows={len(rows)}\n" + "".join(
        f"{name} {hashlib.sha256(bytes(streams[name])).hexdigest()}\n" for name in sorted(streams)
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _digest(table: pa.Table, chunk: int) -> str:
    digest = ContentDigest()
    for batch in table.to_batches(max_chunksize=chunk):
        digest.update(batch)
    return digest.hexdigest()


rows_strategy = st.lists(
    st.fixed_dictionaries(
        {
            "messages": st.lists(
                st.fixed_dictionaries(
                    {"role": st.sampled_from(["user", "assistant"]), "content": st.text(max_size=20)}
                ),
                min_size=1,
                max_size=3,
            ),
            "category": st.sampled_from(["chat", "code", "math", "stem"]),
            "completion_tokens": st.integers(min_value=0, max_value=2**40),
        }
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=40, deadline=None)
@given(rows=rows_strategy, chunk=st.integers(min_value=1, max_value=12))
def test_any_batching_gives_the_reference_digest(rows: list[dict[str, Any]], chunk: int) -> None:
    assert _digest(pa.Table.from_pylist(rows), chunk) == reference_digest(rows)


def test_nulls_large_types_and_floats_are_covered() -> None:
    table = pa.table(
        {
            "text": pa.array(["a", None, "ccc"], type=pa.large_string()),
            "score": pa.array([1.5, None, -2.0]),
            "flag": pa.array([True, False, None]),
            "tags": pa.array([["x"], None, []], type=pa.large_list(pa.string())),
        }
    )
    whole = _digest(table, 3)
    assert whole == _digest(table, 1)
    changed = table.set_column(0, "text", pa.array(["a", "", "ccc"], type=pa.large_string()))
    assert _digest(changed, 3) != whole  # null and empty string differ


def test_unsupported_types_are_refused_by_column() -> None:
    digest = ContentDigest()
    with pytest.raises(FormatError, match="column type binary is not supported"):
        digest.update(pa.record_batch({"blob": pa.array([b"x"])}))


def test_uint64_above_int64_and_all_null_columns_are_digested() -> None:
    big = pa.table({"id": pa.array([2**64 - 1, 1], type=pa.uint64()), "extra": pa.nulls(2)})
    whole = _digest(big, 2)
    assert whole == _digest(big, 1)
    assert _digest(big.set_column(0, "id", pa.array([2**64 - 2, 1], type=pa.uint64())), 2) != whole
    assert _digest(big.drop_columns(["extra"]), 2) != whole  # the column's presence is content
