"""Header-only GGUF reading: ik type ids, unknown ids, large arrays, splits and every corruption path."""

from __future__ import annotations

import hashlib
import struct
import tracemalloc
from pathlib import Path

import gguf
import numpy as np
import pytest

from hubrelease.errors import FormatError, InputError
from hubrelease.formats.gguf_header import (
    NeedMore,
    SkippedArray,
    parse_gguf_header,
    read_gguf,
    read_gguf_header,
)
from tests.factories.drafters import write_ik_mixed_gguf, write_raw_gguf, write_target_gguf, write_vocab_gguf


def test_ik_types_are_read_where_gguf_py_gives_up(tmp_path: Path) -> None:
    path = write_ik_mixed_gguf(tmp_path / "q4.gguf")
    with pytest.raises(ValueError, match="not a valid GGMLQuantizationType"):
        gguf.GGUFReader(path)
    model = read_gguf(path)
    assert model.architecture == "dflash-draft"
    assert model.composition() == {"IQ3_KS": 2, "F32": 1, "IQ4_KSS": 1, "Q8_0": 1}
    assert model.bytes_per_type()["IQ4_KSS"] == 4 * (4 + 2 * 128)
    assert model.value("dflash-draft.rope.freq_base") == pytest.approx(1e7)


def test_unknown_type_id_is_sized_from_offsets(tmp_path: Path) -> None:
    path = write_raw_gguf(tmp_path / "u.gguf", "x", {}, [("a", (32, 2), 4242, 100), ("b", (32,), 0, 128)])
    tensors = {t.name: t for t in read_gguf(path).tensors}
    assert tensors["a"].type_name == "type#4242"
    assert (
        tensors["a"].size_from_offsets and tensors["a"].nbytes == 128
    )  # 100 padded to the 32-byte alignment
    assert tensors["b"].nbytes == 128 and not tensors["b"].size_from_offsets


def test_large_arrays_are_skipped_unless_asked_for(tmp_path: Path) -> None:
    path = write_target_gguf(tmp_path / "t.gguf", vocab=600)
    tokens = read_gguf(path).value("tokenizer.ggml.tokens")
    assert tokens == SkippedArray(8, 600)
    kept = read_gguf(path, keep_key=lambda k: k.startswith("tokenizer.")).value("tokenizer.ggml.tokens")
    assert isinstance(kept, list) and kept[599] == "tok599"
    assert read_gguf(path).value("tokenizer.ggml.merges") == ["t o", "to k"]


def test_long_array_of_arrays_is_skipped_not_materialised(tmp_path: Path) -> None:
    # 4000 inner arrays of 250 bytes each: ~1 MB on disk, ~8 MB as Python lists of ints.
    path = write_raw_gguf(tmp_path / "n.gguf", "x", {"nested": [[True] * 250] * 4000, "small": [[1, 2]]}, [])
    tracemalloc.start()
    try:
        header = read_gguf_header(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert header.value("nested") == SkippedArray(9, 4000)
    assert header.value("small") == [[1, 2]]
    assert peak < 200_000


def _header_end(path: Path) -> int:
    return read_gguf_header(path).data_offset


@pytest.mark.parametrize("cut", [3, 20, 40, 200])
def test_truncated_header_names_the_offset(tmp_path: Path, cut: int) -> None:
    path = write_target_gguf(tmp_path / "t.gguf")
    data = path.read_bytes()[:cut]
    path.write_bytes(data)
    with pytest.raises(FormatError, match=r"(truncated|too small).*byte offset \d+"):
        read_gguf_header(path)


def test_truncated_inside_a_skipped_vocabulary(tmp_path: Path) -> None:
    path = write_target_gguf(tmp_path / "t.gguf", vocab=600)
    path.write_bytes(path.read_bytes()[:6000])
    with pytest.raises(FormatError, match=r"truncated: tokenizer\.ggml\.tokens\[\d+\] .* at byte offset \d+"):
        read_gguf_header(path)


def test_truncated_tensor_data_is_reported(tmp_path: Path) -> None:
    path = write_target_gguf(tmp_path / "t.gguf")
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(
        FormatError, match=r"truncated: tensor 'token_embd.weight' .* ends past the end of the file"
    ):
        read_gguf_header(path)


def _patch(path: Path, needle: bytes, after: int, value: bytes) -> int:
    data = bytearray(path.read_bytes())
    at = data.index(needle) + len(needle) + after
    data[at : at + len(value)] = value
    path.write_bytes(bytes(data))
    return at


def test_lying_string_length_fails_fast(tmp_path: Path) -> None:
    path = write_target_gguf(tmp_path / "t.gguf")
    # The length field of the value of general.architecture (after the key and its uint32 type).
    at = _patch(path, b"general.architecture", 4, struct.pack("<Q", 2**62))
    with pytest.raises(
        FormatError, match=rf"needs {2**62} bytes but only \d+ remain at byte offset {at + 8}"
    ):
        read_gguf_header(path)


def test_lying_array_count_fails_before_allocating(tmp_path: Path) -> None:
    path = write_target_gguf(tmp_path / "t.gguf")
    _patch(path, b"tokenizer.ggml.token_type", 8, struct.pack("<Q", 2**60))
    with pytest.raises(FormatError, match=r"tokenizer.ggml.token_type \(1152921504606846976 x INT32\)"):
        read_gguf_header(path)


def test_lying_tensor_count(tmp_path: Path) -> None:
    path = write_target_gguf(tmp_path / "t.gguf")
    data = bytearray(path.read_bytes())
    data[8:16] = struct.pack("<Q", 2**40)
    path.write_bytes(bytes(data))
    with pytest.raises(
        FormatError, match="tensor count 1099511627776 cannot fit in the file at byte offset 8"
    ):
        read_gguf_header(path)


def test_bad_magic_and_version(tmp_path: Path) -> None:
    path = write_target_gguf(tmp_path / "t.gguf")
    data = bytearray(path.read_bytes())
    path.write_bytes(b"GGML" + bytes(data[4:]))
    with pytest.raises(FormatError, match=r"not a GGUF file \(magic b'GGML'\) at byte offset 0"):
        read_gguf_header(path)
    data[4:8] = struct.pack("<I", 99)
    path.write_bytes(bytes(data))
    with pytest.raises(FormatError, match="unsupported GGUF version 99 at byte offset 4"):
        read_gguf_header(path)


def test_misaligned_offset_and_overlap(tmp_path: Path) -> None:
    path = write_raw_gguf(tmp_path / "m.gguf", "x", {}, [("a", (32,), 0, 128), ("b", (32,), 0, 128)])
    # Offsets are the last uint64 of each tensor info; the second tensor's is 128.
    data = bytearray(path.read_bytes())
    at = data.rindex(struct.pack("<Q", 128))
    data[at : at + 8] = struct.pack("<Q", 100)
    path.write_bytes(bytes(data))
    with pytest.raises(FormatError, match="'b' data offset 100 is not a multiple of the alignment 32"):
        read_gguf_header(path)
    data[at : at + 8] = struct.pack("<Q", 64)
    path.write_bytes(bytes(data))
    with pytest.raises(FormatError, match=r"tensor 'a' .* overlaps the next tensor"):
        read_gguf_header(path)


def test_size_and_offsets_disagree(tmp_path: Path) -> None:
    path = write_raw_gguf(tmp_path / "d.gguf", "x", {}, [("a", (32,), 0, 128), ("b", (32,), 0, 128)])
    data = bytearray(path.read_bytes())
    at = data.index(b"\x01\x00\x00\x00" + struct.pack("<Q", 32))  # tensor 'a': n_dims 1, ne0 32 (F32)
    data[at + 4 : at + 12] = struct.pack("<Q", 8)
    path.write_bytes(bytes(data))
    with pytest.raises(FormatError, match="declares 32 bytes but the next tensor starts 128 bytes later"):
        read_gguf_header(path)


def test_bad_alignment_value(tmp_path: Path) -> None:
    path = write_raw_gguf(tmp_path / "a.gguf", "x", {"general.alignment": 48}, [("a", (32,), 0, 128)])
    with pytest.raises(FormatError, match=r"general\.alignment must be a power-of-two UINT32, got 48"):
        read_gguf_header(path)


def test_split_set_from_any_shard(tmp_path: Path) -> None:
    writer = gguf.GGUFWriter(tmp_path / "m.gguf", "dflash", split_max_tensors=1)
    for name in ("a", "b", "c"):
        writer.add_tensor(name, np.zeros(8, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    model = read_gguf(tmp_path / "m-00002-of-00003.gguf")
    assert [s.path.name for s in model.shards] == [f"m-0000{i}-of-00003.gguf" for i in (1, 2, 3)]
    assert [t.name for t in model.tensors] == ["a", "b", "c"] and model.architecture == "dflash"
    (tmp_path / "m-00003-of-00003.gguf").unlink()
    with pytest.raises(InputError, match=r"split set is incomplete: missing m-00003-of-00003\.gguf"):
        read_gguf(tmp_path / "m-00001-of-00003.gguf")


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_gguf(tmp_path / "none.gguf")
    (tmp_path / "dir.gguf").mkdir()
    with pytest.raises(InputError, match="is a directory"):
        read_gguf(tmp_path / "dir.gguf")


def test_a_prefix_asks_for_more_and_guesses_past_a_vocabulary(tmp_path: Path) -> None:
    path = write_vocab_gguf(tmp_path / "v.gguf", 50_000)
    data, size = path.read_bytes(), path.stat().st_size
    whole = read_gguf_header(path)
    with pytest.raises(NeedMore) as stopped:
        parse_gguf_header(data[:4096], size, path)
    # Stopped inside the token list: the guess covers tokens, scores, types, merges and the tensor infos.
    assert 4096 < stopped.value.end <= whole.header_size <= stopped.value.guess < size * 2
    parsed = parse_gguf_header(data[: stopped.value.guess], size, path)
    assert (parsed.header_sha256, parsed.kv.keys(), parsed.tensors) == (
        whole.header_sha256,
        whole.kv.keys(),
        whole.tensors,
    )


def test_truncation_is_still_an_error_when_the_prefix_is_the_whole_file(tmp_path: Path) -> None:
    data = write_vocab_gguf(tmp_path / "v.gguf", 1000).read_bytes()
    with pytest.raises(FormatError, match="truncated"):
        parse_gguf_header(data[:5000], 5000, tmp_path / "v.gguf")


def test_header_digest_covers_metadata_and_tensor_infos_only(tmp_path: Path) -> None:
    path = write_ik_mixed_gguf(tmp_path / "q4.gguf")
    header = read_gguf_header(path)
    data = path.read_bytes()
    assert header.header_sha256 == hashlib.sha256(data[: header.header_size]).hexdigest()
    assert header.header_size <= header.data_offset < header.header_size + header.alignment
