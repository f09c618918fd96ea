"""What ``hubrelease inspect`` reports about a model file: plain data, built from headers only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hubrelease.errors import InputError
from hubrelease.formats.dflash import rope_theta_lookup
from hubrelease.formats.gguf_header import KVValue, SkippedArray, array_length, read_gguf
from hubrelease.formats.safetensors_header import read_json_object, read_safetensors

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
        return _gguf(target)
    if target.is_dir() or target.name.endswith((".safetensors", ".index.json")):
        return _safetensors(target)
    raise InputError("expected a .gguf, .safetensors, index json or folder", path=target)


def _gguf(path: Path) -> dict[str, Any]:
    model = read_gguf(path)
    metadata = {
        key: _plain(entry.value)
        for key, entry in model.kv.items()
        if key.endswith(_KEY_SUFFIXES) and not key.startswith("tokenizer.ggml.tokens")
    }
    return {
        "format": "gguf",
        "files": [{"path": str(s.path), "size": s.file_size} for s in model.shards],
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


def _safetensors(path: Path) -> dict[str, Any]:
    model = read_safetensors(path)
    folder = path if path.is_dir() else path.parent
    config_path = folder / "config.json"
    metadata: dict[str, Any] = {}
    if config_path.exists():
        config = read_json_object(config_path)
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
        "files": [{"path": str(f), "size": f.stat().st_size} for f in model.files],
        "header_metadata": model.metadata,
        "metadata": metadata,
        "tensor_count": len(model.tensors),
        "composition": model.composition(),
        "bytes_per_type": model.bytes_per_dtype(),
    }
