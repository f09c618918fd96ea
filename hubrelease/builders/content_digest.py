"""A content digest of tabular data that does not change when the rows are re-sharded or re-encoded.

Per-row canonical JSON would be the obvious definition, but encoding 400 MB of text row by row costs
tens of seconds in Python. Instead every column is split into byte streams that are plain
concatenations over rows, so Arrow buffers are hashed directly and batch or shard boundaries cannot
matter. Version 1, for each top-level column in name order (recursively, ``[]`` for list items and
``.field`` for struct fields, struct fields in name order):

* ``NAME.valid``: one byte per row, 1 valid / 0 null;
* strings: ``NAME.len`` (int64 little-endian UTF-8 length, 0 for null) and ``NAME.bytes`` (the UTF-8 text);
* integers, floats, booleans: ``NAME.values`` as int64 / float64 little-endian / one byte, null as 0
  (uint64 keeps its 64 bits, so values above 2**63 read as negative int64);
* null-typed columns (a key that is null in every row): ``NAME.valid`` only;
* lists: ``NAME.len`` (int64 item count, 0 for null), then the items' streams under ``NAME[]``.

The digest is sha256 of the UTF-8 text ``hubrelease-content-v1 rows=N`` followed by one line
``STREAM SHA256HEX`` per stream, streams sorted by name, each line ending in ``\\n``.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hubrelease.errors import FormatError

VERSION = "hubrelease-content-v1"


class ContentDigest:
    """Feed record batches in row order; ``hexdigest()`` gives the version-1 digest."""

    def __init__(self) -> None:
        self._streams: defaultdict[str, hashlib._Hash] = defaultdict(hashlib.sha256)
        self._rows = 0

    def update(self, batch: pa.RecordBatch) -> None:
        """Add ``batch``'s rows after all rows seen so far."""
        for name in sorted(batch.schema.names):
            self._column(name, batch.column(name))
        self._rows += batch.num_rows

    def _put(self, stream: str, data: bytes | memoryview) -> None:
        self._streams[stream].update(data)

    def _column(self, name: str, array: pa.Array) -> None:
        kind = array.type
        self._put(f"{name}.valid", array.is_valid().to_numpy(zero_copy_only=False).astype(np.uint8).tobytes())
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            self._strings(name, array.fill_null("") if array.null_count else array)
        elif pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind):
            target, dtype = (
                (pa.int64(), "<i8")
                if pa.types.is_integer(kind)
                else (pa.float64(), "<f8")
                if pa.types.is_floating(kind)
                else (pa.uint8(), "u1")
            )
            # Unsafe only for uint64 above 2**63: the cast keeps the bits, every other integer fits.
            values = pc.cast(array, target, safe=False).fill_null(0).to_numpy(zero_copy_only=False)
            self._put(f"{name}.values", values.astype(dtype).tobytes())
        elif pa.types.is_null(kind):
            return
        elif pa.types.is_list(kind) or pa.types.is_large_list(kind):
            lengths = array.value_lengths().fill_null(0).to_numpy(zero_copy_only=False)
            self._put(f"{name}.len", lengths.astype("<i8").tobytes())
            self._column(f"{name}[]", pc.list_flatten(array))
        elif pa.types.is_struct(kind):
            children = dict(
                zip((kind.field(i).name for i in range(kind.num_fields)), array.flatten(), strict=True)
            )
            for child in sorted(children):
                self._column(f"{name}.{child}", children[child])
        else:
            raise FormatError(f"column type {kind} is not supported by the content digest", field=name)

    def _strings(self, name: str, array: pa.Array) -> None:
        if len(array) == 0:
            self._put(f"{name}.len", b"")
            self._put(f"{name}.bytes", b"")
            return
        offset_type = np.int64 if pa.types.is_large_string(array.type) else np.int32
        _, offsets_buffer, data = array.buffers()
        offsets = np.frombuffer(offsets_buffer, dtype=offset_type)[
            array.offset : array.offset + len(array) + 1
        ]
        self._put(f"{name}.len", np.diff(offsets).astype("<i8").tobytes())
        # Every stream is touched on every batch (even with b""), so the stream set never depends on sharding.
        text = memoryview(data)[int(offsets[0]) : int(offsets[-1])] if data is not None else b""
        self._put(f"{name}.bytes", text)

    def hexdigest(self) -> str:
        """The digest of every row fed so far."""
        text = f"{VERSION} rows={self._rows}\n" + "".join(
            f"{name} {self._streams[name].hexdigest()}\n" for name in sorted(self._streams)
        )
        return hashlib.sha256(text.encode("utf-8")).hexdigest()
