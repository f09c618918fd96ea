"""HF/SGLang drafter folder -> GGUF drafter for ik_llama.cpp (``dflash-draft``) or mainline (``dflash``).

Streaming through gguf's ``GGUFWriter``: every tensor info is declared first, then tensors are read,
converted and written one at a time, so peak memory is about one tensor, not the model. We write
``rope.freq_base`` from the nested ``rope_parameters`` ourselves because the upstream converters read
only the top-level ``rope_theta`` and silently leave 1e4 (seed 001).
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from gguf import GGMLQuantizationType, GGUFValueType, GGUFWriter, LlamaFileType
from gguf.quants import quantize

from hubrelease.builders.safetensors_drafter import BuiltFile, check_config, checked_tensors, read_f32
from hubrelease.errors import BuildError, InputError
from hubrelease.formats.dflash import (
    ARCH,
    DrafterConfig,
    Flavor,
    as_float,
    gguf_name,
    is_number,
    load_config,
    short_repr,
)
from hubrelease.formats.ggml_types import GGML_TYPES
from hubrelease.formats.gguf_header import GGUFSet, array_length, read_gguf
from hubrelease.formats.safetensors_header import SafeTensor
from hubrelease.fsutil import staging_dir
from hubrelease.progress import NULL_PROGRESS, Progress

OutType = Literal["f32", "f16", "bf16", "q8_0"]
_QTYPE: dict[OutType, GGMLQuantizationType] = {
    "f32": GGMLQuantizationType.F32,
    "f16": GGMLQuantizationType.F16,
    "bf16": GGMLQuantizationType.BF16,
    "q8_0": GGMLQuantizationType.Q8_0,
}
_FILE_TYPE: dict[OutType, LlamaFileType] = {
    "f32": LlamaFileType.ALL_F32,
    "f16": LlamaFileType.MOSTLY_F16,
    "bf16": LlamaFileType.MOSTLY_BF16,
    "q8_0": LlamaFileType.MOSTLY_Q8_0,
}
_U32_MAX = 2**32 - 1
_I32_MAX = 2**31 - 1
_F32_MAX = float(np.finfo(np.float32).max)
_CHUNK_ELEMENTS = 1 << 18
"""Rows per quantization task: about 1 MiB of float32, so each thread's temporaries stay in cache
(measured 1.8x over one whole-tensor call on 2 cores; 4 large chunks gave 1.2x)."""


@dataclass(frozen=True)
class _Plan:
    hf_name: str
    name: str
    qtype: GGMLQuantizationType
    shape: tuple[int, ...]
    nbytes: int


def tensor_type(shape: tuple[int, ...], outtype: OutType, name: str = "") -> GGMLQuantizationType:
    """Norms and other 1-D tensors stay F32 (as llama.cpp's converter does); rows that Q8_0 blocks do not
    divide fall back to F16.

    A GGUF ``name`` not ending in ``weight`` (DFlash2's ``blk.N.attn_conv_base``/``ffn_conv_base``) also
    stays F32: the graph adds it elementwise to F32 activations, and llama-quantize converts only
    ``*weight`` tensors for the same reason.
    """
    if len(shape) == 1 or (name and not name.endswith("weight")):
        return GGMLQuantizationType.F32
    qtype = _QTYPE[outtype]
    if shape[-1] % GGML_TYPES[qtype].block:
        return GGMLQuantizationType.F16
    return qtype


def _uint(config: DrafterConfig, key: str, value: object, minimum: int = 0, maximum: int = _U32_MAX) -> int:
    """An integer that fits the GGUF field it goes to (a larger one would fail mid-write in struct.pack)."""
    if not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= maximum:
        raise BuildError(
            f"config needs an integer {key} in {minimum}..{maximum}", path=config.path, field=key
        )
    return value


def _need(config: DrafterConfig, key: str, minimum: int = 0) -> int:
    return _uint(config, key, config.get(key), minimum)


def _positive(config: DrafterConfig, key: str, value: object) -> float:
    """A positive number that fits the FLOAT32 it is written as (struct.pack overflows above ~3.4e38)."""
    number = as_float(value) if is_number(value) else math.nan
    if not (math.isfinite(number) and 0 < number <= _F32_MAX):
        raise BuildError(
            f"config needs a positive float32 number {key}, got {short_repr(value)}",
            path=config.path,
            field=key,
        )
    return number


def _add_hparams(
    writer: GGUFWriter, config: DrafterConfig, flavor: Flavor, outtype: OutType, fc_width: int
) -> None:
    p = ARCH[flavor]
    raw = config.raw
    heads = _need(config, "num_attention_heads", minimum=1)
    head_dim = (
        config.hidden_size // heads
        if raw.get("head_dim") is None
        else _uint(config, "head_dim", raw["head_dim"], 1)
    )
    writer.add_uint32(f"{p}.block_count", config.num_layers)
    writer.add_uint32(f"{p}.context_length", _need(config, "max_position_embeddings"))
    writer.add_uint32(f"{p}.embedding_length", config.hidden_size)
    writer.add_uint32(f"{p}.feed_forward_length", _need(config, "intermediate_size"))
    writer.add_uint32(f"{p}.attention.head_count", heads)
    writer.add_uint32(f"{p}.attention.head_count_kv", _need(config, "num_key_value_heads"))
    writer.add_uint32(f"{p}.attention.key_length", head_dim)
    writer.add_uint32(f"{p}.attention.value_length", head_dim)
    writer.add_float32(
        f"{p}.attention.layer_norm_rms_epsilon",
        _positive(config, "rms_norm_eps", raw.get("rms_norm_eps", 1e-6)),
    )
    writer.add_float32(
        f"{p}.rope.freq_base", _positive(config, str(config.rope_theta_source), config.rope_theta)
    )
    writer.add_uint32(
        f"{p}.rope.dimension_count",
        int(head_dim * _positive(config, "partial_rotary_factor", raw.get("partial_rotary_factor", 1.0))),
    )
    if flavor == "ik":
        # ik's converter always writes false (convert_hf_to_gguf.py:2343, :2439); its loader reads the
        # key only for Laguna drafts (llama-hparams.cpp:914).
        writer.add_bool(f"{p}.attention.causal", False)
    elif config.causal is not None:
        # Mainline's converter copies is_causal / dflash_config.causal when set (conversion/qwen.py:749-753)
        # and the runtime honours it, non-causal when absent (common/speculative.cpp:954, :990, :1063).
        writer.add_bool(f"{p}.attention.causal", config.causal)
    block = _need(config, "block_size")
    mask = _need(config, "mask_token_id")
    # Written as an INT32 array, 1-based in the mainline flavour.
    for layer in config.target_layer_ids:
        _uint(config, "dflash_config.target_layer_ids", layer, maximum=_I32_MAX - 1)
    if flavor == "ik":
        writer.add_uint32(f"{p}.dflash.block_size", block)
        writer.add_uint32(f"{p}.dflash.mask_token_id", mask)
        writer.add_array(f"{p}.dflash.target_layer_ids", list(config.target_layer_ids))
        writer.add_uint32(f"{p}.dflash.n_target_features", fc_width)
    else:
        writer.add_uint32(f"{p}.block_size", block)
        writer.add_uint32("tokenizer.ggml.mask_token_id", mask)
        writer.add_array(f"{p}.target_layers", [i + 1 for i in config.target_layer_ids])
        if config.dflash2:
            for key in ("conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k"):
                writer.add_uint32(f"{p}.{key}", _need(config, key))
    sliding = config.sliding
    if sliding is not None:
        writer.add_uint32(
            f"{p}.attention.sliding_window", _uint(config, "sliding_window", config.sliding_window, 1)
        )
        writer.add_array(f"{p}.attention.sliding_window_pattern", list(sliding))
    for gguf_key, value in config.scales(flavor).items():
        writer.add_float32(f"{p}.{gguf_key}", _positive(config, gguf_key, value))
    writer.add_file_type(_FILE_TYPE[outtype])
    writer.add_quantization_version(2)


def _check_target(config: DrafterConfig, model: GGUFSet, target: Path, fc_width: int) -> None:
    """The drafter must fit the target it borrows the embedding, head and layer inputs from."""
    arch = model.architecture
    depth, hidden = model.value(f"{arch}.block_count"), model.value(f"{arch}.embedding_length")
    if isinstance(depth, int) and max(config.target_layer_ids) >= depth - 1:
        # mainline llama-graph.cpp:1384 "layer input tensor is null"; ik: "DFlash capture rows mismatch".
        raise BuildError(
            f"target layer {max(config.target_layer_ids)} is not below the target's last layer {depth - 1}",
            path=config.path,
            field="dflash_config.target_layer_ids",
        )
    if isinstance(hidden, int) and fc_width != hidden * len(config.target_layer_ids):
        # ik speculative-dflash-impl.h:175 (n_target_features), mainline speculative.cpp n_embd_enc.
        raise BuildError(
            f"fc.weight takes {fc_width} features, the target gives {hidden} x {len(config.target_layer_ids)}",
            path=target,
        )
    vocab = array_length(model.value("tokenizer.ggml.tokens"))
    if config.dflash2 and vocab is not None and config.vocab_size != vocab:
        # mainline dflash.cpp:153-154 sizes the selector codebooks by the tokenizer's n_vocab.
        raise BuildError(
            f"vocab_size {config.vocab_size} != the target tokenizer's {vocab} tokens", path=target
        )


def _add_tokenizer(writer: GGUFWriter, model: GGUFSet, target: Path, flavor: Flavor, mask: int) -> None:
    """Copy the target's ``tokenizer.ggml.*`` keys with their exact GGUF types (ik checks they match)."""
    if "tokenizer.ggml.model" not in model.kv:
        raise InputError("has no tokenizer.ggml.model: not a target GGUF with a tokenizer", path=target)
    target_mask = model.value("tokenizer.ggml.mask_token_id")
    if flavor == "ik" and target_mask is not None and target_mask != mask:
        raise BuildError(f"drafter mask_token_id {mask} differs from the target's {target_mask}", path=target)
    for key, entry in model.kv.items():
        if not key.startswith("tokenizer.") or key == "tokenizer.ggml.mask_token_id":
            continue
        sub = GGUFValueType(entry.elem_type) if entry.elem_type is not None else None
        writer.add_key_value(key, entry.value, GGUFValueType(entry.value_type), sub_type=sub)


def _plan(
    tensors: dict[str, SafeTensor], config: DrafterConfig, flavor: Flavor, outtype: OutType
) -> list[_Plan]:
    plans = []
    for hf_name in config.expected_tensors():
        shape = tensors[hf_name].shape
        name = gguf_name(hf_name, flavor)
        qtype = tensor_type(shape, outtype, name)
        nbytes = GGML_TYPES[qtype].nbytes(tuple(reversed(shape)))
        assert nbytes is not None
        plans.append(_Plan(hf_name, name, qtype, shape, nbytes))
    return plans


def quantize_rows(
    data: np.ndarray, qtype: GGMLQuantizationType, pool: ThreadPoolExecutor | None
) -> np.ndarray:
    """gguf.quants.quantize over row chunks in parallel; byte-identical to one call on the whole tensor."""
    if pool is None or qtype in (GGMLQuantizationType.F32, GGMLQuantizationType.F16) or data.ndim < 2:
        return np.asarray(quantize(data, qtype))
    rows = data.reshape(-1, data.shape[-1])
    step = max(1, _CHUNK_ELEMENTS // rows.shape[1])
    parts = pool.map(lambda start: quantize(rows[start : start + step], qtype), range(0, rows.shape[0], step))
    return np.concatenate(list(parts))


def build_gguf_drafter(
    source: Path,
    out: Path,
    *,
    flavor: Flavor,
    outtype: OutType,
    tokenizer_from: Path | GGUFSet | None = None,
    split_max_size: int = 0,
    jobs: int | None = None,
    progress: Progress = NULL_PROGRESS,
) -> list[BuiltFile]:
    """Convert a drafter folder to ``out`` (or ``out``'s ``-0000N-of-0000M`` shards); returns the files.

    ``tokenizer_from`` is a local target GGUF or a target already read with its tokenizer keys kept
    (``hub.remote_headers.read_hub_gguf``).
    """
    if not out.name.endswith(".gguf"):
        raise InputError("--out must name a .gguf file", path=out)
    config = load_config(source / "config.json")
    if config.rope_theta is None:
        raise BuildError(
            "config has no rope_theta (rope_parameters, top level or rope_scaling)", path=config.path
        )
    if flavor == "ik" and config.dflash2:
        raise BuildError("ik_llama.cpp has no DFlash2 support; use --flavor mainline", path=config.path)
    if tokenizer_from is None:
        # ik copies and checks the target's vocab (speculative-dflash-impl.h:17-30); mainline's vocab
        # loader requires tokenizer.ggml.model (src/llama-vocab.cpp:1944), so neither loads without it.
        raise InputError(
            f"--flavor {flavor} needs --tokenizer-from TARGET.gguf (the engine requires the target's tokenizer)"
        )
    check_config(config)
    tensors = checked_tensors(config, source)
    if isinstance(tokenizer_from, GGUFSet):
        target, target_path = tokenizer_from, tokenizer_from.shards[0].path
    else:
        target, target_path = (
            read_gguf(tokenizer_from, keep_key=lambda k: k.startswith("tokenizer.")),
            tokenizer_from,
        )
    _check_target(config, target, target_path, tensors["fc.weight"].shape[1])
    plans = _plan(tensors, config, flavor, outtype)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = staging_dir(out)
    try:
        writer = GGUFWriter(staging / out.name, ARCH[flavor], split_max_size=split_max_size)
        _add_hparams(writer, config, flavor, outtype, tensors["fc.weight"].shape[1])
        _add_tokenizer(writer, target, target_path, flavor, _need(config, "mask_token_id"))
        for plan in plans:
            writer.add_tensor_info(
                plan.name, plan.shape, np.dtype(np.float32), plan.nbytes, raw_dtype=plan.qtype
            )
        names = writer.format_shard_names(staging / out.name)
        _write(writer, plans, tensors, jobs or os.cpu_count() or 1, progress)
        finals = [out.parent / n.name for n in names]
        for staged, final in zip(names, finals, strict=True):
            os.replace(staged, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [BuiltFile.of(p) for p in finals]


def _write(
    writer: GGUFWriter, plans: list[_Plan], tensors: dict[str, SafeTensor], jobs: int, progress: Progress
) -> None:
    progress.start(sum(p.nbytes for p in plans), "gguf-drafter")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    with ThreadPoolExecutor(jobs) if jobs > 1 else contextlib.nullcontext() as pool:
        for plan in plans:
            data = quantize_rows(read_f32(tensors[plan.hf_name]), plan.qtype, pool)
            writer.write_tensor_data(data)
            progress.advance(plan.nbytes)
    for handle in writer.fout or []:
        handle.flush()
        os.fsync(handle.fileno())
    writer.close()
    progress.finish()
