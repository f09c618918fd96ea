"""Corrupt parquet pages (found by tests/fuzz): one line, exit 2, nothing written.

pyarrow opens a shard from its footer and decodes pages only when batches are read, so a damaged
page surfaced as an internal error (exit 3: ArrowInvalid, UnicodeDecodeError) or as pyarrow's
multi-line OSError text. tests/builders/test_dataset_card.py holds the thrift/snappy cases; the
invalid UTF-8 case (decoded only when categories are tallied) is fixed here. The edits below, applied to the factory's 6-row shard, are the fuzz tier's
reproducers (byte offset, new value).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.factories.cli import invoke
from tests.factories.datasets import conversations, write_parquet_shards

CORRUPTIONS = {
    "invalid UTF-8 in a string page (was exit 3: UnicodeDecodeError)": [(415, 133), (2346, 167)],
    "a page buffer too small (was exit 3: ArrowInvalid)": [(1578, 132), (798, 13)],
    "a bad dictionary index count (was exit 3: ArrowInvalid)": [(683, 49)],
    "an index outside the dictionary (was exit 3: ArrowInvalid)": [(383, 217), (1149, 251)],
    "an unreadable page header (was 3 lines, no file named)": [
        (1497, 155),
        (715, 148),
        (451, 142),
        (1019, 13),
    ],
    "a damaged footer (was 2 error: lines)": [(165, 215), (2094, 132), (1658, 248), (1952, 155)],
}


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_a_corrupt_parquet_page_is_one_line_exit_2(tmp_path: Path, name: str) -> None:
    shard = write_parquet_shards(tmp_path / "data", conversations(6), shards=1)[0]
    data = bytearray(shard.read_bytes())
    for at, value in CORRUPTIONS[name]:
        data[at] = value
    shard.write_bytes(bytes(data))
    result = invoke(["build", "dataset-card", str(tmp_path / "data"), "-o", str(tmp_path / "README.md")])
    assert result.exit_code == 2, result.stderr
    lines = result.stderr.strip("\n").split("\n")
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"error: {shard}: "), lines[0]
    assert "corrupt parquet data (" in lines[0] or "not a readable parquet file (" in lines[0], lines[0]
    assert not (tmp_path / "README.md").exists()
