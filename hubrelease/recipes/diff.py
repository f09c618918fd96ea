"""Where a rebuilt file first differs from the published one, in the file's own terms.

A GGUF is compared key by key (type and value), then tensor by tensor (name, type, shape, offset,
then data); a safetensors file by ``__metadata__``, then tensor declarations, then data; JSON by
path (``cells[3].overall_tok_s``); anything else by line. Evaluation figures (every number in the
JSON) are compared one by one: the card's numbers come from them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hubrelease.errors import HubReleaseError
from hubrelease.evaluation.figures import figures
from hubrelease.safe_parse import ScreenError, parse_json

_CHUNK = 1 << 20


def first_difference(published: Path, rebuilt: Path) -> str:
    """One line naming the first difference between two files that are known to differ."""
    try:
        if published.suffix == ".gguf":
            return _gguf(published, rebuilt)
        if published.suffix == ".safetensors":
            return _safetensors(published, rebuilt)
        if published.suffix == ".json":
            return _json(published, rebuilt)
    except HubReleaseError as exc:  # a rebuilt file the format reader refuses: say so, then compare bytes
        return f"{exc.message} ({_bytes(published, rebuilt)})"
    return _lines(published, rebuilt)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _same_range(a: Path, b: Path, start_a: int, start_b: int, length: int) -> bool:
    with a.open("rb") as fa, b.open("rb") as fb:
        fa.seek(start_a)
        fb.seek(start_b)
        left = length
        while left > 0:
            step = min(left, _CHUNK)
            if fa.read(step) != fb.read(step):
                return False
            left -= step
    return True


def _bytes(a: Path, b: Path) -> str:
    with a.open("rb") as fa, b.open("rb") as fb:
        offset = 0
        while True:
            left, right = fa.read(_CHUNK), fb.read(_CHUNK)
            if left != right:
                index = next(
                    (i for i, (x, y) in enumerate(zip(left, right, strict=False)) if x != y),
                    min(len(left), len(right)),
                )
                return f"first differing byte at offset {offset + index}"
            if not left:
                return "no byte differs"
            offset += len(left)


def _gguf(published: Path, rebuilt: Path) -> str:
    from hubrelease.formats.gguf_header import read_gguf_header

    a = read_gguf_header(published, keep_key=lambda _: True)
    b = read_gguf_header(rebuilt, keep_key=lambda _: True)
    for key in [*a.kv, *(k for k in b.kv if k not in a.kv)]:
        left, right = a.kv.get(key), b.kv.get(key)
        if left is None or right is None:
            where = "the rebuilt file" if left is None else "the published file"
            return f"GGUF key {key} only in {where}"
        if (left.type_label, left.value) != (right.type_label, right.value):
            return (
                f"GGUF key {key}: published {left.type_label} {_short(left.value)}, "
                f"rebuilt {right.type_label} {_short(right.value)}"
            )
    for ta, tb in zip(a.tensors, b.tensors, strict=False):
        if (ta.name, ta.type_name, ta.shape) != (tb.name, tb.type_name, tb.shape):
            return (
                f"GGUF tensor {ta.name}: published {ta.type_name} {list(ta.shape)}, "
                f"rebuilt {tb.name} {tb.type_name} {list(tb.shape)}"
            )
    if len(a.tensors) != len(b.tensors):
        return f"GGUF tensor count: published {len(a.tensors)}, rebuilt {len(b.tensors)}"
    for ta, tb in zip(a.tensors, b.tensors, strict=False):
        if ta.offset != tb.offset:
            return f"GGUF tensor {ta.name}: data offset published {ta.offset}, rebuilt {tb.offset}"
        if not _same_range(published, rebuilt, ta.offset, tb.offset, ta.nbytes):
            return f"GGUF tensor {ta.name}: data differs"
    return f"GGUF header and tensors agree; {_bytes(published, rebuilt)}"


def _safetensors(published: Path, rebuilt: Path) -> str:
    from hubrelease.formats.safetensors_header import load_safetensors_header

    a, b = load_safetensors_header(published), load_safetensors_header(rebuilt)
    if a.metadata != b.metadata:
        return f"safetensors __metadata__: published {_short(a.metadata)}, rebuilt {_short(b.metadata)}"
    right = {t.name: t for t in b.tensors}
    for ta in a.tensors:
        tb = right.get(ta.name)
        if tb is None:
            return f"safetensors tensor {ta.name} only in the published file"
        if (ta.dtype, ta.shape) != (tb.dtype, tb.shape):
            return (
                f"safetensors tensor {ta.name}: published {ta.dtype} {list(ta.shape)}, "
                f"rebuilt {tb.dtype} {list(tb.shape)}"
            )
    extra = [t.name for t in b.tensors if t.name not in {x.name for x in a.tensors}]
    if extra:
        return f"safetensors tensor {extra[0]} only in the rebuilt file"
    for ta in a.tensors:
        tb = right[ta.name]
        if ta.nbytes != tb.nbytes or not _same_range(published, rebuilt, ta.start, tb.start, ta.nbytes):
            return f"safetensors tensor {ta.name}: data differs"
    return f"safetensors tensors agree; {_bytes(published, rebuilt)} (header layout)"


def load_json(path: Path) -> Any:
    """A JSON file's value, None when it is not JSON."""
    try:
        return parse_json(path.read_bytes())
    except ScreenError:
        return None


def _json(published: Path, rebuilt: Path) -> str:
    a, b = load_json(published), load_json(rebuilt)
    if a is None or b is None:
        return _lines(published, rebuilt)
    found = _first_json_difference(a, b, "")
    if found is None:
        return f"same JSON values; {_lines(published, rebuilt)} (layout)"
    where, left, right = found
    return f"JSON {where or '(top level)'}: published {_short(left)}, rebuilt {_short(right)}"


_MISSING = object()


def _first_json_difference(a: Any, b: Any, where: str) -> tuple[str, Any, Any] | None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in [*a, *(k for k in b if k not in a)]:
            found = _first_json_difference(
                a.get(key, _MISSING), b.get(key, _MISSING), f"{where}.{key}" if where else key
            )
            if found is not None:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for index in range(max(len(a), len(b))):
            left = a[index] if index < len(a) else _MISSING
            right = b[index] if index < len(b) else _MISSING
            found = _first_json_difference(left, right, f"{where}[{index}]")
            if found is not None:
                return found
        return None
    if type(a) is not type(b) or a != b:
        return where, _absent(a), _absent(b)
    return None


def _absent(value: Any) -> Any:
    return "(absent)" if value is _MISSING else value


def _lines(published: Path, rebuilt: Path) -> str:
    with published.open("rb") as fa, rebuilt.open("rb") as fb:
        for number, (left, right) in enumerate(zip(fa, fb, strict=False), start=1):
            if left != right:
                return f"first differing line {number}"
    return _bytes(published, rebuilt)


@dataclass(frozen=True)
class FigureDifference:
    path: str
    published: float | None
    rebuilt: float | None


@dataclass(frozen=True)
class FigureCheck:
    """An evaluation's figures compared one by one: how many, how many equal, which differ."""

    compared: int
    matched: int
    differing: tuple[FigureDifference, ...]


def _equal(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


def compare_figures(published: Any, rebuilt: Any) -> FigureCheck:
    """Each number of the published evaluation against the rebuilt one at the same path (exact equality:
    the rebuild runs the same code on the same bytes, so any change is a real one)."""
    left, right = dict(figures(published)), dict(figures(rebuilt))
    differing = [
        FigureDifference(path, value, right.get(path))
        for path, value in left.items()
        if not _equal(value, right.get(path))
    ]
    differing += [FigureDifference(path, None, value) for path, value in right.items() if path not in left]
    matched = len(left) - sum(1 for d in differing if d.published is not None)
    return FigureCheck(len(left), matched, tuple(differing))
