"""Key-by-key and tensor-by-tensor comparison of two GGUF files (hubrelease's and an engine converter's)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from gguf import GGUFReader, GGUFValueType

_HEADER = ("GGUF.version", "GGUF.tensor_count", "GGUF.kv_count")
"""GGUFReader's pseudo-fields for the file header: counts follow from the keys and tensors compared."""


@dataclass(frozen=True)
class Difference:
    what: str
    ours: str
    theirs: str

    def __str__(self) -> str:
        return f"{self.what}: hubrelease {self.ours}, converter {self.theirs}"


def _short(value: Any) -> str:
    text = repr(value)
    return (
        text
        if len(text) <= 80
        else f"{text[:60]}... ({len(value)} items)"
        if isinstance(value, list)
        else text[:80]
    )


def _fields(reader: GGUFReader) -> dict[str, tuple[str, Any]]:
    out: dict[str, tuple[str, Any]] = {}
    for name, field in reader.fields.items():
        if name in _HEADER:
            continue
        kind = GGUFValueType(field.types[0]).name
        if field.types[0] == GGUFValueType.ARRAY and len(field.types) > 1:
            kind += f"[{GGUFValueType(field.types[1]).name}]"
        out[name] = (kind, field.contents())
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return bool(np.float32(a) == np.float32(b))
    return bool(a == b)


def tensor_names(path: Path) -> list[str]:
    return [t.name for t in GGUFReader(path).tensors]


def compare(ours: Path, theirs: Path) -> list[Difference]:
    """Every key (type and value) and every tensor (shape, type, bytes) that differs; [] when identical."""
    a, b = GGUFReader(ours), GGUFReader(theirs)
    fa, fb = _fields(a), _fields(b)
    diffs: list[Difference] = []
    for key in sorted(set(fa) | set(fb)):
        if key not in fb:
            diffs.append(Difference(f"key {key}", f"{fa[key][0]} {_short(fa[key][1])}", "absent"))
        elif key not in fa:
            diffs.append(Difference(f"key {key}", "absent", f"{fb[key][0]} {_short(fb[key][1])}"))
        elif fa[key][0] != fb[key][0] or not _same(fa[key][1], fb[key][1]):
            diffs.append(
                Difference(
                    f"key {key}", f"{fa[key][0]} {_short(fa[key][1])}", f"{fb[key][0]} {_short(fb[key][1])}"
                )
            )
    ta = {t.name: t for t in a.tensors}
    tb = {t.name: t for t in b.tensors}
    for name in sorted(set(ta) | set(tb)):
        if name not in tb or name not in ta:
            have = ta.get(name) or tb[name]
            where = (f"{have.tensor_type.name} {list(have.shape)}", "absent")
            diffs.append(Difference(f"tensor {name}", *(where if name in ta else where[::-1])))
            continue
        x, y = ta[name], tb[name]
        if x.tensor_type != y.tensor_type or list(x.shape) != list(y.shape):
            diffs.append(
                Difference(
                    f"tensor {name}",
                    f"{x.tensor_type.name} {list(x.shape)}",
                    f"{y.tensor_type.name} {list(y.shape)}",
                )
            )
        elif x.data.tobytes() != y.data.tobytes():
            diffs.append(Difference(f"tensor {name} data", f"{x.n_bytes} bytes", "different bytes"))
    if [t.name for t in a.tensors] != [t.name for t in b.tensors] and set(ta) == set(tb):
        diffs.append(Difference("tensor order", "builder order", "converter order"))
    return diffs
