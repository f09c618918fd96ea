"""What a GGUF is made of, against what its manifest and its file name claim.

Seed 001's "q4" file held no Q4 tensors (26 F32, 24 Q8_0, 12 IQ3_KS, 7 IQ4_KSS), and its ik-only types
cannot load in mainline llama.cpp; these rules make both visible.
"""

from __future__ import annotations

import re

from hubrelease.formats.ggml_types import is_ik_only
from hubrelease.formats.gguf_header import GGUFSet
from hubrelease.lint.findings import RuleFinding, error, warning

# A quantization token in a file name: -q4, -q8_0, -IQ3_KS, -f16, -bf16 (split suffixes are not tokens).
_NAME_TYPE = re.compile(r"(?:^|[-_.])((?:i?q\d(?:_[0-9a-z]+)*)|bf16|f16|f32)(?=$|[-.])", re.IGNORECASE)
_MIXTURE_SUFFIX = re.compile(r"_(?:XXS|XS|S|M|L|XL)$")


def _fmt(counts: dict[str, int]) -> str:
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{n} {t}" for t, n in ordered) or "no tensors"


def composition_findings(
    model: GGUFSet, declared: dict[str, int] | None, *, mainline: bool
) -> list[RuleFinding]:
    """Declared composition, file-name quantization token and mainline loadability."""
    actual = model.composition()
    findings = []
    if declared is not None and declared != actual:
        findings.append(error("composition", f"declared {_fmt(declared)}, file has {_fmt(actual)}"))
    stem = re.sub(r"-\d{5}-of-\d{5}$", "", model.shards[0].path.name.removesuffix(".gguf"))
    match = _NAME_TYPE.search(stem)
    # A llama-quantize mixture (Q4_K_M, IQ3_XS, UD-Q4_K_XL) is named for its main type plus a size suffix.
    family = _MIXTURE_SUFFIX.sub("", match[1].upper()) if match else ""
    if match and not any(name.startswith((match[1].upper(), family)) for name in actual):
        findings.append(
            warning(
                "name-type",
                f"file name says {match[1]} but the file has no {family}* tensors ({_fmt(actual)})",
            )
        )
    if mainline:
        ik_types = sorted({t.type_name for t in model.tensors if is_ik_only(t.type_id)})
        if ik_types:
            findings.append(
                error("gguf-types", f"ik_llama.cpp-only types {', '.join(ik_types)} in a mainline file")
            )
    return findings
