"""Bounds of the Xet formats checked before anything is decoded: xorb layout, the work of a shard."""

from __future__ import annotations

import io

import pytest

from hubrelease_loopback import xetformat
from hubrelease_loopback.xetformat import MAX_CHUNK, Segment, ShardFile, XetFormatError
from tests.factories.xet_hostile import tiny_chunk_xorb


def _chunk_header(stored: int, raw: int) -> bytes:
    return bytes([0]) + stored.to_bytes(3, "little") + bytes([0]) + raw.to_bytes(3, "little")


def test_a_xorb_decoding_past_64_mib_is_refused_from_its_headers() -> None:
    # 513 chunks of 128 KiB claimed, 1 byte stored each: the lie is seen before one is decoded.
    body = (_chunk_header(1, MAX_CHUNK) + b"x") * 513
    with pytest.raises(XetFormatError, match="decodes to more than 67108864 bytes"):
        xetformat.scan_xorb(io.BytesIO(body))


def test_a_xorb_within_the_bounds_is_scanned_whole() -> None:
    xorb = tiny_chunk_xorb(xetformat.MAX_XORB_CHUNKS)
    assert len(xetformat.scan_xorb(io.BytesIO(xorb.body))) == xetformat.MAX_XORB_CHUNKS


def _file(*terms: tuple[str, int, int, int]) -> ShardFile:
    return ShardFile("f" * 64, [Segment(*term) for term in terms])


SIZES = {"a": [1_000] * 10, "b": [1_000] * 10}


@pytest.mark.parametrize(
    ("terms", "problem"),
    [
        ([("a", 0, 10, 10_000)], None),  # new data: each chunk once
        ([("a", 0, 1, 1_000)] * 1_000, None),  # a run of one repeated chunk (zeros)
        ([("a", 0, 10, 10_000)] * 4, None),  # a block held four times
        ([("a", 0, 10, 10_000)] * 5, "more than 4 times the 10 distinct ones"),
        ([("a", 0, 10, 10 * MAX_CHUNK)], "describe 1310720 bytes"),  # sizes the chunks do not hold
        ([("unreached", 0, 10, 10_000)] * 100, None),  # not counted: refused later, at no cost
    ],
)
def test_shard_work_is_bounded_by_the_distinct_chunks_it_names(
    terms: list[tuple[str, int, int, int]], problem: str | None
) -> None:
    found = xetformat.shard_work_problem([_file(*terms)], SIZES)
    assert found is None if problem is None else problem in (found or "")


def test_index_loads_are_counted_past_the_index_cache() -> None:
    xorbs = {f"x{n}": [1_000] * 100 for n in range(xetformat.INDEX_CACHE + 1)}
    cycling = [(name, 0, 1, 1_000) for _ in range(30) for name in xorbs]  # every term evicts the next
    assert "index entries" in (xetformat.shard_work_problem([_file(*cycling)], xorbs) or "")
    grouped = [(name, 0, 1, 1_000) for name in xorbs for _ in range(30)]  # each index read once
    assert xetformat.shard_work_problem([_file(*grouped)], xorbs) is None
