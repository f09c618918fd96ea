"""Every function in the package takes at most five positional parameters; the rest are keyword-only.

Long positional lists let two same-typed arguments swap silently at a call site; keyword-only
parameters make each call name what it passes. ``self`` and ``cls`` are not counted: the caller
never writes them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import hubrelease

MAX_POSITIONAL = 5
PACKAGE = Path(hubrelease.__file__).parent


def positional_count(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Parameters a caller may pass by position, leaving out ``self`` and ``cls``."""
    names = [a.arg for a in node.args.posonlyargs + node.args.args]
    return len([n for n in names if n not in ("self", "cls")])


def too_positional(source: str, name: str) -> list[str]:
    """``file:line function (count)`` for each function in ``source`` over the bound."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            count = positional_count(node)
            if count > MAX_POSITIONAL:
                found.append(f"{name}:{node.lineno} {node.name} ({count})")
    return found


def test_the_checker_names_a_function_with_six_positional_parameters() -> None:
    source = "def f(self, a, b, c, d, e, g): ...\ndef ok(self, a, b, c, d, e, *, g): ...\n"
    assert too_positional(source, "m.py") == ["m.py:1 f (6)"]


def test_no_function_takes_more_than_five_positional_parameters() -> None:
    found = [
        line
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in too_positional(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
    ]
    assert found == []
