"""Run an engine's own ``convert_hf_to_gguf.py`` (with the gguf-py shipped beside it) on a drafter folder.

Run with a Python that has torch + transformers: ``python convert.py ENGINE_SRC DRAFTER TARGET OUTTYPE OUT``
(TARGET ``-`` converts DRAFTER as a model of its own: the example target itself).
The converter runs unchanged but for one thing: both converters name the BPE pre-tokenizer by hashing
the token ids of a fixed text (``get_vocab_base_pre``: mainline ``conversion/base.py:1629``, ik
``convert_hf_to_gguf.py:577``), which only matches the published vocabularies and raises
``NotImplementedError`` for any other. The tiny target's tokenizer is a freshly trained byte-level BPE
with Qwen2's pre-tokenizer split; when the hash is unknown and the tokenizer's pre-tokenizer holds that
exact split regex, the answer is ``qwen2`` (what the converters answer for Qwen2/Qwen3 vocabularies).
Any other unknown tokenizer still fails as upstream does.
"""

from __future__ import annotations

import json
import sys
from typing import Any

QWEN2_SPLIT = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


def _qwen2_split(tokenizer: Any) -> bool:
    backend = getattr(tokenizer, "backend_tokenizer", None) or getattr(tokenizer, "_tokenizer", None)
    if backend is None:
        return False
    pre = json.loads(backend.to_str()).get("pre_tokenizer") or {}
    parts = pre.get("pretokenizers", [pre])
    return any((p.get("pattern") or {}).get("Regex") == QWEN2_SPLIT for p in parts)


def main() -> None:
    src, drafter, target, outtype, out = sys.argv[1:6]
    sys.path[:0] = [f"{src}/gguf-py", src]
    sys.argv = [
        "convert_hf_to_gguf.py",
        drafter,
        "--target-model-dir",
        target,
        "--outtype",
        outtype,
        "--outfile",
        out,
    ]
    import convert_hf_to_gguf

    try:
        from conversion.base import TextModel as base  # mainline: the converter is a package
    except ImportError:
        base = convert_hf_to_gguf.Model  # ik: one file
    upstream = base.get_vocab_base_pre

    def get_vocab_base_pre(self: Any, tokenizer: Any) -> str:
        try:
            return str(upstream(self, tokenizer))
        except NotImplementedError:
            if _qwen2_split(tokenizer):
                return "qwen2"
            raise

    base.get_vocab_base_pre = get_vocab_base_pre
    convert_hf_to_gguf.main()


if __name__ == "__main__":
    main()
