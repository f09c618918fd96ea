"""Header-only GGUF reader that never chokes: unknown type ids, huge vocabularies, lying lengths.

Why not ``gguf.GGUFReader``: it raises inside ``__init__`` on any tensor type id missing from its enum (all
ik_llama.cpp types), memory-maps the whole file, and builds one numpy view per array element, so a
250k-token vocabulary costs seconds. Here arrays longer than ``keep_array`` are skipped (type and count
recorded), every length is checked against the bytes left before anything is allocated, and tensor
sizes are cross-checked against the offsets. Tensor data is never read.

The parser also works on the first bytes of a file only (a ranged read from the Hub): when they end
before the header does, it raises ``NeedMore`` with the offset it needs and a guess of where the header
ends, so the caller can fetch the rest in as few requests as possible.
"""

from __future__ import annotations

import hashlib
import mmap
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hubrelease.errors import FormatError, InputError
from hubrelease.formats.ggml_types import GGML_TYPES, type_name
from hubrelease.safe_parse import bounded_product, name_problem

GGUF_MAGIC = b"GGUF"
DEFAULT_ALIGNMENT = 32
MAX_DIMS = 4
INT64_MAX = 2**63 - 1
"""ggml's element counts (``ne``) are int64: a tensor of more elements cannot be loaded."""
KEEP_ARRAY = 256
"""Arrays up to this many elements are materialised; longer ones are recorded as type + count."""

# GGUF value types (ggml docs/gguf.md): id -> (name, struct format or None for string/array).
_SCALARS: dict[int, tuple[str, str]] = {
    0: ("UINT8", "<B"),
    1: ("INT8", "<b"),
    2: ("UINT16", "<H"),
    3: ("INT16", "<h"),
    4: ("UINT32", "<I"),
    5: ("INT32", "<i"),
    6: ("FLOAT32", "<f"),
    7: ("BOOL", "<?"),
    10: ("UINT64", "<Q"),
    11: ("INT64", "<q"),
    12: ("FLOAT64", "<d"),
}
STRING, ARRAY = 8, 9
_VALUE_TYPE_NAMES = {**{k: v[0] for k, v in _SCALARS.items()}, STRING: "STRING", ARRAY: "ARRAY"}
_U64 = struct.Struct("<Q")
_SPLIT = re.compile(r"^(?P<stem>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")
# Upper bound of one tensor info (name length, 4 dims, type, offset) plus a name, for read-size guesses.
_TENSOR_INFO_GUESS = 128


class NeedMore(Exception):
    """The bytes given end before the header does (only raised when the file is longer than them).

    ``end`` is the least number of bytes from the file start the parser needs to get further;
    ``guess`` is where the header probably ends, extrapolated from the array or table it stopped in;
    ``least`` where it ends at the earliest, from the declared counts (13 bytes per key, 24 per tensor
    info, 8 per string still to come in a table): a remote read refuses a header declaring more than
    its cap before fetching it.
    """

    def __init__(self, end: int, guess: int, least: int = 0) -> None:
        super().__init__(f"header continues past byte {end}")
        self.end = end
        self.least = max(least, end)
        self.guess = max(guess, self.least)


@dataclass(frozen=True)
class SkippedArray:
    """An array too long to materialise (e.g. a vocabulary): element type and count only."""

    elem_type: int
    count: int

    @property
    def elem_type_name(self) -> str:
        return _VALUE_TYPE_NAMES.get(self.elem_type, "?")

    def __repr__(self) -> str:
        return f"<{self.elem_type_name}[{self.count}]>"


KVValue = int | float | bool | str | list["KVValue"] | SkippedArray


def array_length(value: KVValue | None) -> int | None:
    """Element count of an array value, materialised or skipped; None for scalars and absent keys."""
    if isinstance(value, SkippedArray):
        return value.count
    return len(value) if isinstance(value, list) else None


@dataclass(frozen=True)
class KVEntry:
    """One metadata key: GGUF value type, element type for arrays, value and where it starts."""

    value_type: int
    value: KVValue
    elem_type: int | None
    offset: int

    @property
    def type_label(self) -> str:
        label = _VALUE_TYPE_NAMES[self.value_type]
        if self.elem_type is not None:
            label += f"[{_VALUE_TYPE_NAMES.get(self.elem_type, '?')}]"
        return label


@dataclass(frozen=True)
class TensorInfo:
    """A tensor as the header declares it; ``shape`` is ggml order (ne0 = row length first)."""

    name: str
    shape: tuple[int, ...]
    type_id: int
    offset: int
    """Absolute byte offset of the data in its file."""
    nbytes: int
    """Data bytes: from the type table, or from the offsets for a type nobody knows."""
    size_from_offsets: bool = False

    @property
    def type_name(self) -> str:
        return type_name(self.type_id)


@dataclass(frozen=True)
class GGUFHeader:
    """Everything in one GGUF file except the tensor data."""

    path: Path
    version: int
    kv: dict[str, KVEntry]
    tensors: tuple[TensorInfo, ...]
    alignment: int
    data_offset: int
    file_size: int
    header_size: int
    """Bytes from the file start to the end of the tensor infos (magic, counts, metadata, tensor infos)."""
    header_sha256: str
    """SHA-256 of those ``header_size`` bytes: what a header pin (``lock``) records."""

    def value(self, key: str) -> KVValue | None:
        entry = self.kv.get(key)
        return entry.value if entry else None


@dataclass(frozen=True)
class GGUFSet:
    """A GGUF file or a ``-0000N-of-0000M.gguf`` split set read as one model."""

    shards: tuple[GGUFHeader, ...]
    kv: dict[str, KVEntry] = field(init=False)
    tensors: tuple[TensorInfo, ...] = field(init=False)

    def __post_init__(self) -> None:
        merged: dict[str, KVEntry] = {}
        for shard in self.shards:
            for key, entry in shard.kv.items():
                merged.setdefault(key, entry)
        object.__setattr__(self, "kv", merged)
        object.__setattr__(self, "tensors", tuple(t for s in self.shards for t in s.tensors))

    def value(self, key: str) -> KVValue | None:
        entry = self.kv.get(key)
        return entry.value if entry else None

    @property
    def architecture(self) -> str | None:
        arch = self.value("general.architecture")
        return arch if isinstance(arch, str) else None

    def composition(self) -> dict[str, int]:
        """Tensor count per type name, most frequent first (ties by name)."""
        counts: dict[str, int] = {}
        for tensor in self.tensors:
            counts[tensor.type_name] = counts.get(tensor.type_name, 0) + 1
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    def bytes_per_type(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for tensor in self.tensors:
            totals[tensor.type_name] = totals.get(tensor.type_name, 0) + tensor.nbytes
        return dict(sorted(totals.items(), key=lambda item: (-item[1], item[0])))


class _Cursor:
    """Bounds-checked little-endian reads over a memory map; every failure names the byte offset.

    ``size`` is the file's size, ``avail`` how many of its first bytes ``buf`` holds: running past
    ``size`` is a truncated file, running past ``avail`` only means more bytes must be fetched.
    """

    def __init__(self, buf: mmap.mmap | bytes, path: Path, size: int | None = None) -> None:
        self.buf = buf
        self.pos = 0
        self.avail = len(buf)
        self.size = self.avail if size is None else size
        self.path = path
        self.n_tensors = 0
        self.in_tensors = False
        # (start offset, items done, items in all) of the innermost table being read, for NeedMore guesses.
        self.table: tuple[int, int, int] | None = None
        self.floor = 0
        """Where the header ends at the earliest, from its declared key and tensor counts."""

    def fail(self, message: str, at: int | None = None) -> FormatError:
        return FormatError(f"{message} at byte offset {self.pos if at is None else at}", path=self.path)

    def more(self, end: int) -> NeedMore:
        """``NeedMore`` guessing the header end from the table (or array) the parser stopped in.

        The tensor infos end the header: their extrapolated end plus 1/8. In the metadata the table is
        usually ``tokenizer.ggml.tokens``, which scores, token types and merges of similar size follow,
        so the guess adds twice its size again, then room for the tensor infos.
        """
        start, table_end, least = self.pos, end, max(end, self.floor)
        if self.table is not None:
            start, done, total = self.table
            least = max(least, self.pos + (total - done - 1) * 8)  # a table's every string takes 8 bytes
            if done > 0:
                table_end = max(end, start + (self.pos - start) * total // done)
        span = table_end - start
        if self.in_tensors:
            return NeedMore(end, table_end + span // 8, least)
        return NeedMore(end, table_end + 2 * span + self.n_tensors * _TENSOR_INFO_GUESS, least)

    def bound(self, nbytes: int, what: str) -> None:
        """``nbytes`` must fit in the file (a lying length or count is caught before any allocation)."""
        if nbytes > self.size - self.pos:
            raise self.fail(f"truncated: {what} needs {nbytes} bytes but only {self.size - self.pos} remain")

    def need(self, nbytes: int, what: str) -> None:
        """``nbytes`` must fit in the file and be in the buffer."""
        self.bound(nbytes, what)
        if nbytes > self.avail - self.pos:
            raise self.more(self.pos + nbytes)

    def unpack(self, fmt: str, what: str) -> int | float | bool:
        width = struct.calcsize(fmt)
        self.need(width, what)
        (value,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += width
        return value  # type: ignore[no-any-return]

    def u32(self, what: str) -> int:
        return int(self.unpack("<I", what))

    def u64(self, what: str) -> int:
        return int(self.unpack("<Q", what))

    def string(self, what: str) -> str:
        start = self.pos
        length = self.u64(f"{what} length")
        self.need(length, f"{what} ({length} bytes)")
        raw = self.buf[self.pos : self.pos + length]
        self.pos += length
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail(f"{what} is not valid UTF-8", at=start) from exc

    def name(self, what: str) -> str:
        """A key or tensor name: a string that is also a name (no NUL, ``safe_parse.name_problem``)."""
        start = self.pos
        name = self.string(what)
        problem = name_problem(name)
        if problem is not None:
            raise self.fail(f"{what} {name!r} {problem}", at=start)
        return name

    def skip_strings(self, count: int, what: str) -> None:
        # The hot loop of a 250k-token vocabulary: locals only, one bounds check per element.
        buf, pos, avail, unpack = self.buf, self.pos, self.avail, _U64.unpack_from
        start = pos
        for index in range(count):
            if pos + 8 > avail:
                self.pos = pos
                self.table = (start, index, count)
                self.need(8, f"{what}[{index}] length")
            end = pos + 8 + unpack(buf, pos)[0]
            if end > avail:
                self.pos = pos + 8
                self.table = (start, index, count)
                self.need(end - pos - 8, f"{what}[{index}] ({end - pos - 8} bytes)")
            pos = end
        self.pos = pos

    def value(self, vtype: int, what: str, keep: int, depth: int = 0) -> tuple[KVValue, int | None]:
        if vtype in _SCALARS:
            return self.unpack(_SCALARS[vtype][1], what), None
        if vtype == STRING:
            return self.string(what), None
        if vtype != ARRAY:
            raise self.fail(f"{what}: unknown value type {vtype}", at=self.pos - 4)
        if depth > 2:
            raise self.fail(f"{what}: arrays nested too deeply")
        elem = self.u32(f"{what} element type")
        count = self.u64(f"{what} element count")
        if elem in _SCALARS:
            width = struct.calcsize(_SCALARS[elem][1])
            # Checked before any allocation: a lying count cannot exceed the bytes left.
            self.need(count * width, f"{what} ({count} x {_SCALARS[elem][0]})")
            if count > keep:
                self.pos += count * width
                return SkippedArray(elem, count), elem
            fmt = "<" + _SCALARS[elem][1][1] * count
            values = list(struct.unpack_from(fmt, self.buf, self.pos))
            self.pos += count * width
            return values, elem
        if elem == STRING:
            self.bound(count * 8, f"{what} ({count} strings)")
            if count > keep:
                self.skip_strings(count, what)
                return SkippedArray(elem, count), elem
            strings: list[KVValue] = []
            start = self.pos
            for i in range(count):
                self.table = (start, i, count)
                strings.append(self.string(f"{what}[{i}]"))
            return strings, elem
        if elem == ARRAY:
            self.bound(count * 12, f"{what} ({count} arrays)")
            if count > keep:
                # Walked for bounds checks, but each inner value is dropped as soon as it is read.
                for i in range(count):
                    self.value(ARRAY, f"{what}[{i}]", keep, depth + 1)
                return SkippedArray(elem, count), elem
            return [self.value(ARRAY, f"{what}[{i}]", keep, depth + 1)[0] for i in range(count)], elem
        raise self.fail(f"{what}: unknown array element type {elem}", at=self.pos - 12)


def read_gguf_header(
    path: str | Path, *, keep_array: int = KEEP_ARRAY, keep_key: Callable[[str], bool] | None = None
) -> GGUFHeader:
    """Parse one GGUF file's header. ``keep_key(key)`` true = materialise that key's array whatever its length."""
    target = Path(path)
    try:
        with target.open("rb") as handle:
            size = target.stat().st_size
            if size < 24:  # mmap refuses an empty file; the parser names the problem
                return parse_gguf_header(handle.read(), size, target)
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                return parse_gguf_header(buf, size, target, keep_array=keep_array, keep_key=keep_key)
    except FileNotFoundError as exc:
        raise InputError("no such file", path=target) from exc
    except IsADirectoryError as exc:
        raise InputError("is a directory, expected a .gguf file", path=target) from exc


def parse_gguf_header(
    buf: mmap.mmap | bytes,
    size: int,
    path: Path,
    *,
    keep_array: int = KEEP_ARRAY,
    keep_key: Callable[[str], bool] | None = None,
) -> GGUFHeader:
    """Parse the header of a ``size``-byte GGUF file from its first ``len(buf)`` bytes.

    Raises ``NeedMore`` when ``buf`` ends inside the header of a longer file, ``FormatError`` when the
    file itself is broken.
    """
    cur = _Cursor(buf, path, size)
    if size < 24:
        raise FormatError(
            f"truncated: {size} bytes is too small for a GGUF header at byte offset 0", path=path
        )
    cur.need(24, "the fixed header")
    return _parse(cur, keep_array, keep_key)


def _parse(cur: _Cursor, keep_array: int, keep_key: Callable[[str], bool] | None) -> GGUFHeader:
    if bytes(cur.buf[0:4]) != GGUF_MAGIC:
        raise cur.fail(f"not a GGUF file (magic {bytes(cur.buf[0:4])!r})")
    cur.pos = 4
    version = cur.u32("version")
    if version not in (2, 3):
        raise cur.fail(f"unsupported GGUF version {version}", at=4)
    n_tensors = cur.u64("tensor count")
    n_kv = cur.u64("metadata count")
    # A key is at least 8 (length) + 4 (type) + 1 bytes, a tensor info at least 8 + 4 + 4 + 8 bytes.
    if n_kv * 13 > cur.size - cur.pos:
        raise cur.fail(f"metadata count {n_kv} cannot fit in the file", at=16)
    if n_tensors * 24 > cur.size - cur.pos:
        raise cur.fail(f"tensor count {n_tensors} cannot fit in the file", at=8)
    cur.n_tensors = n_tensors
    cur.floor = cur.pos + n_kv * 13 + n_tensors * 24
    if cur.floor > cur.size:
        raise cur.fail(f"{n_kv} keys and {n_tensors} tensors cannot fit in the file", at=8)
    if cur.floor > cur.avail:  # a remote read learns the least it must fetch before fetching any of it
        raise cur.more(cur.floor)

    kv: dict[str, KVEntry] = {}
    for index in range(n_kv):
        start = cur.pos
        cur.table = None
        key = cur.name(f"key #{index}")
        vtype = cur.u32(f"type of {key}")
        keep = 2**63 if keep_key and keep_key(key) else keep_array
        value, elem = cur.value(vtype, key, keep)
        if key in kv:
            raise cur.fail(f"duplicate key {key!r}", at=start)
        kv[key] = KVEntry(vtype, value, elem, start)

    alignment = _alignment(cur, kv)
    raw: list[tuple[str, tuple[int, ...], int, int, int]] = []
    names: set[str] = set()
    tensors_start = cur.pos
    cur.in_tensors = True
    for index in range(n_tensors):
        start = cur.pos
        cur.table = (tensors_start, index, n_tensors)
        name = cur.name(f"tensor #{index} name")
        n_dims = cur.u32(f"{name} n_dims")
        if not 1 <= n_dims <= MAX_DIMS:
            raise cur.fail(f"tensor {name!r} has {n_dims} dimensions (1..{MAX_DIMS} allowed)", at=cur.pos - 4)
        shape = tuple(cur.u64(f"{name} dim") for _ in range(n_dims))
        # ik_llama.cpp refuses a tensor whose element count overflows int64 before sizing it
        # (ggml/src/ggml.c:31055-31067, gguf_tensor_info_sanitize: INT64_MAX/ne[1] > ne[0], and so
        # on for ne[2] and ne[3]; mainline's gguf.cpp makes the same check).
        if max(shape) > INT64_MAX or bounded_product(shape, INT64_MAX) is None:
            raise cur.fail(f"tensor {name!r}: shape {list(shape)} has more than INT64_MAX elements", at=start)
        type_id = cur.u32(f"{name} type")
        rel = cur.u64(f"{name} offset")
        if name in names:
            raise cur.fail(f"duplicate tensor name {name!r}", at=start)
        if rel % alignment:
            raise cur.fail(
                f"tensor {name!r} data offset {rel} is not a multiple of the alignment {alignment}",
                at=cur.pos - 8,
            )
        names.add(name)
        raw.append((name, shape, type_id, rel, start))

    header_size = cur.pos
    data_offset = -(-header_size // alignment) * alignment
    tensors = _sized(cur, raw, data_offset, alignment)
    with memoryview(cur.buf) as view, view[:header_size] as head:  # no copy of a large header
        digest = hashlib.sha256(head).hexdigest()
    return GGUFHeader(cur.path, version, kv, tensors, alignment, data_offset, cur.size, header_size, digest)


def _alignment(cur: _Cursor, kv: dict[str, KVEntry]) -> int:
    entry = kv.get("general.alignment")
    if entry is None:
        return DEFAULT_ALIGNMENT
    value = entry.value
    if entry.value_type != 4 or not isinstance(value, int) or value <= 0 or value & (value - 1):
        raise cur.fail(f"general.alignment must be a power-of-two UINT32, got {value!r}", at=entry.offset)
    return value


def _sized(
    cur: _Cursor, raw: list[tuple[str, tuple[int, ...], int, int, int]], data_offset: int, alignment: int
) -> tuple[TensorInfo, ...]:
    """Attach byte sizes and check that each tensor fits between its offset and the next one."""
    order = sorted(range(len(raw)), key=lambda i: raw[i][3])
    sizes: dict[int, tuple[int, bool]] = {}
    for rank, index in enumerate(order):
        name, shape, type_id, rel, info_at = raw[index]
        start = data_offset + rel
        end_limit = data_offset + raw[order[rank + 1]][3] if rank + 1 < len(order) else cur.size
        known = GGML_TYPES.get(type_id)
        expected = known.nbytes(shape) if known else None
        if known and expected is None:
            raise cur.fail(
                f"tensor {name!r}: row length {shape[0]} is not a multiple of {known.name} block {known.block}",
                at=info_at,
            )
        if expected is None:
            sizes[index] = (end_limit - start, True)
            if end_limit < start:
                raise cur.fail(f"tensor {name!r} data offset is past the end of the file", at=info_at)
            continue
        if start + expected > end_limit:
            if rank + 1 == len(order):
                raise cur.fail(
                    f"truncated: tensor {name!r} ({expected} bytes at byte offset {start}) ends past the end of "
                    f"the file ({cur.size} bytes)",
                    at=start,
                )
            raise cur.fail(
                f"tensor {name!r} ({expected} bytes at byte offset {start}) overlaps the next tensor "
                f"at byte offset {end_limit}",
                at=start,
            )
        padded = -(-expected // alignment) * alignment
        if rank + 1 < len(order) and end_limit - start > padded:
            raise cur.fail(
                f"tensor {name!r} declares {expected} bytes but the next tensor starts {end_limit - start} "
                "bytes later (size and offsets disagree)",
                at=start,
            )
        sizes[index] = (expected, False)
    return tuple(
        TensorInfo(name, shape, type_id, data_offset + rel, *sizes[i])
        for i, (name, shape, type_id, rel, _) in enumerate(raw)
    )


def split_names(name: str, path: str | Path | None = None) -> list[str]:
    """File names of the split set a GGUF named ``name`` belongs to (just ``[name]`` for a plain name)."""
    match = _SPLIT.match(name)
    if not match:
        return [name]
    count = int(match["count"])
    if count < 1 or int(match["no"]) > count:
        raise InputError(f"split name says shard {match['no']} of {match['count']}", path=path or name)
    return [f"{match['stem']}-{i:05d}-of-{count:05d}.gguf" for i in range(1, count + 1)]


def split_shards(path: Path) -> list[Path]:
    """All files of the split set ``path`` belongs to (just ``[path]`` when it is not a split name)."""
    names = split_names(path.name, path)
    if len(names) == 1:
        return [path]
    shards = [path.with_name(name) for name in names]
    missing = [s.name for s in shards if not s.exists()]
    if missing:
        raise InputError(f"split set is incomplete: missing {', '.join(missing)}", path=path)
    return shards


def read_gguf(path: str | Path, *, keep_key: Callable[[str], bool] | None = None) -> GGUFSet:
    """Read a GGUF file, or the whole split set any of its shards belongs to, and check the split keys."""
    return gguf_set([read_gguf_header(p, keep_key=keep_key) for p in split_shards(Path(path))])


def split_problems(shards: list[GGUFHeader]) -> list[tuple[Path, str]]:
    """What the loaders refuse in a split set's keys (mainline src/llama-model-loader.cpp:595-672):
    each shard's ``split.no`` / ``split.count`` its place, ``split.tensors.count`` the set's tensors."""
    if len(shards) < 2:
        return []
    problems = [
        (shard.path, f"split.no/split.count do not say shard {index} of {len(shards)}")
        for index, shard in enumerate(shards)
        if shard.value("split.no") != index or shard.value("split.count") != len(shards)
    ]
    total, found = shards[0].value("split.tensors.count"), sum(len(s.tensors) for s in shards)
    if total != found:
        problems.append(
            (shards[0].path, f"split.tensors.count says {total} tensors, the shards hold {found}")
        )
    return problems


def gguf_set(shards: list[GGUFHeader]) -> GGUFSet:
    """The shards of one split set (in order) as one model, after checking their split keys."""
    problems = split_problems(shards)
    if problems:
        raise FormatError(problems[0][1], path=problems[0][0])
    return GGUFSet(tuple(shards))
