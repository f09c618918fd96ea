"""The files an engine loads, picked from the manifest (never from a guess at the repo's layout).

llama.cpp and ik_llama.cpp load one GGUF (the recommended one, every shard of a split set) of their
own flavour: a builder's recipe records it (``flavor``), else a tensor type only ik loads marks an ik
file. SGLang loads a z-lab folder (config.json and its safetensors), vLLM a speculators folder (a
config.json with ``speculators_model_type``, ``formats.speculators``); which folder is which is read
from the configs themselves, so they are fetched (checked, a few kB) before any weights.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath
from typing import Any, Literal

from hubrelease.errors import InputError
from hubrelease.formats.ggml_types import BY_NAME
from hubrelease.formats.gguf_header import split_names
from hubrelease.formats.speculators import is_speculators
from hubrelease.manifest.models import Artifact, Manifest

EngineName = Literal["sglang", "vllm", "llama.cpp", "ik"]
PIN_NAMES: dict[EngineName, tuple[str, ...]] = {
    "sglang": ("sglang",),
    "vllm": ("vllm",),
    "llama.cpp": ("llama.cpp", "llama-cpp", "mainline"),
    "ik": ("ik_llama.cpp", "ik-llama.cpp", "ik"),
}
"""How ``pins.engines[].name`` and evaluations spell each engine."""
CONFIG = "config.json"


def engine_of(name: str) -> EngineName | None:
    """The engine a ``pins.engines`` name stands for, if ``pull`` knows it."""
    lowered = name.lower()
    return next((engine for engine, names in PIN_NAMES.items() if lowered in names), None)


def config_paths(manifest: Manifest) -> list[str]:
    """Every config.json the release publishes: what tells a z-lab folder from a speculators one."""
    return [a.path for a in manifest.artifacts if PurePosixPath(a.path).name == CONFIG]


def _folder(path: str) -> str:
    return str(PurePosixPath(path).parent)


def gguf_flavor(
    artifact: Artifact, default: Literal["ik", "mainline"] = "mainline"
) -> Literal["ik", "mainline"]:
    """The recipe's ``flavor``, else ``ik`` when the file holds a type only ik_llama.cpp loads, else
    ``default`` (what the release's measurements imply: ``measured_flavor``)."""
    recorded = artifact.recipe.options.get("flavor") if artifact.recipe is not None else None
    if recorded in ("ik", "mainline"):
        return "ik" if recorded == "ik" else "mainline"
    kinds = [BY_NAME.get(name) for name in artifact.composition or {}]
    return "ik" if any(t is not None and t.origin == "ik" for t in kinds) else default


def measured_flavor(manifest: Manifest) -> Literal["ik", "mainline"]:
    """``ik`` when every llama.cpp-family engine the release pins is ik_llama.cpp: a GGUF that says
    nothing of its flavour was made for the engine it was measured with, and a mainline reader
    should not download a file its engine may not load."""
    family = [e.name.lower() for e in manifest.pins.engines if "llama" in e.name.lower()]
    return "ik" if family and all(name.startswith("ik") for name in family) else "mainline"


def _gguf(manifest: Manifest, engine: EngineName) -> list[Artifact]:
    flavor = "ik" if engine == "ik" else "mainline"
    default = measured_flavor(manifest)
    ggufs = [a for a in manifest.artifacts if a.path.endswith(".gguf") and gguf_flavor(a, default) == flavor]
    if not ggufs:
        return []
    chosen = next((a for a in ggufs if a.role == "recommended"), ggufs[0])
    folder = PurePosixPath(chosen.path).parent
    shards = {str(folder / name) for name in split_names(PurePosixPath(chosen.path).name, chosen.path)}
    picked = [a for a in manifest.artifacts if a.path in shards]
    if len(picked) != len(shards):
        raise InputError(f"the manifest lists {len(picked)} of the {len(shards)} shards of {chosen.path}")
    return picked


def _folder_files(
    manifest: Manifest, configs: Mapping[str, dict[str, Any]], speculators: bool
) -> list[Artifact]:
    folders = [_folder(path) for path, config in configs.items() if is_speculators(config) == speculators]
    if not folders:
        return []
    recommended = {_folder(a.path) for a in manifest.artifacts if a.role == "recommended"}
    folder = next((f for f in folders if f in recommended), folders[0])
    return [
        a
        for a in manifest.artifacts
        if _folder(a.path) == folder
        and (
            a.path.endswith((".safetensors", ".safetensors.index.json"))
            or PurePosixPath(a.path).name == CONFIG
        )
    ]


def engine_files(
    manifest: Manifest, engine: EngineName, configs: Mapping[str, dict[str, Any]]
) -> list[Artifact]:
    """What ``engine`` loads, in manifest order; exit 2 when the release has nothing it loads.

    ``configs`` are the release's config.json files (``config_paths``), parsed.
    """
    if engine in ("llama.cpp", "ik"):
        files = _gguf(manifest, engine)
        wanted = f"a {'ik_llama.cpp' if engine == 'ik' else 'mainline'} GGUF"
    else:
        files = _folder_files(manifest, configs, speculators=engine == "vllm")
        wanted = "a speculators folder" if engine == "vllm" else "a z-lab folder (config.json + safetensors)"
    if not any(a.path.endswith((".gguf", ".safetensors")) for a in files):
        raise InputError(f"the release publishes no files {engine} loads ({wanted})")
    return files
