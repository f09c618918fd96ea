"""Header-only safetensors reader: one file, or a sharded set described by ``model.safetensors.index.json``.

``safetensors.safe_open`` would do for well-formed files, but it cannot say *where* a file is broken,
and its numpy backend has no bfloat16. Reading the 8-byte length and the JSON header ourselves lets us
bound the length before allocating, cross-check every tensor's byte range and report offsets.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hubrelease.errors import FormatError, InputError

MAX_HEADER = 100 * 1024 * 1024
"""The safetensors format caps the JSON header at 100 MB; a larger length field is a lie."""
INDEX_NAME = "model.safetensors.index.json"
DTYPE_SIZES: dict[str, int] = {
    "BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "F8_E8M0": 1,
    "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
    "I32": 4, "U32": 4, "F32": 4,
    "I64": 8, "U64": 8, "F64": 8,
}  # fmt: skip


@dataclass(frozen=True)
class SafeTensor:
    """A tensor's declaration: numpy-order ``shape``, dtype name and absolute data byte range in ``path``."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    path: Path
    start: int
    end: int

    @property
    def nbytes(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class SafetensorsSet:
    """All tensors of a file or sharded set, in header order per file, plus each file's ``__metadata__``."""

    files: tuple[Path, ...]
    tensors: tuple[SafeTensor, ...]
    metadata: dict[str, str]

    def by_name(self) -> dict[str, SafeTensor]:
        return {t.name: t for t in self.tensors}

    def bytes_per_dtype(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for tensor in self.tensors:
            totals[tensor.dtype] = totals.get(tensor.dtype, 0) + tensor.nbytes
        return dict(sorted(totals.items()))

    def composition(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for tensor in self.tensors:
            counts[tensor.dtype] = counts.get(tensor.dtype, 0) + 1
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def read_safetensors_header(path: str | Path) -> tuple[list[SafeTensor], dict[str, str]]:
    """Parse one file's header and check that the byte ranges tile the data section exactly."""
    target = Path(path)
    try:
        size = target.stat().st_size
        with target.open("rb") as handle:
            head = handle.read(8)
            if len(head) < 8:
                raise FormatError(
                    f"truncated: {size} bytes, the 8-byte header length is incomplete at byte offset 0",
                    path=target,
                )
            (length,) = struct.unpack("<Q", head)
            if length > MAX_HEADER or length > size - 8:
                raise FormatError(
                    f"header length field says {length} bytes but the file has {size - 8} after it "
                    "(truncated or corrupt) at byte offset 0",
                    path=target,
                )
            raw = handle.read(length)
    except FileNotFoundError as exc:
        raise InputError("no such file", path=target) from exc
    except IsADirectoryError as exc:
        raise InputError("is a directory, expected a .safetensors file", path=target) from exc
    try:
        header = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        # ValueError covers bad UTF-8, bad JSON and integers over Python's 4300-digit limit;
        # RecursionError is what deeply nested brackets raise.
        where = 8 + getattr(exc, "pos", getattr(exc, "start", 0))
        raise FormatError(f"header is not valid JSON at byte offset {where}", path=target) from exc
    if not isinstance(header, dict):
        raise FormatError("header is not a JSON object at byte offset 8", path=target)
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise FormatError("__metadata__ must map strings to strings at byte offset 8", path=target)
    base = 8 + length
    tensors = [_tensor(name, spec, target, base) for name, spec in header.items()]
    _check_tiling(tensors, target, base, size)
    return tensors, metadata


def _tensor(name: str, spec: object, path: Path, base: int) -> SafeTensor:
    if not isinstance(spec, dict):
        raise FormatError(f"tensor {name!r}: entry is not an object at byte offset 8", path=path)
    dtype, shape, offsets = spec.get("dtype"), spec.get("shape"), spec.get("data_offsets")
    if not isinstance(dtype, str) or dtype not in DTYPE_SIZES:
        raise FormatError(f"tensor {name!r}: unknown dtype {dtype!r} at byte offset 8", path=path)
    if not (isinstance(shape, list) and all(type(d) is int and d >= 0 for d in shape)):
        raise FormatError(
            f"tensor {name!r}: shape must be a list of non-negative ints at byte offset 8", path=path
        )
    if not (
        isinstance(offsets, list) and len(offsets) == 2 and all(type(o) is int and o >= 0 for o in offsets)
    ):
        raise FormatError(f"tensor {name!r}: data_offsets must be [begin, end] at byte offset 8", path=path)
    begin, end = offsets
    count = 1
    for dim in shape:
        count *= dim
    if end - begin != count * DTYPE_SIZES[dtype]:
        raise FormatError(
            f"tensor {name!r}: {dtype}{shape} needs {count * DTYPE_SIZES[dtype]} bytes but data_offsets span "
            f"{end - begin} at byte offset {base + begin}",
            path=path,
        )
    return SafeTensor(name, dtype, tuple(shape), path, base + begin, base + end)


def _check_tiling(tensors: list[SafeTensor], path: Path, base: int, size: int) -> None:
    cursor = base
    for tensor in sorted(tensors, key=lambda t: (t.start, t.end)):
        if tensor.start != cursor:
            kind = "overlaps the previous tensor" if tensor.start < cursor else "leaves a gap"
            raise FormatError(f"tensor {tensor.name!r} {kind} at byte offset {tensor.start}", path=path)
        cursor = tensor.end
    if cursor > size:
        raise FormatError(
            f"truncated: tensor data ends at byte offset {cursor} but the file has {size} bytes", path=path
        )


def read_safetensors(path: str | Path) -> SafetensorsSet:
    """Read a ``.safetensors`` file, an index json, or a folder holding either."""
    target = Path(path)
    if target.is_dir():
        index = target / INDEX_NAME
        single = target / "model.safetensors"
        if index.exists():
            target = index
        elif single.exists():
            target = single
        else:
            files = sorted(target.glob("*.safetensors"))
            if not files:
                raise InputError("folder holds no .safetensors files", path=target)
            return _merge([(f, *read_safetensors_header(f)) for f in files])
    if target.name.endswith(".index.json"):
        return _read_index(target)
    return _merge([(target, *read_safetensors_header(target))])


def read_json_object(path: Path) -> dict[str, Any]:
    """A JSON file that must hold an object (config.json, index json), with one-line errors."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InputError("no such file", path=path) from exc
    except (ValueError, RecursionError) as exc:
        raise FormatError(f"not valid JSON: {exc}", path=path) from exc
    if not isinstance(data, dict):
        raise FormatError("must be a JSON object", path=path)
    return data


def _read_index(index: Path) -> SafetensorsSet:
    data = read_json_object(index)
    weight_map = data.get("weight_map")
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise FormatError("index has no weight_map of tensor name -> file", path=index, field="weight_map")
    shards = sorted(set(weight_map.values()))
    parts = []
    for shard in shards:
        if "/" in shard or "\\" in shard or shard.startswith("."):
            raise FormatError(
                f"weight_map names a file outside the folder: {shard!r}", path=index, field="weight_map"
            )
        parts.append((index.parent / shard, *read_safetensors_header(index.parent / shard)))
    merged = _merge(parts)
    declared = set(weight_map)
    found = {t.name: t.path.name for t in merged.tensors}
    wrong = sorted(n for n in declared if found.get(n) != weight_map[n])
    extra = sorted(set(found) - declared)
    if wrong or extra:
        detail = f"{len(wrong)} listed tensors not in their shard (first: {wrong[0]})" if wrong else ""
        detail += ("; " if wrong and extra else "") + (
            f"{len(extra)} unlisted (first: {extra[0]})" if extra else ""
        )
        raise FormatError(f"index and shards disagree: {detail}", path=index, field="weight_map")
    total = data.get("metadata", {}).get("total_size") if isinstance(data.get("metadata"), dict) else None
    actual = sum(t.nbytes for t in merged.tensors)
    if total is not None and total != actual:
        raise FormatError(
            f"metadata.total_size is {total} but the shards hold {actual} tensor bytes", path=index
        )
    return merged


def _merge(parts: list[tuple[Path, list[SafeTensor], dict[str, str]]]) -> SafetensorsSet:
    seen: dict[str, Path] = {}
    tensors: list[SafeTensor] = []
    metadata: dict[str, str] = {}
    for path, file_tensors, file_meta in parts:
        for tensor in file_tensors:
            if tensor.name in seen:
                raise FormatError(f"tensor {tensor.name!r} is also in {seen[tensor.name].name}", path=path)
            seen[tensor.name] = path
            tensors.append(tensor)
        for key, value in file_meta.items():
            metadata.setdefault(key, value)
    return SafetensorsSet(tuple(p for p, _, _ in parts), tuple(tensors), metadata)
