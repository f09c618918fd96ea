"""The import graph reads as the data flow: files import down the floors, never around in a circle.

import-linter (pyproject ``[tool.importlinter]``) checks the floors room by room; this test looks at the
same graph from grimp (import-linter's own graph library) file by file and counts every import: those
inside functions and those only for type checking too, since a type-only import is still a dependency a
reader has to follow. It prints each offending edge with its line.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import grimp
import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("hubrelease", "hubrelease_loopback", "conformance")
"""The client, the loopback Hub (a distribution of its own, loopback-hub/) and the conformance runner,
in one graph: two distributions importing each other are a mutual pair like any other."""

Edges = Mapping[str, set[str]]


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph(*PACKAGES, exclude_type_checking_imports=False, cache_dir=None)


@pytest.fixture(scope="module")
def edges(graph: grimp.ImportGraph) -> Edges:
    found: dict[str, set[str]] = defaultdict(set)
    for module in graph.modules:
        found[module] |= graph.find_modules_directly_imported_by(module)
    return found


def _floors() -> dict[str, int]:
    """Each room's floor, 0 the ground, from the layers contract (the one list of floors)."""
    # The block as text: tomllib is 3.11+ and the package supports 3.10; a TOML list of strings is a
    # Python literal.
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    found = re.search(r"^layers = (\[.*?^\])", text, re.DOTALL | re.MULTILINE)
    assert found is not None, "pyproject.toml has no layers contract"
    layers: list[str] = ast.literal_eval(found.group(1))
    return {room.strip(): len(layers) - 1 - i for i, layer in enumerate(layers) for room in layer.split(":")}


def _room(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "hubrelease" and len(parts) > 1 else None


def _cycles(edges: Edges) -> list[list[str]]:
    """Strongly connected components of more than one file (Tarjan, iterative: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work: list[tuple[str, Iterable[str]]] = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(iter(targets), None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _describe(graph: grimp.ImportGraph, pairs: Iterable[tuple[str, str]]) -> str:
    lines = []
    for importer, imported in sorted(pairs):
        where = sorted(
            d["line_number"] for d in graph.get_import_details(importer=importer, imported=imported)
        )
        lines.append(f"{importer} -> {imported} (line {', '.join(map(str, where))})")
    return "\n".join(lines)


def _assert_no_circle(graph: grimp.ImportGraph, edges: Edges) -> None:
    circles = _cycles(edges)
    inside = [(a, b) for circle in circles for a in circle for b in edges[a] if b in circle]
    assert not circles, "import cycles:\n" + _describe(graph, inside)


def test_no_file_imports_around_a_circle(graph: grimp.ImportGraph, edges: Edges) -> None:
    _assert_no_circle(graph, edges)


def _upward(edges: Edges, floors: Mapping[str, int]) -> list[tuple[str, str]]:
    """The edges from a room to a room on a higher floor."""
    return [
        (importer, imported)
        for importer, targets in edges.items()
        for imported in targets
        if (a := _room(importer)) and (b := _room(imported)) and floors[a] < floors[b]
    ]


def test_no_file_imports_a_room_on_a_higher_floor(graph: grimp.ImportGraph, edges: Edges) -> None:
    floors = _floors()
    rooms = {room for module in edges if (room := _room(module))}
    assert rooms <= set(floors), f"rooms on no floor: {sorted(rooms - set(floors))}"
    upward = _upward(edges, floors)
    assert not upward, "imports from a lower floor to a higher one:\n" + _describe(graph, upward)


def _mutual(edges: Edges) -> list[tuple[str, str]]:
    """The edges between two siblings (files or packages, with all they contain) that import each other."""
    between: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for importer, targets in edges.items():
        for imported in targets:
            a, b = importer.split("."), imported.split(".")
            shared = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
            if shared is not None:
                between[".".join(a[: shared + 1]), ".".join(b[: shared + 1])].append((importer, imported))
    return [
        edge for (x, y) in between if x < y and (y, x) in between for edge in between[x, y] + between[y, x]
    ]


def test_no_two_packages_import_each_other(graph: grimp.ImportGraph, edges: Edges) -> None:
    """At every level, counting imports inside functions: two siblings import one way at most."""
    both = _mutual(edges)
    assert not both, "packages that import each other:\n" + _describe(graph, both)


def test_the_checks_see_a_circle_an_upward_import_and_a_mutual_pair() -> None:
    """The helpers above are not vacuous: a made-up graph with each fault is caught."""
    circle = {
        "hubrelease.a.x": {"hubrelease.a.y"},
        "hubrelease.a.y": {"hubrelease.a.x"},
        "hubrelease.b": set(),
    }
    assert _cycles(circle) == [["hubrelease.a.x", "hubrelease.a.y"]]
    assert _cycles({"hubrelease.a.x": {"hubrelease.a.y"}, "hubrelease.a.y": set()}) == []
    pair = {"hubrelease.a.x": {"hubrelease.b.y"}, "hubrelease.b.z": {"hubrelease.a"}}
    assert sorted(_mutual(pair)) == [("hubrelease.a.x", "hubrelease.b.y"), ("hubrelease.b.z", "hubrelease.a")]
    assert _mutual({"hubrelease.a.x": {"hubrelease.b.y"}}) == []
    plugin = {
        "hubrelease.preview": {"hubrelease_loopback.pages"},
        "hubrelease_loopback.pages": {"hubrelease.lazy"},
    }
    assert sorted(_mutual(plugin)) == [
        ("hubrelease.preview", "hubrelease_loopback.pages"),
        ("hubrelease_loopback.pages", "hubrelease.lazy"),
    ]
    down = {"hubrelease.cli.app": {"hubrelease.errors"}, "hubrelease.errors": set()}
    assert _upward(down, _floors()) == []
    assert _upward({"hubrelease.errors": {"hubrelease.cli.app"}}, _floors()) == [
        ("hubrelease.errors", "hubrelease.cli.app")
    ]
