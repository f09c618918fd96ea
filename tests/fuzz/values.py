"""Hypothesis strategies shared by the fuzz modules: any JSON/YAML value, setting one at a path, and raw
JSON text no ``json.dumps`` writes (``fragments``, spliced into a document by ``tests.factories.hostile_input``)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([10**400, -(10**400), 2**63, 2**64 + 1, 0, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["", "..", "../x", "/abs", "a\\b", "~", ".git/x", "*", "a\x00b", "é" * 300, "\ud800"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def set_path(data: Any, path: tuple[str | int, ...], value: Any) -> None:
    """``data[path[0]][path[1]]... = value``, creating mappings on the way (lists are indexed, never grown)."""
    node = data
    for key in path[:-1]:
        if isinstance(node, dict):
            if not isinstance(node.get(key), (dict, list)):
                node[key] = {}
            node = node[key]
        else:
            node = node[key % len(node)] if node else node
    if isinstance(node, list):
        if node:
            node[int(path[-1]) % len(node)] = value
    else:
        node[path[-1]] = value


def _nested(depth: int, kind: str) -> str:
    if kind == "array":
        return "[" * depth + "]" * depth
    return '{"a":' * depth + "1" + "}" * depth


fragments = st.one_of(
    st.integers(4290, 5200).map(lambda n: "9" * n),
    st.integers(4290, 5200).map(lambda n: "-" + "1" * n),
    st.builds(_nested, st.sampled_from([63, 64, 65, 1_000, 100_000]), st.sampled_from(["array", "object"])),
    st.sampled_from(['"\\ud800"', '"a\\udfffb"', '"\\ud83d\\ude00"', '"\\udc80\\ud800"', '["\\ud800"]']),
    st.sampled_from(['{"a\\u0000b": 1}', '{"\\ud800": 1}', '"a\\u0000b"', '{"\\u0000": {}}']),
    st.sampled_from(["1e999999", "-0", "0.0000000000000000000000000001", "NaN", "Infinity"]),
)
"""Raw JSON values: long integers, deep nesting, surrogate and NUL escapes, and odd numbers (in bounds)."""
places = st.sampled_from(["extra", "first", "last"])
