"""Training checkpoint folder -> SGLang-ready safetensors drafter (byte-deterministic).

Tensors are streamed one at a time and the safetensors container is written here, not through
``safetensors.numpy.save_file``: that needs every tensor in memory at once, and numpy has no bfloat16.
The bf16 rounding itself is gguf.quants' (ggml's round-to-nearest-even).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
from gguf import GGMLQuantizationType
from gguf.quants import dequantize, quantize

from hubrelease.errors import BuildError, InputError
from hubrelease.formats.dflash import DrafterConfig, load_config
from hubrelease.formats.dflash_shapes import hf_shapes, shape_mismatches
from hubrelease.formats.safetensors_header import DTYPE_SIZES, INDEX_NAME, SafeTensor, read_safetensors
from hubrelease.fsutil import atomic_open, atomic_write_text
from hubrelease.hashing import sha256_file
from hubrelease.lint.drafter_config import auto_map_modules, config_findings
from hubrelease.progress import NULL_PROGRESS, Progress

Cast = Literal["bf16", "keep"]
_SHARD = re.compile(r"^model(-\d{5}-of-\d{5})?\.safetensors$")


@dataclass(frozen=True)
class BuiltFile:
    """A file a builder wrote, with what a manifest records about it."""

    path: Path
    size: int
    sha256: str

    @classmethod
    def of(cls, path: Path) -> BuiltFile:
        return cls(path, path.stat().st_size, sha256_file(path))


def is_rotary_buffer(name: str) -> bool:
    """Rotary caches are recomputed at load time; MLX's strict loader rejects them, SGLang ignores them."""
    return "rotary_emb" in name or name.endswith("inv_freq")


def checked_tensors(config: DrafterConfig, source: Path) -> dict[str, SafeTensor]:
    """The checkpoint's tensors by flat name (no ``model.``, no rotary buffers), exactly the set the config implies."""
    tensors = {t.name.removeprefix("model."): t for t in read_safetensors(source).tensors}
    tensors = {n: t for n, t in tensors.items() if not is_rotary_buffer(n)}
    if config.num_layers > len(tensors):
        # Each layer has 11 tensors: listing the names of a lying count would never end.
        raise BuildError(
            f"num_hidden_layers {config.num_layers} claims more layers than the checkpoint has tensors "
            f"({len(tensors)})",
            path=config.path,
            field="num_hidden_layers",
        )
    expected = config.expected_tensors()
    missing = [n for n in expected if n not in tensors]
    extra = sorted(set(tensors) - set(expected))
    kind = "DFlash2" if config.dflash2 else "DFlash"
    if missing or extra:
        parts = [f"{len(missing)} missing (first: {missing[0]})"] if missing else []
        parts += [f"{len(extra)} unexpected (first: {extra[0]})"] if extra else []
        raise BuildError(f"tensor set does not match the {kind} config: {'; '.join(parts)}", path=source)
    mismatches = shape_mismatches({n: t.shape for n, t in tensors.items()}, hf_shapes(config))
    if mismatches:
        name, message = mismatches[0]
        more = f" (and {len(mismatches) - 1} more)" if len(mismatches) > 1 else ""
        raise BuildError(f"{message}{more}", path=tensors[name].path)
    return tensors


def load_checked(source: Path, out: Path) -> DrafterConfig:
    """The checkpoint folder's config, refused (exit 2, one line) before anything is written."""
    if not source.is_dir():
        raise InputError("expected a checkpoint folder with config.json and .safetensors files", path=source)
    if out.resolve() == source.resolve():
        raise InputError("--out must differ from the source folder", path=out)
    config = load_config(source / "config.json")
    check_config(config)
    return config


def check_config(config: DrafterConfig, *, ignore: tuple[str, ...] = ()) -> None:
    """Raise the first config error a loader would fail on (``hubrelease lint`` lists them all)."""
    errors = [f for f in config_findings(config) if f.severity == "error" and f.rule_id not in ignore]
    if errors:
        more = f" (and {len(errors) - 1} more: run hubrelease lint)" if len(errors) > 1 else ""
        raise BuildError(f"{errors[0].message}{more}", path=config.path, field=errors[0].field)


def read_f32(tensor: SafeTensor) -> np.ndarray:
    """One tensor's data as float32 in numpy order (the only full copy held at a time)."""
    count = tensor.nbytes // DTYPE_SIZES[tensor.dtype]
    if tensor.dtype == "BF16":
        raw = np.fromfile(tensor.path, dtype=np.uint8, count=tensor.nbytes, offset=tensor.start)
        return dequantize(raw, GGMLQuantizationType.BF16).reshape(tensor.shape)
    dtypes = {"F32": np.float32, "F16": np.float16, "F64": np.float64}
    if tensor.dtype not in dtypes:
        raise BuildError(
            f"tensor {tensor.name!r} has dtype {tensor.dtype}; expected a float type", path=tensor.path
        )
    data = np.fromfile(tensor.path, dtype=dtypes[tensor.dtype], count=count, offset=tensor.start)
    return data.astype(np.float32, copy=False).reshape(tensor.shape)


def normalised_config(config: DrafterConfig, cast: Cast) -> dict[str, Any]:
    """config.json with the rope base both nested and top-level, so every loader and converter sees it."""
    if config.rope_theta is None:
        raise BuildError(
            "config has no rope_theta (rope_parameters, top level or rope_scaling)", path=config.path
        )
    data: dict[str, Any] = json.loads(json.dumps(config.raw))
    # Without rope_parameters, a legacy rope_scaling (yarn ...) seeds it, so the two cannot disagree.
    nested: dict[str, Any] = next(
        (data[k] for k in ("rope_parameters", "rope_scaling") if isinstance(data.get(k), dict)), {}
    )
    # Older rope_scaling blocks spell the kind "type".
    kind = nested.get("type", "default")
    data["rope_parameters"] = {"rope_type": kind, **nested, "rope_theta": config.rope_theta}
    data["rope_theta"] = config.rope_theta
    # Both placements: z-lab reads the top level (dflash/model.py:319), SGLang dflash_config first.
    data["block_size"] = config.block_size
    if not isinstance(data.get("dflash_config"), dict):
        data["dflash_config"] = {}
    data["dflash_config"]["block_size"] = config.block_size
    if cast == "bf16":
        data["torch_dtype"] = "bfloat16"
    return data


def _payload(tensor: SafeTensor, cast: Cast) -> bytes:
    if cast == "keep" or tensor.dtype == "BF16":
        with tensor.path.open("rb") as handle:
            handle.seek(tensor.start)
            return handle.read(tensor.nbytes)
    return bytes(quantize(read_f32(tensor), GGMLQuantizationType.BF16).tobytes())


def _out_dtype(tensor: SafeTensor, cast: Cast) -> str:
    return tensor.dtype if cast == "keep" else "BF16"


def _header(names: list[str], tensors: dict[str, SafeTensor], cast: Cast) -> bytes:
    entries: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name in names:
        tensor = tensors[name]
        size = tensor.nbytes // DTYPE_SIZES[tensor.dtype] * DTYPE_SIZES[_out_dtype(tensor, cast)]
        entries[name] = {
            "dtype": _out_dtype(tensor, cast),
            "shape": list(tensor.shape),
            "data_offsets": [offset, offset + size],
        }
        offset += size
    raw = json.dumps(entries, separators=(",", ":")).encode()
    # Pad with spaces to 8 bytes, as the safetensors writer does, so tensor data stays aligned.
    return raw + b" " * (-len(raw) % 8)


def _plan(
    names: list[str], tensors: dict[str, SafeTensor], cast: Cast, max_shard: int | None
) -> list[list[str]]:
    shards: list[list[str]] = [[]]
    used = 0
    for name in names:
        tensor = tensors[name]
        size = tensor.nbytes // DTYPE_SIZES[tensor.dtype] * DTYPE_SIZES[_out_dtype(tensor, cast)]
        if max_shard and shards[-1] and used + size > max_shard:
            shards.append([])
            used = 0
        shards[-1].append(name)
        used += size
    return shards


def build_safetensors_drafter(
    source: Path,
    out: Path,
    *,
    cast: Cast = "bf16",
    max_shard_size: int | None = None,
    progress: Progress = NULL_PROGRESS,
    warn: Callable[[str], None] = lambda _: None,
) -> list[BuiltFile]:
    """Write ``out/model.safetensors`` (or shards + index), a normalised ``out/config.json`` and the
    ``auto_map`` module files (an ``auto_map`` whose module is missing is dropped, through ``warn``)."""
    config = load_checked(source, out)
    tensors = checked_tensors(config, source)
    normalised = normalised_config(config, cast)
    modules = auto_map_modules(config)
    missing = [m for m in modules if not (source / m).is_file()]
    if missing:
        # AutoModel.from_pretrained(trust_remote_code=True) would import a file the release lacks.
        del normalised["auto_map"]
        modules = []
        warn(
            f"auto_map dropped: {', '.join(missing)} is not in {source} (trust_remote_code loading would fail)"
        )
    written = write_weights(tensors, out, cast, max_shard_size, progress)
    atomic_write_text(out / "config.json", json.dumps(normalised, indent=2, sort_keys=True) + "\n")
    written.append(out / "config.json")
    for module in modules:
        (out / module).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / module, (source / module).read_text(encoding="utf-8"))
        written.append(out / module)
    return [BuiltFile.of(p) for p in written]


def write_weights(
    tensors: dict[str, SafeTensor],
    out: Path,
    cast: Cast,
    max_shard_size: int | None,
    progress: Progress = NULL_PROGRESS,
) -> list[Path]:
    """Stream ``tensors`` (sorted by name) into ``out/model.safetensors``, or shards + their index."""
    names = sorted(tensors)
    shards = _plan(names, tensors, cast, max_shard_size)
    files = (
        ["model.safetensors"]
        if len(shards) == 1
        else [f"model-{i:05d}-of-{len(shards):05d}.safetensors" for i in range(1, len(shards) + 1)]
    )
    out.mkdir(parents=True, exist_ok=True)
    progress.start(sum(t.nbytes for t in tensors.values()), "safetensors-drafter")
    weight_map: dict[str, str] = {}
    total = 0
    for file, shard in zip(files, shards, strict=True):
        header = _header(shard, tensors, cast)
        with atomic_open(out / file, "wb", encoding=None) as handle:
            handle.write(len(header).to_bytes(8, "little") + header)
            for name in shard:
                data = _payload(tensors[name], cast)
                handle.write(data)
                total += len(data)
                weight_map[name] = file
                progress.advance(tensors[name].nbytes)
    progress.finish()
    _remove_stale(out, set(files))
    written = [out / f for f in files]
    if len(files) > 1:
        index = {"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}
        atomic_write_text(out / INDEX_NAME, json.dumps(index, indent=2, sort_keys=True) + "\n")
        written.append(out / INDEX_NAME)
    return written


def _remove_stale(out: Path, keep: set[str]) -> None:
    """Drop model files of an earlier build with a different sharding, so the folder holds one model."""
    for path in out.iterdir():
        if (_SHARD.match(path.name) and path.name not in keep) or (
            path.name == INDEX_NAME and len(keep) == 1
        ):
            path.unlink()
