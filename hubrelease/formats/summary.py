"""What ``hubrelease inspect`` reports about a model file: plain data, built from headers only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hubrelease.errors import InputError
from hubrelease.formats.dflash import rope_theta_lookup
from hubrelease.formats.gguf_header import GGUFSet, KVValue, SkippedArray, array_length, read_gguf
from hubrelease.formats.safetensors_header import SafetensorsSet, read_json_object, read_safetensors

# Key suffixes worth showing whatever the architecture prefix is.
_KEY_SUFFIXES = (
    ".rope.freq_base",
    ".block_size",
    ".target_layer_ids",
    ".target_layers",
    ".n_target_features",
    ".mask_token_id",
    ".block_count",
    ".embedding_length",
    ".attention.sliding_window",
    ".attention.sliding_window_pattern",
    "general.file_type",
    "general.name",
    "split.count",
)
_CONFIG_KEYS = (
    "architectures",
    "hidden_size",
    "num_hidden_layers",
    "sliding_window",
    "layer_types",
    "vocab_size",
)


def _plain(value: KVValue) -> Any:
    if isinstance(value, SkippedArray):
        return {"array_of": value.elem_type_name, "count": value.count}
    return value


def summarize(path: str | Path) -> dict[str, Any]:
    """A JSON-ready summary of a GGUF (file or split set) or a safetensors file / index / folder."""
    target = Path(path)
    if target.name.endswith(".gguf"):
        return gguf_summary(read_gguf(target))
    if target.is_dir() or target.name.endswith((".safetensors", ".index.json")):
        model = read_safetensors(target)
        config_path = (target if target.is_dir() else target.parent) / "config.json"
        return safetensors_summary(model, read_json_object(config_path) if config_path.exists() else None)
    raise InputError("expected a .gguf, .safetensors, index json or folder", path=target)


def gguf_summary(model: GGUFSet) -> dict[str, Any]:
    """The summary of a GGUF file or split set, however its header bytes were read."""
    metadata = {
        key: _plain(entry.value)
        for key, entry in model.kv.items()
        if key.endswith(_KEY_SUFFIXES) and not key.startswith("tokenizer.ggml.tokens")
    }
    return {
        "format": "gguf",
        "files": [
            {"path": str(s.path), "size": s.file_size, "header_sha256": s.header_sha256} for s in model.shards
        ],
        "version": model.shards[0].version,
        "architecture": model.architecture,
        "alignment": model.shards[0].alignment,
        "kv_count": len(model.kv),
        "tokenizer_tokens": array_length(model.value("tokenizer.ggml.tokens")),
        "metadata": metadata,
        "tensor_count": len(model.tensors),
        "composition": model.composition(),
        "bytes_per_type": model.bytes_per_type(),
        "unknown_types": sorted({t.type_name for t in model.tensors if t.size_from_offsets}),
    }


def safetensors_summary(model: SafetensorsSet, config: dict[str, Any] | None) -> dict[str, Any]:
    """The summary of a safetensors file or set, with facts from the model's config.json when given."""
    metadata: dict[str, Any] = {}
    if config is not None:
        theta, source = rope_theta_lookup(config)
        dflash = config.get("dflash_config")
        dflash = dflash if isinstance(dflash, dict) else {}
        metadata = {k: config[k] for k in _CONFIG_KEYS if k in config}
        metadata |= {"rope_theta": theta, "rope_theta_source": source}
        for key in ("block_size", "target_layer_ids", "mask_token_id"):
            value = dflash.get(key, config.get(key))
            if value is not None:
                metadata[key] = value
    return {
        "format": "safetensors",
        "files": [
            {"path": str(h.path), "size": h.size, "header_sha256": h.header_sha256} for h in model.headers
        ],
        "header_metadata": model.metadata,
        "metadata": metadata,
        "tensor_count": len(model.tensors),
        "composition": model.composition(),
        "bytes_per_type": model.bytes_per_dtype(),
    }
