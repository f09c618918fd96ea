"""Every command's body parses its options, calls one library function and renders what it returns.

twine's commands are ``upload(settings, dists)`` plus a ``main(args)`` that only parses, and
model-signing's ``_cli.py`` only chains a ``Config`` and calls ``.verify()``: the work is a library
call whose result is data, callable and testable without the CLI. This check reads each command's
source (its callback, and the helpers of its own module that the callback calls), resolves every
called name to the object it names, and counts the distinct library functions it calls (those of
``hubrelease`` outside ``hubrelease.cli``, and of the loopback Hub's ``hubrelease_loopback``).
Calls on returned values (``report.to_dict()``) are rendering and not counted; constructing a
library class is not a call of the library, but an options object is built by keyword
(``PublishOptions(message=...)``), never by position.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import typer

import hubrelease.cli

PARSING_AND_RENDERING = frozenset(
    {
        # The MANIFEST argument read into a release and its folder, as push reads it before publish().
        "hubrelease.manifest.load.load_manifest",
        "hubrelease.manifest.root.release_root",
        # --repo-type / --revision applied to that release (options onto the value they override).
        "hubrelease.manifest.load.with_release",
        # Option text to a value: a number of bytes, a REPO[@REVISION].
        "hubrelease.sizes.parse_size",
        "hubrelease.hub.batches.batch_size",
        "hubrelease.pull.resolve.parse_ref",
        # A value to text for display.
        "hubrelease.sizes.human_bytes",
    }
)
"""Library functions that only turn an option's text into a value, or a value into text: parsing
and rendering, not work."""


def _commands() -> Iterator[tuple[str, Callable[..., Any]]]:
    """Every command a module of the CLI registers (``register(app)``), groups' commands included."""
    for found in pkgutil.iter_modules(hubrelease.cli.__path__):
        module = importlib.import_module(f"hubrelease.cli.{found.name}")
        if not hasattr(module, "register"):
            continue
        scratch = typer.Typer()
        module.register(scratch)
        groups = [scratch] + [g.typer_instance for g in scratch.registered_groups if g.typer_instance]
        for group in groups:
            for info in group.registered_commands:
                if info.callback is not None:
                    yield info.name or info.callback.__name__, info.callback


def _resolve(node: ast.expr, names: dict[str, Any]) -> Any:
    """The object a called expression names (``f``, ``module.f``, ``Class.method``), or None."""
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.Attribute):
        owner = _resolve(node.value, names)
        if isinstance(owner, ModuleType) or inspect.isclass(owner):
            return getattr(owner, node.attr, None)
    return None


def _local_imports(tree: ast.AST) -> dict[str, Any]:
    """Names bound by the ``from X import y`` statements inside a function."""
    bound: dict[str, Any] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            module = importlib.import_module(node.module)
            for alias in node.names:
                bound[alias.asname or alias.name] = getattr(
                    module, alias.name, None
                ) or importlib.import_module(f"{node.module}.{alias.name}")
    return bound


def _library_name(target: Any) -> str | None:
    """``module.qualname`` of a library function, or None for anything else (the CLI's own, others')."""
    function = getattr(target, "__func__", target)
    module = getattr(function, "__module__", None) or ""
    if not (inspect.isfunction(function) and module.startswith(("hubrelease.", "hubrelease_loopback"))):
        return None
    if module == "hubrelease.cli" or module.startswith("hubrelease.cli."):
        return None
    return f"{module}.{function.__qualname__}"


def library_calls(callback: Callable[..., Any]) -> tuple[set[str], list[str]]:
    """The library functions ``callback`` calls (through its module's helpers), and each library
    class it builds with positional arguments (exceptions excepted: their message comes first)."""
    module = inspect.getmodule(callback)
    assert module is not None
    called: set[str] = set()
    positional: list[str] = []
    seen: set[Any] = set()
    pending = [callback]
    while pending:
        function = pending.pop()
        if function in seen:
            continue
        seen.add(function)
        lines, first = inspect.getsourcelines(function)
        tree = ast.parse(textwrap.dedent("".join(lines)))
        names = vars(module) | _local_imports(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            target = _resolve(node.func, names)
            if inspect.isfunction(target) and target.__module__ == module.__name__:
                pending.append(target)
            elif inspect.isclass(target) and target.__module__.startswith(
                ("hubrelease.", "hubrelease_loopback")
            ):
                if node.args and not issubclass(target, BaseException):
                    positional.append(f"{target.__qualname__} at line {first + node.lineno - 1}")
            elif (name := _library_name(target)) is not None:
                called.add(name)
    return called, positional


COMMANDS = sorted(_commands())


def test_every_command_is_checked() -> None:
    names = {name for name, _ in COMMANDS}
    assert {"push", "eval", "rebuild", "lint", "gguf-drafter", "serve", "verify", "sign"} <= names


@pytest.mark.parametrize(("name", "callback"), [pytest.param(n, c, id=n) for n, c in COMMANDS])
def test_a_command_body_calls_one_library_function(name: str, callback: Callable[..., Any]) -> None:
    called, positional = library_calls(callback)
    work = sorted(called - PARSING_AND_RENDERING)
    assert len(work) <= 1, f"{name} assembles library calls: {work}"
    assert positional == [], f"{name} builds options by position"


def _module_with(source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """``source`` as a command module of the CLI (named under ``hubrelease.cli``, as the check expects)."""
    name = "hubrelease.cli.probe_command"
    path = tmp_path / "probe_command.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, loaded)
    spec.loader.exec_module(loaded)
    return loaded


def test_the_check_sees_calls_through_helpers_and_positional_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = textwrap.dedent(
        """
        from hubrelease.manifest import load_manifest
        from hubrelease.hub.publish import PublishOptions

        def command(path):
            from hubrelease.manifest.root import release_root
            release = load_manifest(path)
            _helper(release_root(release, path))
            return PublishOptions("message")

        def _helper(root):
            from hubrelease.fsutil import atomic_write_text
            atomic_write_text(root / "x", "")
        """
    )
    command = _module_with(source, tmp_path, monkeypatch).command
    called, positional = library_calls(command)
    assert called == {
        "hubrelease.manifest.load.load_manifest",
        "hubrelease.manifest.root.release_root",
        "hubrelease.fsutil.atomic_write_text",
    }
    assert positional == ["PublishOptions at line 9"]
