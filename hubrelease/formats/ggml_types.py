"""ggml tensor types of mainline llama.cpp and ik_llama.cpp: id, name, block size, bytes.

gguf-py's ``GGMLQuantizationType`` enum knows only mainline ids and its ``GGML_QUANT_SIZES`` ignores the
per-row metadata (row scales) that ik_llama.cpp stores in front of each row of IQ*_KS/KT tensors, so it
can neither open ik files nor size their tensors. Sources: mainline ``ggml.h``, ik_llama.cpp
``ggml/include/ggml.h`` and the ``static_assert`` block sizes in ``ggml-common.h``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Origin = Literal["both", "mainline", "ik"]


@dataclass(frozen=True)
class GGMLType:
    """One ggml tensor type: ``block`` elements are stored in ``type_size`` bytes, plus ``row_meta`` per row."""

    id: int
    name: str
    block: int
    type_size: int
    row_meta: int = 0
    origin: Origin = "both"

    def row_bytes(self, ne0: int) -> int | None:
        """Bytes of one row of ``ne0`` elements, or None when ``ne0`` is not a multiple of the block."""
        if ne0 % self.block:
            return None
        return self.row_meta + ne0 // self.block * self.type_size

    def nbytes(self, shape: tuple[int, ...]) -> int | None:
        """Bytes of a tensor with ggml shape ``shape`` (ne0 first), as ik's ``ggml_nbytes`` computes them."""
        if self.name == "I2_S":
            # ik packs 4 ternary values per byte and appends one 32-byte scale block per tensor.
            return _product(shape) // 4 + 32
        if not shape:
            return self.row_bytes(1)
        row = self.row_bytes(shape[0])
        if row is None:
            return None
        return row * _product(shape[1:])


def _product(dims: tuple[int, ...]) -> int:
    total = 1
    for dim in dims:
        total *= dim
    return total


def _t(id_: int, name: str, block: int, size: int, meta: int = 0, *, origin: Origin = "both") -> GGMLType:
    return GGMLType(id_, name, block, size, meta, origin)


_ALL: tuple[GGMLType, ...] = (
    _t(0, "F32", 1, 4),
    _t(1, "F16", 1, 2),
    _t(2, "Q4_0", 32, 18),
    _t(3, "Q4_1", 32, 20),
    _t(6, "Q5_0", 32, 22),
    _t(7, "Q5_1", 32, 24),
    _t(8, "Q8_0", 32, 34),
    _t(9, "Q8_1", 32, 36),
    _t(10, "Q2_K", 256, 84),
    _t(11, "Q3_K", 256, 110),
    _t(12, "Q4_K", 256, 144),
    _t(13, "Q5_K", 256, 176),
    _t(14, "Q6_K", 256, 210),
    _t(15, "Q8_K", 256, 292),
    _t(16, "IQ2_XXS", 256, 66),
    _t(17, "IQ2_XS", 256, 74),
    _t(18, "IQ3_XXS", 256, 98),
    _t(19, "IQ1_S", 256, 50),
    _t(20, "IQ4_NL", 32, 18),
    _t(21, "IQ3_S", 256, 110),
    _t(22, "IQ2_S", 256, 82),
    _t(23, "IQ4_XS", 256, 136),
    _t(24, "I8", 1, 1),
    _t(25, "I16", 1, 2),
    _t(26, "I32", 1, 4),
    _t(27, "I64", 1, 8),
    _t(28, "F64", 1, 8),
    _t(29, "IQ1_M", 256, 56),
    _t(30, "BF16", 1, 2),
    # Removed from mainline files (runtime repack), still defined by ik.
    _t(31, "Q4_0_4_4", 32, 18, origin="ik"),
    _t(32, "Q4_0_4_8", 32, 18, origin="ik"),
    _t(33, "Q4_0_8_8", 32, 18, origin="ik"),
    _t(34, "TQ1_0", 256, 54, origin="mainline"),
    _t(35, "TQ2_0", 256, 66, origin="mainline"),
    _t(36, "I2_S", 1, 1, origin="ik"),
    _t(39, "MXFP4", 32, 17),
    _t(40, "NVFP4", 64, 36, origin="mainline"),
    # Same id and layout on both sides: mainline calls it Q1_0, ik Q1_0_G128.
    _t(41, "Q1_0", 128, 18),
    _t(97, "Q8_0_X4", 32, 34, origin="ik"),
    _t(98, "Q8_1_X4", 32, 36, origin="ik"),
    _t(99, "Q8_2_X4", 32, 36, origin="ik"),
    _t(133, "Q6_0", 32, 26, origin="ik"),
    _t(134, "IQ1_BN", 64, 13, 2, origin="ik"),
    _t(135, "IQ2_BN", 64, 16, 4, origin="ik"),
    _t(136, "Q8_K64", 64, 68, origin="ik"),
    _t(137, "IQ2_K", 256, 76, origin="ik"),
    _t(138, "IQ3_K", 256, 110, origin="ik"),
    _t(139, "IQ4_K", 256, 144, origin="ik"),
    _t(140, "IQ5_K", 256, 176, origin="ik"),
    _t(141, "IQ6_K", 256, 212, origin="ik"),
    _t(144, "IQ4_KS", 256, 136, 4, origin="ik"),
    _t(145, "IQ2_KS", 256, 70, 2, origin="ik"),
    _t(146, "IQ4_KSS", 256, 128, 4, origin="ik"),
    _t(147, "Q8_K16", 64, 64, 20, origin="ik"),
    _t(148, "Q8_K32", 256, 292, origin="ik"),
    _t(149, "Q8_KR8", 256, 292, origin="ik"),
    _t(150, "Q8_K128", 128, 140, origin="ik"),
    _t(151, "Q8_KV", 32, 32, 8, origin="ik"),
    _t(152, "IQ5_KS", 256, 168, 4, origin="ik"),
    _t(153, "IQ2_KT", 256, 68, 4, origin="ik"),
    _t(154, "IQ3_KT", 256, 100, 4, origin="ik"),
    _t(155, "IQ4_KT", 256, 128, 4, origin="ik"),
    _t(156, "IQ3_KS", 256, 102, 2, origin="ik"),
    _t(157, "IQ2_KL", 256, 86, 2, origin="ik"),
    _t(158, "IQ1_KT", 256, 56, 4, origin="ik"),
    # Row-interleaved (repacked) variants.
    _t(202, "Q4_0_R8", 32, 18, origin="ik"),
    _t(206, "Q5_0_R4", 32, 22, origin="ik"),
    _t(208, "Q8_0_R8", 32, 34, origin="ik"),
    _t(210, "Q2_K_R4", 256, 84, origin="ik"),
    _t(211, "Q3_K_R4", 256, 110, origin="ik"),
    _t(212, "Q4_K_R4", 256, 144, origin="ik"),
    _t(213, "Q5_K_R4", 256, 176, origin="ik"),
    _t(214, "Q6_K_R4", 256, 210, origin="ik"),
    _t(216, "IQ2_XXS_R4", 256, 66, origin="ik"),
    _t(217, "IQ2_XS_R4", 256, 74, origin="ik"),
    _t(218, "IQ3_XXS_R4", 256, 98, origin="ik"),
    _t(219, "IQ1_S_R4", 32, 6, 2, origin="ik"),
    _t(220, "IQ4_NL_R4", 32, 18, origin="ik"),
    _t(221, "IQ3_S_R4", 256, 110, origin="ik"),
    _t(222, "IQ2_S_R4", 256, 82, origin="ik"),
    _t(223, "IQ4_XS_R8", 256, 136, origin="ik"),
    _t(229, "IQ1_M_R4", 32, 7, 2, origin="ik"),
    _t(230, "BF16_R16", 1, 2, origin="ik"),
    _t(233, "Q6_0_R4", 32, 26, origin="ik"),
    _t(335, "IQ2_BN_R4", 64, 16, 4, origin="ik"),
    _t(337, "IQ2_K_R4", 256, 76, origin="ik"),
    _t(338, "IQ3_K_R4", 256, 110, origin="ik"),
    _t(339, "IQ4_K_R4", 256, 144, origin="ik"),
    _t(340, "IQ5_K_R4", 256, 176, origin="ik"),
    _t(344, "IQ4_KS_R4", 256, 136, 4, origin="ik"),
    _t(352, "IQ5_KS_R4", 256, 168, 4, origin="ik"),
    _t(353, "MXFP4_R8", 32, 17, origin="ik"),
    _t(397, "Q8_K_R16", 256, 258, origin="ik"),
    _t(398, "Q8_KV_R8", 32, 32, 4, origin="ik"),
    _t(399, "Q8_K_R8", 256, 258, origin="ik"),
)

GGML_TYPES: dict[int, GGMLType] = {t.id: t for t in _ALL}
"""Every known type by id."""
BY_NAME: dict[str, GGMLType] = {t.name: t for t in _ALL}
"""Every known type by name."""


def type_name(type_id: int) -> str:
    """The type's name, or ``type#N`` for an id nobody knows."""
    known = GGML_TYPES.get(type_id)
    return known.name if known else f"type#{type_id}"


def is_ik_only(type_id: int) -> bool:
    """True for ids only ik_llama.cpp can load (mainline llama.cpp and gguf-py reject them)."""
    known = GGML_TYPES.get(type_id)
    return known is not None and known.origin == "ik"
