"""Tiny but structurally faithful DFlash / DFlash2 drafters, target GGUFs and GGUFs with ik_llama.cpp type ids.

Dimensions are small, but config keys, tensor names and shape relations are the real ones
(fc: [H, K*H], q_proj: [heads*hd, H], conv projection: [2*taps*H/group, H] ...), so builders and
lint see what they would see on a published checkpoint. The dimensions fit the tiny Qwen3 target of
``tests.factories.targets`` (hidden 64, 8 layers, vocab 512, mask token 500), whose embedding and head
a drafter borrows. Row lengths are multiples of 32 where Q8_0
applies, except the selector codebooks (rank 8), which exercises the F16 fallback.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import gguf
import numpy as np
from safetensors.numpy import load_file, save_file

from tests.factories import targets

RopeStyle = Literal["nested", "flat", "both", "scaling", "none"]

HIDDEN = targets.HIDDEN
"""The drafter's hidden size is the target's: it embeds with the target's embedding table."""
HEADS = 4
KV_HEADS = 2
HEAD_DIM = 16
INTERMEDIATE = 128
LAYERS = 2
VOCAB = targets.VOCAB
TARGET_HIDDEN = targets.HIDDEN
TARGET_LAYERS = targets.LAYERS
TARGET_LAYER_IDS = [1, 3, 6]
"""All < TARGET_LAYERS - 1: the last layer's output is not a layer input the engines can capture."""
MASK_TOKEN_ID = targets.MASK_TOKEN_ID
ROPE_THETA = 10_000_000.0


def drafter_config(
    *, dflash2: bool = False, rope: RopeStyle = "nested", swa: bool = True, layers: int = LAYERS
) -> dict[str, Any]:
    """A config.json as z-lab / Qwen3.6-era exporters write it (``rope`` picks where rope_theta lives)."""
    dflash_config: dict[str, Any] = {
        "block_size": 16,
        "mask_token_id": MASK_TOKEN_ID,
        "target_layer_ids": list(TARGET_LAYER_IDS),
    }
    config: dict[str, Any] = {
        "architectures": ["DFlash2DraftModel" if dflash2 else "DFlashDraftModel"],
        "model_type": "qwen3",
        "hidden_size": HIDDEN,
        "intermediate_size": INTERMEDIATE,
        "num_hidden_layers": layers,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV_HEADS,
        "head_dim": HEAD_DIM,
        "rms_norm_eps": 1e-6,
        "vocab_size": VOCAB,
        "max_position_embeddings": 4096,
        "hidden_act": "silu",
        "attention_bias": False,
        "tie_word_embeddings": False,
        "num_target_layers": TARGET_LAYERS,
        "torch_dtype": "bfloat16",
        "dflash_config": dflash_config,
    }
    if rope in ("nested", "both"):
        config["rope_parameters"] = {"rope_theta": ROPE_THETA, "rope_type": "default"}
    if rope in ("flat", "both"):
        config["rope_theta"] = ROPE_THETA
    if rope == "scaling":
        config["rope_scaling"] = {"rope_theta": ROPE_THETA, "rope_type": "yarn", "factor": 2.0}
    if swa:
        config["use_sliding_window"] = True
        config["sliding_window"] = 256
        config["layer_types"] = ["sliding_attention"] * (layers - 1) + ["full_attention"]
    else:
        config["layer_types"] = ["full_attention"] * layers
    if dflash2:
        config["is_causal"] = False
        dflash_config.update(conv_kernel_size=2, conv_group_size=16, selector_rank=8, selector_top_k=4)
    return config


def drafter_tensors(config: dict[str, Any], seed: int = 0) -> dict[str, np.ndarray]:
    """Float32 tensors with the names and shapes a checkpoint for ``config`` holds."""
    rng = np.random.default_rng(seed)
    h = config["hidden_size"]
    k = len(config["dflash_config"]["target_layer_ids"])
    shapes: dict[str, tuple[int, ...]] = {}
    for n in range(config["num_hidden_layers"]):
        p = f"layers.{n}."
        shapes |= targets.layer_shapes(config, p)
        if "DFlash2DraftModel" in config["architectures"]:
            dc = config["dflash_config"]
            taps, group = dc["conv_kernel_size"], dc["conv_group_size"]
            for conv in ("attention_conv", "mlp_conv"):
                shapes[f"{p}{conv}.base_kernel"] = (2, taps, h)
                shapes[f"{p}{conv}.kernel_projection.weight"] = (2 * taps * h // group, h)
    if "DFlash2DraftModel" in config["architectures"]:
        rank, vocab = config["dflash_config"]["selector_rank"], config["vocab_size"]
        shapes["candidate_selector.hidden_projection.weight"] = (rank, h)
        shapes["candidate_selector.predecessor_codebook"] = (vocab, rank)
        shapes["candidate_selector.successor_codebook"] = (vocab, rank)
    shapes |= {"fc.weight": (h, k * h), "hidden_norm.weight": (h,), "norm.weight": (h,)}
    return {name: rng.standard_normal(shape, dtype=np.float32) * 0.02 for name, shape in shapes.items()}


def write_checkpoint(
    folder: Path,
    *,
    dflash2: bool = False,
    rope: RopeStyle = "nested",
    swa: bool = True,
    shards: int = 1,
    prefix: str = "",
    rotary: bool = True,
    drop: Sequence[str] = (),
    seed: int = 0,
    config: dict[str, Any] | None = None,
) -> Path:
    """A training checkpoint folder: config.json + ``shards`` .safetensors files (+ rotary buffers).

    ``config`` (e.g. ``drafter_config()`` with larger dims, for benchmarks) overrides the other options.
    """
    folder.mkdir(parents=True, exist_ok=True)
    config = config or drafter_config(dflash2=dflash2, rope=rope, swa=swa)
    tensors = {prefix + k: v for k, v in drafter_tensors(config, seed).items() if k not in drop}
    if rotary:
        tensors[prefix + "rotary_emb.inv_freq"] = np.ones(HEAD_DIM // 2, dtype=np.float32)
    names = sorted(tensors)
    for index in range(shards):
        part = {n: tensors[n] for n in names[index::shards]}
        save_file(part, str(folder / f"checkpoint-{index}.safetensors"), metadata={"step": "3228"})
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    return folder


def write_training_checkpoint(folder: Path, *, dflash2: bool = True) -> Path:
    """The example release's input: a DFlash2 checkpoint with nested rope, two shards and a rotary buffer."""
    return write_checkpoint(folder, dflash2=dflash2, rope="nested", shards=2, prefix="model.")


def write_target_gguf(
    path: Path, *, vocab: int = VOCAB, mask_token_id: int | None = None, hidden: int = TARGET_HIDDEN
) -> Path:
    """A tiny target-like GGUF with a complete ``tokenizer.ggml.*`` block (gpt2 style) and one tensor
    (``tests.factories.targets`` writes a complete model)."""
    writer = gguf.GGUFWriter(str(path), "qwen35")
    writer.add_block_count(TARGET_LAYERS)
    writer.add_embedding_length(hidden)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list([f"tok{i}" for i in range(vocab)])
    writer.add_token_types([1] * vocab)
    writer.add_token_merges(["t o", "to k"])
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(False)
    if mask_token_id is not None:
        writer.add_mask_token_id(mask_token_id)
    writer.add_tensor("token_embd.weight", np.zeros((vocab, hidden), dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def _add_plain(writer: gguf.GGUFWriter, key: str, value: Any) -> None:
    if isinstance(value, bool):
        writer.add_bool(key, value)
    elif isinstance(value, int):
        writer.add_uint32(key, value)
    elif isinstance(value, float):
        writer.add_float32(key, value)
    elif isinstance(value, str):
        writer.add_string(key, value)
    else:
        writer.add_array(key, value)


RawTensor = tuple[str, tuple[int, ...], int, int]
"""(name, ggml shape ne0-first, raw type id, nbytes)."""


def write_raw_gguf(
    path: Path, arch: str, kv: dict[str, Any], tensors: Sequence[RawTensor], *, split_max_tensors: int = 0
) -> Path:
    """A GGUF whose tensors carry raw type ids (ik's 144, 146, 156 ... that gguf-py has no enum for).

    Values are plain Python: int -> UINT32, float -> FLOAT32, bool -> BOOL, str, lists as arrays.
    ``split_max_tensors`` > 0 writes gguf-py's ``-0000N-of-0000M`` shards instead (``path`` names the set).
    """
    writer = gguf.GGUFWriter(str(path), arch, split_max_tensors=split_max_tensors)
    for key, value in kv.items():
        _add_plain(writer, key, value)
    for name, shape, type_id, nbytes in tensors:
        # A non-uint8 dtype makes GGUFWriter keep ``shape`` as the logical ne shape (reversed to numpy order).
        writer.add_tensor_info(name, tuple(reversed(shape)), np.dtype(np.float32), nbytes, raw_dtype=type_id)  # type: ignore[arg-type]  # ids gguf-py may not know
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for name, _, _, nbytes in tensors:
        writer.write_tensor_data(np.frombuffer(name.encode().ljust(nbytes, b"\x5a")[:nbytes], dtype=np.uint8))
    writer.close()
    return path


def write_ik_mixed_gguf(path: Path) -> Path:
    """A seed-001-like 'q4' drafter: F32 norms, Q8_0, IQ3_KS (156) and IQ4_KSS (146) tensors, ik arch."""
    from hubrelease.formats.ggml_types import BY_NAME

    def raw(name: str, ne: tuple[int, ...], type_name: str) -> RawTensor:
        size = BY_NAME[type_name].nbytes(ne)
        assert size is not None
        return (name, ne, BY_NAME[type_name].id, size)

    tensors = [
        raw("output_norm.weight", (256,), "F32"),
        raw("blk.0.attn_q.weight", (256, 4), "Q8_0"),
        raw("blk.0.ffn_up.weight", (256, 8), "IQ3_KS"),
        raw("blk.0.ffn_down.weight", (512, 4), "IQ4_KSS"),
        raw("blk.0.ffn_gate.weight", (256, 3), "IQ3_KS"),
    ]
    kv = {"dflash-draft.block_count": 1, "dflash-draft.rope.freq_base": ROPE_THETA}
    return write_raw_gguf(path, "dflash-draft", kv, tensors)


def write_vocab_gguf(path: Path, n_tokens: int = 250_000, *, type_id: int = 0) -> Path:
    """A target-like GGUF with an ``n_tokens`` vocabulary (tokens, scores, types, merges) and one tensor."""
    writer = gguf.GGUFWriter(str(path), "qwen35")
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list([f"token_{i}" for i in range(n_tokens)])
    writer.add_token_scores([0.0] * n_tokens)
    writer.add_token_types([1] * n_tokens)
    writer.add_token_merges([f"a{i} b{i}" for i in range(n_tokens)])
    from hubrelease.formats.ggml_types import GGML_TYPES

    ne = (256, 4)
    nbytes = GGML_TYPES[type_id].nbytes(ne)
    assert nbytes is not None
    writer.add_tensor_info(
        "token_embd.weight",
        tuple(reversed(ne)),
        np.dtype(np.float32),
        nbytes,
        raw_dtype=type_id,  # type: ignore[arg-type]  # ids gguf-py may not know
    )
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    writer.write_tensor_data(np.zeros(nbytes, dtype=np.uint8))
    writer.close()
    return path


def mutate_gguf(
    src: Path,
    dst: Path,
    *,
    set_kv: dict[str, Any] | None = None,
    drop_kv: Sequence[str] = (),
    rename: dict[str, str] | None = None,
    drop_tensors: Sequence[str] = (),
    take_from: Path | None = None,
    take: Sequence[str] = (),
    split_max_tensors: int = 0,
) -> Path:
    """Copy a GGUF (any type ids) with keys changed or dropped and tensors renamed or dropped.

    A changed key keeps its original GGUF type; a new key is typed like ``write_raw_gguf`` does.
    The tensors named in ``take`` come from ``take_from`` instead (the same model in another type: a
    mixed-precision file). ``split_max_tensors`` > 0 writes ``-0000N-of-0000M`` shards (``dst`` names the set).
    """
    from hubrelease.formats.gguf_header import read_gguf

    model = read_gguf(src, keep_key=lambda _: True)
    arch = set_kv.get("general.architecture", model.architecture) if set_kv else model.architecture
    writer = gguf.GGUFWriter(str(dst), str(arch), split_max_tensors=split_max_tensors)
    changes = dict(set_kv or {})
    for key, entry in model.kv.items():
        if key in drop_kv or key == "general.architecture":
            continue
        value = changes.pop(key, entry.value)
        sub = gguf.GGUFValueType(entry.elem_type) if entry.elem_type is not None else None
        writer.add_key_value(key, value, gguf.GGUFValueType(entry.value_type), sub_type=sub)
    changes.pop("general.architecture", None)
    kept = [(shard.path, t) for shard in model.shards for t in shard.tensors if t.name not in drop_tensors]
    if take_from is not None:
        other = {t.name: (shard.path, t) for shard in read_gguf(take_from).shards for t in shard.tensors}
        kept = [other[t.name] if t.name in take else (path, t) for path, t in kept]
    for _, tensor in kept:
        name = (rename or {}).get(tensor.name, tensor.name)
        writer.add_tensor_info(
            name,
            tuple(reversed(tensor.shape)),
            np.dtype(np.float32),
            tensor.nbytes,
            raw_dtype=tensor.type_id,  # type: ignore[arg-type]  # ids gguf-py may not know
        )
    for key, value in changes.items():
        _add_plain(writer, key, value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for path, tensor in kept:
        writer.write_tensor_data(np.fromfile(path, dtype=np.uint8, count=tensor.nbytes, offset=tensor.offset))
    writer.close()
    return dst


def naive_convert(src: Path, dst: Path) -> Path:
    """What a top-level-only converter writes for a nested-rope config: no ``rope.freq_base`` (loaders use 1e4)."""
    from hubrelease.formats.gguf_header import read_gguf

    arch = read_gguf(src).architecture
    return mutate_gguf(src, dst, drop_kv=(f"{arch}.rope.freq_base",))


def edit_checkpoint(
    folder: Path,
    *,
    config: dict[str, Any] | None = None,
    dflash_config: dict[str, Any] | None = None,
    drop_keys: Sequence[str] = (),
    shapes: dict[str, tuple[int, ...]] | None = None,
) -> Path:
    """One-defect variants of a checkpoint: config keys changed or dropped (top level or in
    ``dflash_config``), tensors replaced by random ones of another shape (the names stay)."""
    data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    data |= config or {}
    data["dflash_config"] |= dflash_config or {}
    for key in drop_keys:
        data.pop(key, None)
    (folder / "config.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    rng = np.random.default_rng(1)
    for part in sorted(folder.glob("*.safetensors")):
        tensors = load_file(str(part))
        changed = {n: s for n, s in (shapes or {}).items() if n in tensors}
        if changed:
            tensors |= {n: rng.standard_normal(s, dtype=np.float32) for n, s in changed.items()}
            save_file(tensors, str(part))
    return folder
