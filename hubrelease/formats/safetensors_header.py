"""Header-only safetensors reader: one file, or a sharded set described by ``model.safetensors.index.json``.

``safetensors.safe_open`` would do for well-formed files, but it cannot say *where* a file is broken,
and its numpy backend has no bfloat16. Reading the 8-byte length and the JSON header ourselves lets us
bound the length before allocating, cross-check every tensor's byte range and report offsets.
The parsing half works on bytes, so a header range-read from the Hub goes through the same checks.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hubrelease.errors import FormatError, InputError
from hubrelease.printable import shown
from hubrelease.safe_parse import (
    U64_DIGITS,
    ScreenError,
    bounded_product,
    load_json,
    name_problem,
    parse_json,
)

MAX_HEADER = 100 * 1024 * 1024
"""The safetensors format caps the JSON header at 100 MB; a larger length field is a lie."""
INDEX_NAME = "model.safetensors.index.json"
USIZE_MAX = 2**64 - 1
"""The safetensors crate's shapes, offsets and sizes are ``usize``: a 64-bit machine's bound on all three."""
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
class SafetensorsHeader:
    """One file's header: its tensors and ``__metadata__``, the file size and the header's digest."""

    path: Path
    size: int
    tensors: tuple[SafeTensor, ...]
    metadata: dict[str, str]
    header_sha256: str
    """SHA-256 of the 8-byte length and the JSON header: what a header pin (``lock``) records."""


@dataclass(frozen=True)
class SafetensorsSet:
    """All tensors of a file or sharded set, in header order per file, plus each file's ``__metadata__``."""

    files: tuple[Path, ...]
    tensors: tuple[SafeTensor, ...]
    metadata: dict[str, str]
    headers: tuple[SafetensorsHeader, ...] = ()
    """Per-file headers, in ``files`` order (empty when built from bare tensors)."""

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
    header = load_safetensors_header(path)
    return list(header.tensors), header.metadata


def load_safetensors_header(path: str | Path) -> SafetensorsHeader:
    """One local file's header (see ``parse_safetensors_header``)."""
    target = Path(path)
    try:
        size = target.stat().st_size
        with target.open("rb") as handle:
            head = handle.read(8)
            raw = head + handle.read(header_span(head, size, target) - 8)
    except FileNotFoundError as exc:
        raise InputError("no such file", path=target) from exc
    except IsADirectoryError as exc:
        raise InputError("is a directory, expected a .safetensors file", path=target) from exc
    return parse_safetensors_header(raw, size, target)


def header_span(head: bytes, size: int, path: Path) -> int:
    """Bytes the header occupies (the 8-byte length + the JSON), from the file's first 8 bytes."""
    if len(head) < 8:
        raise FormatError(
            f"truncated: {size} bytes, the 8-byte header length is incomplete at byte offset 0", path=path
        )
    (length,) = struct.unpack("<Q", head[:8])
    if length > MAX_HEADER or length > size - 8:
        raise FormatError(
            f"header length field says {length} bytes but the file has {size - 8} after it "
            "(truncated or corrupt) at byte offset 0",
            path=path,
        )
    return 8 + int(length)


def parse_safetensors_header(raw: bytes, size: int, path: Path) -> SafetensorsHeader:
    """Parse a ``size``-byte file's header from ``raw`` (its first ``header_span`` bytes, or more)."""
    span = header_span(raw, size, path)
    if len(raw) < span:
        raise FormatError(f"truncated: the header needs {span} bytes, {len(raw)} were read", path=path)
    raw = raw[:span]
    length = span - 8
    try:
        # Every number of a header is a usize to the safetensors crate, so one of more than 20 digits
        # is refused before Python converts it (3,000 shape dimensions of 4,200 digits took minutes).
        header = parse_json(raw[8:], int_digits=U64_DIGITS)
    except ScreenError as exc:
        where = 8 + (exc.pos or 0)
        raise FormatError(
            f"header is not valid JSON: {exc.problem} at byte offset {where}", path=path
        ) from None
    if not isinstance(header, dict):
        raise FormatError("header is not a JSON object at byte offset 8", path=path)
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise FormatError("__metadata__ must map strings to strings at byte offset 8", path=path)
    base = 8 + length
    tensors = [_tensor(name, spec, path, base) for name, spec in header.items()]
    _check_tiling(tensors, path, base, size)
    return SafetensorsHeader(path, size, tuple(tensors), metadata, hashlib.sha256(raw).hexdigest())


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
    # As the safetensors crate refuses it (safetensors/src/tensor.rs, Metadata::validate: the shape's
    # product by try_fold(1usize, usize::checked_mul), then checked_mul by the dtype's size, else
    # ValidationOverflow): an element count or byte size past usize is refused before it is used.
    count = bounded_product(shape, USIZE_MAX)
    nbytes = None if count is None else bounded_product((count, DTYPE_SIZES[dtype]), USIZE_MAX)
    if nbytes is None:
        raise FormatError(
            f"tensor {name!r}: shape {shown(shape)} of {dtype} overflows a 64-bit byte count at byte offset 8",
            path=path,
        )
    if end - begin != nbytes:
        raise FormatError(
            f"tensor {name!r}: {dtype}{shape} needs {nbytes} bytes but data_offsets span "
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
            return merge_headers([load_safetensors_header(f) for f in files])
    if target.name.endswith(".index.json"):
        return _read_index(target)
    return merge_headers([load_safetensors_header(target)])


def read_json_object(path: Path) -> dict[str, Any]:
    """A JSON file that must hold an object (config.json, index json), with one-line errors."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise InputError("no such file", path=path) from exc
    return parse_json_object(raw, path)


def parse_json_object(raw: bytes, path: str | Path) -> dict[str, Any]:
    """JSON bytes that must hold an object; ``path`` names the file in errors."""
    data = load_json(raw, path, error=FormatError, what="not valid JSON")
    if not isinstance(data, dict):
        raise FormatError("must be a JSON object", path=path)
    return data


def _read_index(index: Path) -> SafetensorsSet:
    data = read_json_object(index)
    shards = index_shards(data, index)
    return checked_index(
        data, merge_headers([load_safetensors_header(index.parent / s) for s in shards]), index
    )


def index_shards(data: dict[str, Any], index: Path) -> list[str]:
    """The shard file names an index's ``weight_map`` names (sorted), each inside the index's folder."""
    weight_map = data.get("weight_map")
    if not isinstance(weight_map, dict) or not all(isinstance(v, str) for v in weight_map.values()):
        raise FormatError("index has no weight_map of tensor name -> file", path=index, field="weight_map")
    shards = sorted(set(weight_map.values()))
    for shard in shards:
        problem = name_problem(shard)
        if problem is not None:
            raise FormatError(f"weight_map's file name {shard!r} {problem}", path=index, field="weight_map")
        if "/" in shard or "\\" in shard or shard.startswith("."):
            raise FormatError(
                f"weight_map names a file outside the folder: {shard!r}", path=index, field="weight_map"
            )
    return shards


def checked_index(data: dict[str, Any], merged: SafetensorsSet, index: Path) -> SafetensorsSet:
    """``merged`` (the shards ``index_shards`` named) after checking it against the index."""
    weight_map = data["weight_map"]
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


def merge_headers(parts: list[SafetensorsHeader]) -> SafetensorsSet:
    """Files of one model as one set; a tensor name in two files is an error."""
    seen: dict[str, Path] = {}
    tensors: list[SafeTensor] = []
    metadata: dict[str, str] = {}
    for part in parts:
        for tensor in part.tensors:
            if tensor.name in seen:
                raise FormatError(
                    f"tensor {tensor.name!r} is also in {seen[tensor.name].name}", path=part.path
                )
            seen[tensor.name] = part.path
            tensors.append(tensor)
        for key, value in part.metadata.items():
            metadata.setdefault(key, value)
    return SafetensorsSet(tuple(p.path for p in parts), tuple(tensors), metadata, tuple(parts))
