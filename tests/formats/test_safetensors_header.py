"""Header-only safetensors reading: files, sharded sets, and lying or broken headers."""

from __future__ import annotations

import json
import struct
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from hubrelease.errors import FormatError, InputError
from hubrelease.formats.safetensors_header import read_json_object, read_safetensors, read_safetensors_header


def _file(path: Path) -> Path:
    save_file(
        {"a": np.zeros((2, 3), np.float32), "b": np.ones(4, np.float16)}, str(path), metadata={"k": "v"}
    )
    return path


def _raw(path: Path, header: Mapping[str, object], data: bytes, length: int | None = None) -> Path:
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw) if length is None else length) + raw + data)
    return path


def test_reads_names_shapes_and_exact_byte_ranges(tmp_path: Path) -> None:
    path = _file(tmp_path / "m.safetensors")
    tensors, metadata = read_safetensors_header(path)
    by_name = {t.name: t for t in tensors}
    assert metadata == {"k": "v"}
    assert by_name["a"].shape == (2, 3) and by_name["a"].nbytes == 24
    assert path.read_bytes()[by_name["b"].start : by_name["b"].end] == np.ones(4, np.float16).tobytes()


def test_lying_length_is_refused_without_reading(tmp_path: Path) -> None:
    path = _raw(tmp_path / "l.safetensors", {}, b"", length=2**63)
    with pytest.raises(
        FormatError, match=r"header length field says 9223372036854775808 bytes .* at byte offset 0"
    ):
        read_safetensors_header(path)


def test_truncated_files(tmp_path: Path) -> None:
    path = tmp_path / "t.safetensors"
    path.write_bytes(b"\x01\x02")
    with pytest.raises(FormatError, match="8-byte header length is incomplete at byte offset 0"):
        read_safetensors_header(path)
    good = _file(tmp_path / "g.safetensors").read_bytes()
    path.write_bytes(good[:-4])
    with pytest.raises(
        FormatError, match=r"truncated: tensor data ends at byte offset \d+ but the file has \d+ bytes"
    ):
        read_safetensors_header(path)


def test_corrupt_json_names_the_offset(tmp_path: Path) -> None:
    path = tmp_path / "c.safetensors"
    path.write_bytes(struct.pack("<Q", 5) + b'{"a":')
    with pytest.raises(FormatError, match="header is not valid JSON: Expecting value at byte offset 13"):
        read_safetensors_header(path)


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (
            b"[" * 100_000 + b"]" * 100_000,
            "header is not valid JSON: nested more than 64 levels deep at byte offset 8",
        ),
        (
            b'{"a":{"shape":[' + b"9" * 5000 + b"]}}",
            "header is not valid JSON: an integer with more than 20 digits at byte offset 8",
        ),
    ],
)
def test_hostile_json_is_a_format_error(tmp_path: Path, header: bytes, message: str) -> None:
    # Deep nesting (RecursionError) and over-long integers (ValueError) used to end as "internal error";
    # a header's numbers are usize to the safetensors crate, so 21 digits are already too many.
    path = tmp_path / "h.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header)
    with pytest.raises(FormatError, match=message):
        read_safetensors_header(path)


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"vocab_size": ' + "9" * 5000 + "}"])
def test_hostile_config_json_is_a_format_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(FormatError, match="not valid JSON"):
        read_json_object(path)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"dtype": "Q4", "shape": [1], "data_offsets": [0, 1]}, "unknown dtype 'Q4'"),
        ({"dtype": ["F32"], "shape": [1], "data_offsets": [0, 4]}, r"unknown dtype \['F32'\]"),
        ({"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}, "needs 8 bytes but data_offsets span 4"),
        ({"dtype": "F32", "shape": "x", "data_offsets": [0, 4]}, "shape must be a list"),
        ({"dtype": "F32", "shape": [True], "data_offsets": [0, 4]}, "shape must be a list"),
        ({"dtype": "F32", "shape": [1], "data_offsets": [False, 4]}, "data_offsets must be"),
    ],
)
def test_bad_entries(tmp_path: Path, spec: dict[str, object], message: str) -> None:
    path = _raw(tmp_path / "e.safetensors", {"t": spec}, b"\0" * 8)
    with pytest.raises(FormatError, match=message):
        read_safetensors_header(path)


def test_overlap_and_gap(tmp_path: Path) -> None:
    f32 = {"dtype": "F32", "shape": [1]}
    overlap = {"a": f32 | {"data_offsets": [0, 4]}, "b": f32 | {"data_offsets": [2, 6]}}
    with pytest.raises(FormatError, match="'b' overlaps the previous tensor"):
        read_safetensors_header(_raw(tmp_path / "o.safetensors", overlap, b"\0" * 8))
    gap = {"a": f32 | {"data_offsets": [4, 8]}}
    with pytest.raises(FormatError, match="'a' leaves a gap"):
        read_safetensors_header(_raw(tmp_path / "g.safetensors", gap, b"\0" * 8))


def test_sharded_set_checks_the_index(tmp_path: Path) -> None:
    save_file({"a": np.zeros(2, np.float32)}, str(tmp_path / "s1.safetensors"))
    save_file({"b": np.zeros(3, np.float32)}, str(tmp_path / "s2.safetensors"))
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(
        json.dumps(
            {"metadata": {"total_size": 20}, "weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}}
        )
    )
    model = read_safetensors(tmp_path)
    assert [t.name for t in model.tensors] == ["a", "b"] and model.bytes_per_dtype() == {"F32": 20}
    index.write_text(json.dumps({"weight_map": {"a": "s2.safetensors", "b": "s2.safetensors"}}))
    with pytest.raises(
        FormatError, match=r"index and shards disagree: 1 listed tensors not in their shard \(first: a\)"
    ):
        read_safetensors(index)
    index.write_text(json.dumps({"weight_map": {"a": "../x.safetensors"}}))
    with pytest.raises(FormatError, match="weight_map names a file outside the folder"):
        read_safetensors(index)


def test_folder_without_safetensors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"folder holds no \.safetensors files"):
        read_safetensors(tmp_path)
