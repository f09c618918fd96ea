"""A model file's architecture in the terms a consumer pairs on: layers, the target layers it taps,
vocabulary and dtype, from a GGUF header, a safetensors header or a config.json (no tensor data).

``diff`` names what changed between two releases with it, and ``push`` warns when a file would be
replaced in place under the same name by one of another architecture (a drafter retrained from 4 to
6 layers and from 6 to 8 taps under one name is what breaks pinned consumers).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hubrelease.formats.gguf_header import GGUFSet, array_length, read_gguf
from hubrelease.formats.safetensors_header import SafetensorsSet, read_json_object, read_safetensors
from hubrelease.formats.speculators import is_speculators, zlab_view

Architecture = dict[str, Any]
"""``layers``, ``target_layers``, ``vocab``, ``dtype``: whichever the file states."""
_LAYER = re.compile(r"(?:^|\.)(?:layers|blk)\.(\d+)\.")


def _known(facts: Architecture) -> Architecture:
    return {key: value for key, value in facts.items() if value is not None}


def gguf_architecture(model: GGUFSet) -> Architecture:
    arch = model.architecture or ""
    taps = next(
        (e.value for k, e in model.kv.items() if k.endswith((".target_layer_ids", ".target_layers"))), None
    )
    return _known(
        {
            "layers": model.value(f"{arch}.block_count"),
            "target_layers": list(taps) if isinstance(taps, (list, tuple)) else taps,
            "vocab": array_length(model.value("tokenizer.ggml.tokens")),
            "dtype": sorted(model.composition()),
        }
    )


def safetensors_architecture(model: SafetensorsSet) -> Architecture:
    layers = {int(m[1]) for t in model.tensors if (m := _LAYER.search(t.name))}
    return _known({"layers": len(layers) or None, "dtype": sorted(model.composition())})


def config_architecture(config: dict[str, Any]) -> Architecture:
    view = zlab_view(config) if is_speculators(config) else config
    nested = view.get("dflash_config")
    nested = nested if isinstance(nested, dict) else {}
    return _known(
        {
            "layers": view.get("num_hidden_layers"),
            "target_layers": nested.get("target_layer_ids", view.get("target_layer_ids")),
            "num_target_layers": view.get("num_target_layers"),
            "vocab": view.get("vocab_size"),
            "dtype": view.get("torch_dtype", view.get("dtype")),
        }
    )


def architecture_changes(old: Architecture, new: Architecture) -> list[tuple[str, Any, Any]]:
    """(field, old, new) for each field both state and that differs."""
    return [(key, old[key], new[key]) for key in old if key in new and old[key] != new[key]]


def describe_changes(changes: list[tuple[str, Any, Any]]) -> str:
    return ", ".join(f"{key} {old} -> {new}" for key, old, new in changes)


def is_model_file(path: str) -> bool:
    """Whether ``path`` states an architecture this module reads."""
    return path.endswith((".gguf", ".safetensors")) or path.rsplit("/", 1)[-1] == "config.json"


def local_architecture(path: Path) -> Architecture:
    """The architecture ``path`` (a GGUF, safetensors file or config.json) states, headers only."""
    if path.name.endswith(".gguf"):
        return gguf_architecture(read_gguf(path))
    if path.name.endswith(".safetensors"):
        return safetensors_architecture(read_safetensors(path))
    return config_architecture(read_json_object(path))
