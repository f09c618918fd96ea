"""Any corruption of a GGUF or safetensors header is parsed or refused with a FormatError naming an offset."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.numpy import save_file

from hubrelease.errors import FormatError
from hubrelease.formats.gguf_header import read_gguf_header
from hubrelease.formats.safetensors_header import read_safetensors_header
from tests.factories.drafters import write_ik_mixed_gguf

_FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
Edits = st.lists(
    st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=255)), min_size=1, max_size=8
)


def _corrupt(original: bytes, edits: list[tuple[int, int]], cut: int | None) -> bytes:
    data = bytearray(original)
    for at, value in edits:
        data[at % len(data)] = value
    return bytes(data[:cut] if cut is not None else data)


@_FUZZ
@given(edits=Edits, cut=st.none() | st.integers(min_value=0, max_value=2000))
def test_gguf_corruption_is_a_format_error(
    tmp_path: Path, edits: list[tuple[int, int]], cut: int | None
) -> None:
    source = tmp_path / "src.gguf"
    if not source.exists():
        write_ik_mixed_gguf(source)
    header_end = read_gguf_header(source).data_offset
    path = tmp_path / "fuzz.gguf"
    # Edits land in the header (where the lengths and counts live), the cut anywhere.
    data = bytearray(source.read_bytes())
    data[:header_end] = _corrupt(bytes(data[:header_end]), edits, None)
    path.write_bytes(bytes(data[:cut] if cut is not None else data))
    try:
        read_gguf_header(path)
    except FormatError as exc:
        assert "byte offset" in exc.message


@_FUZZ
@given(edits=Edits, cut=st.none() | st.integers(min_value=0, max_value=400))
def test_safetensors_corruption_is_a_format_error(
    tmp_path: Path, edits: list[tuple[int, int]], cut: int | None
) -> None:
    source = tmp_path / "src.safetensors"
    if not source.exists():
        save_file({"a": np.zeros((2, 3), np.float32), "b": np.ones(4, np.float16)}, str(source))
    path = tmp_path / "fuzz.safetensors"
    path.write_bytes(_corrupt(source.read_bytes(), edits, cut))
    try:
        read_safetensors_header(path)
    except FormatError as exc:
        assert "byte offset" in exc.message
