"""The type table against gguf-py (mainline ids) and ik_llama.cpp's row-metadata rule."""

from __future__ import annotations

import pytest
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

from hubrelease.formats.ggml_types import BY_NAME, GGML_TYPES, is_ik_only, type_name


@pytest.mark.parametrize("qtype", [q for q in GGMLQuantizationType if q != GGMLQuantizationType.Q8_1])
def test_mainline_ids_match_gguf_py(qtype: GGMLQuantizationType) -> None:
    ours = GGML_TYPES[int(qtype)]
    assert (ours.name, ours.block, ours.type_size, ours.row_meta) == (qtype.name, *GGML_QUANT_SIZES[qtype], 0)


def test_q8_1_follows_ggml_not_gguf_py() -> None:
    # ggml's block_q8_1 is two halves + 32 int8 (36 bytes); gguf-py still sizes the old two-float layout.
    assert GGML_QUANT_SIZES[GGMLQuantizationType.Q8_1] == (32, 40)
    assert GGML_TYPES[9].type_size == 36


def test_ik_row_metadata_is_counted_per_row() -> None:
    # IQ4_KS: a 4-byte float row scale before 256-element blocks of 136 bytes.
    assert BY_NAME["IQ4_KS"].nbytes((512, 3)) == 3 * (4 + 2 * 136)
    assert BY_NAME["IQ3_KS"].nbytes((256, 1, 2)) == 2 * (2 + 102)
    assert BY_NAME["IQ4_KSS"].id == 146 and BY_NAME["IQ3_KS"].id == 156


def test_row_not_divisible_by_block_has_no_size() -> None:
    assert BY_NAME["Q8_0"].nbytes((33, 2)) is None


def test_i2_s_uses_iks_packed_size() -> None:
    assert BY_NAME["I2_S"].nbytes((128, 4)) == 128 * 4 // 4 + 32


def test_unknown_ids_are_named_by_number() -> None:
    assert type_name(144) == "IQ4_KS"
    assert type_name(4242) == "type#4242"
    assert is_ik_only(156) and not is_ik_only(8) and not is_ik_only(4242)
