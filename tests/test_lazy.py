"""Package faces (docs/development/index.md, "Package faces"): lazy, complete, and not shadowed by their own submodules."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import hubrelease
from hubrelease.lazy import exports

PACKAGE = Path(hubrelease.__file__).parent


def _packages() -> list[str]:
    return sorted(
        name for _, name, is_package in pkgutil.walk_packages([str(PACKAGE)], "hubrelease.") if is_package
    )


def _faces() -> list[str]:
    return [name for name in _packages() if hasattr(importlib.import_module(name), "__all__")]


def test_every_package_init_holds_a_docstring_and_at_most_a_lazy_face() -> None:
    """No ``__init__.py`` imports a module of its own package at run time (only under TYPE_CHECKING)."""
    for name in ["hubrelease", *_packages()]:
        init = PACKAGE.parent.joinpath(*name.split("."), "__init__.py")
        tree = ast.parse(init.read_text(encoding="utf-8"))
        assert ast.get_docstring(tree), name
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(f"{name}."), f"{name} imports {node.module} eagerly"
            assert not isinstance(node, (ast.FunctionDef, ast.ClassDef)), f"{name} defines {node.name}"


@pytest.mark.parametrize("face", _faces())
def test_a_face_exports_every_name_it_lists_even_after_all_its_modules_loaded(face: str) -> None:
    package = importlib.import_module(face)
    for info in pkgutil.iter_modules(package.__path__, f"{face}."):
        importlib.import_module(info.name)  # each sets its package attribute: it must not shadow an export
    for name in package.__all__:
        assert not isinstance(getattr(package, name), ModuleType), f"{face}.{name} is a module"


def test_exports_refuses_a_name_its_own_submodule_would_shadow() -> None:
    with pytest.raises(
        ValueError, match=r"hubrelease.card: exports named like their submodule: \['render'\]"
    ):
        exports("hubrelease.card", {"render": "render", "check_card": "render"})


@pytest.mark.parametrize(
    ("module", "library"),
    [
        ("hubrelease.manifest.models", "ruamel"),  # the YAML reader behind load_manifest
        ("hubrelease.hub.target_facts", "huggingface_hub"),  # push, lock, the plan
        ("hubrelease.lint.findings", "hubrelease.formats"),  # the readers behind lint_file
        ("hubrelease.card.marker", "jinja2"),  # the renderer
    ],
)
def test_importing_one_module_of_a_room_loads_no_other_module_of_it(module: str, library: str) -> None:
    room = module.rsplit(".", 1)[0]
    probe = f"import sys, {module}; print(sorted(m for m in sys.modules if m.startswith(('{room}.', '{library}'))))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert ast.literal_eval(loaded) == [module]
