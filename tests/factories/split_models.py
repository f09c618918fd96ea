"""Hub-sized target models in miniature: a split ik_llama.cpp GGUF set and a sharded safetensors model.

The split set is laid out like seed 001's target (``...-IQ2_KS-0000N-of-00005.gguf``): the tokenizer
and hyperparameters in shard 1, ik row-scaled types (IQ2_KS, IQ3_KS, IQ4_KS) beside Q8_0 and F32,
and far more tensor data than header, so header-only reads can be measured as a share of the bytes.
"""

from __future__ import annotations

from pathlib import Path

from hubrelease.builders.safetensors_drafter import build_safetensors_drafter
from hubrelease.formats.ggml_types import BY_NAME
from tests.factories.drafters import TARGET_HIDDEN, RawTensor, write_checkpoint, write_raw_gguf

ROW = 4096
"""Row length (ne0) of the expert and attention tensors: a multiple of the 256-element ik blocks.
The embedding width is the factory drafters' ``TARGET_HIDDEN``, so their fc fits this target."""
SAFETENSORS_SHARD = 60_000
"""Shard size for ``write_sharded_safetensors``: the factory drafter in bf16 makes three shards."""


def _raw(name: str, ne: tuple[int, ...], type_name: str) -> RawTensor:
    size = BY_NAME[type_name].nbytes(ne)
    assert size is not None
    return (name, ne, BY_NAME[type_name].id, size)


def write_ik_split_target(
    folder: Path, *, shards: int = 5, vocab: int = 512, layers: int = 10, rows: int = 1024
) -> list[Path]:
    """A qwen35moe-like target in ``shards`` files, 3 tensors per layer; returns the shard paths in order."""
    folder.mkdir(parents=True, exist_ok=True)
    tensors = [_raw("token_embd.weight", (TARGET_HIDDEN, vocab), "Q8_0")]
    for layer in range(layers):
        tensors += [
            _raw(f"blk.{layer}.attn_norm.weight", (TARGET_HIDDEN,), "F32"),
            _raw(f"blk.{layer}.ffn_up_exps.weight", (ROW, rows), "IQ2_KS"),
            _raw(f"blk.{layer}.ffn_down_exps.weight", (ROW, rows), "IQ3_KS"),
            _raw(f"blk.{layer}.attn_q.weight", (ROW, rows // 2), "IQ4_KS"),
        ]
    tensors.append(_raw("output_norm.weight", (TARGET_HIDDEN,), "F32"))
    kv = {
        "general.name": "Ornith-mini",
        "qwen35moe.block_count": layers,
        "qwen35moe.embedding_length": TARGET_HIDDEN,
        "qwen35moe.rope.freq_base": 10_000_000.0,
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.tokens": [f"tok{i}" for i in range(vocab)],
        "tokenizer.ggml.token_type": [1] * vocab,
        "tokenizer.ggml.merges": [f"t{i} o{i}" for i in range(vocab)],
        "tokenizer.ggml.bos_token_id": 1,
        "tokenizer.ggml.eos_token_id": 2,
    }
    per_shard = -(-len(tensors) // shards)
    write_raw_gguf(folder / "Ornith-mini-IQ2_KS.gguf", "qwen35moe", kv, tensors, split_max_tensors=per_shard)
    paths = [folder / f"Ornith-mini-IQ2_KS-{i:05d}-of-{shards:05d}.gguf" for i in range(1, shards + 1)]
    assert all(p.exists() for p in paths), sorted(folder.iterdir())
    return paths


def write_sharded_safetensors(folder: Path) -> Path:
    """A drafter as ``build safetensors-drafter`` publishes it: config.json, 3 shards and the index json."""
    source = write_checkpoint(folder.parent / f"{folder.name}-checkpoint", shards=2)
    build_safetensors_drafter(source, folder, cast="bf16", max_shard_size=SAFETENSORS_SHARD)
    assert len(list(folder.glob("*.safetensors"))) == 3, sorted(folder.iterdir())
    return folder
