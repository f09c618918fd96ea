"""Field docstrings -> JSON Schema descriptions, read once from the models' source.

pydantic's ``use_attribute_docstrings`` finds each class's source through ``inspect`` at class
creation, which cost ~250 ms at every CLI start for the manifest models alone. The docstrings
are only needed by ``hubrelease schema``, so that command parses the module once with ``ast``.
"""

from __future__ import annotations

import ast
import inspect
from types import ModuleType
from typing import Any


def field_docstrings(module: ModuleType) -> dict[str, dict[str, str]]:
    """``{ClassName: {field: docstring}}`` for string literals that follow annotated fields."""
    tree = ast.parse(inspect.getsource(module))
    docs: dict[str, dict[str, str]] = {}
    bases: dict[str, list[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        bases[node.name] = [b.id for b in node.bases if isinstance(b, ast.Name)]
        fields: dict[str, str] = {}
        for stmt, following in zip(node.body, node.body[1:], strict=False):
            if (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                fields[stmt.target.id] = inspect.cleandoc(following.value.value)
        docs[node.name] = fields

    def inherited(name: str) -> dict[str, str]:
        merged: dict[str, str] = {}
        for base in bases.get(name, []):
            merged.update(inherited(base))
        merged.update(docs.get(name, {}))
        return merged

    return {name: inherited(name) for name in docs}


def describe_fields(schema: dict[str, Any], *modules: ModuleType) -> dict[str, Any]:
    """Set ``description`` on every property whose model field has a docstring (in place)."""
    docs: dict[str, dict[str, str]] = {}
    for module in modules:
        docs.update(field_docstrings(module))
    definitions = dict(schema.get("$defs", {}))
    if "title" in schema:
        definitions[schema["title"]] = schema
    for name, definition in definitions.items():
        for field, prop in definition.get("properties", {}).items():
            doc = docs.get(name, {}).get(field)
            if doc and "description" not in prop:
                prop["description"] = doc
    return schema
