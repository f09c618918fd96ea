"""Hypothesis strategies shared by the fuzz modules: any JSON/YAML value, and setting one at a path."""

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
