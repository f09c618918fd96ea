"""Hostile manifests: each is one ``FILE:LINE: field: message`` error, exit 2, in every command.

Before these checks, a 3 KB alias bomb grew without bound (pydantic walked every expanded copy),
and integers over 4,300 digits, 1,000-deep nesting and complex keys ended in internal errors.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from hubrelease.errors import ManifestError
from hubrelease.manifest import load_manifest, load_manifest_text
from hubrelease.manifest.editor import ManifestEditor
from tests.factories.cli import invoke
from tests.factories.releases import write_release

GOOD = """\
schema_version: 1
release:
  repo_id: acme/drafter
  license: apache-2.0
artifacts:
  - path: model.safetensors
    size: 10
    sha256: b6413dfea95b7f1578d74a37f9b37367d6c9ace28a38a4e7dbe36241c54eee5d
"""


def alias_bomb(levels: int = 9, fan_out: int = 9) -> str:
    """The "billion laughs" document: ``fan_out ** levels`` strings from about 3 KB of YAML."""
    lines = [f"    l0: &l0 [{', '.join(['lol'] * fan_out)}]"]
    for level in range(1, levels):
        lines.append(f"    l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * fan_out)}]")
    return "card:\n  variables:\n" + "\n".join(lines) + "\n"


HOSTILE = {
    "alias bomb": (GOOD + alias_bomb(), 9, "card", "YAML aliases expand to more than 1,000,000 values"),
    "alias cycle": (
        GOOD + "card:\n  variables:\n    x: &x [*x]\n",
        9,
        "card",
        "refers to a value that contains it",
    ),
    "5,000-digit integer": (
        GOOD.replace("size: 10", "size: " + "9" * 5000),
        7,
        None,
        "more than 4,300 digits",
    ),
    "1,000-deep flow nesting": (
        GOOD + "card:\n  variables:\n    x: " + "[" * 1000 + "]" * 1000 + "\n",
        11,
        None,
        "nested more than 64 levels deep",
    ),
    "100-deep block nesting": (
        GOOD + "card:\n  variables:\n" + "".join("  " * (i + 2) + f"k{i}:\n" for i in range(100)),
        9,
        "card",
        "nested more than 64 levels deep",
    ),
    "complex key": (
        GOOD + "card:\n  variables:\n    ? [a, b]\n    : 1\n",
        11,
        None,
        "complex (non-scalar) YAML keys",
    ),
    "integer key": (GOOD + "1: x\n", 1, "(top level)", "keys must be plain strings"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_manifest_is_one_located_error(tmp_path: Path, name: str) -> None:
    text, line, field, message = HOSTILE[name]
    path = tmp_path / "hubrelease.yaml"
    path.write_text(text, encoding="utf-8")
    loaders: tuple[Callable[[], object], ...] = (
        lambda: load_manifest(path),
        lambda: load_manifest_text(text, path),
        lambda: ManifestEditor.open(path).validate(),
    )
    for load in loaders:
        with pytest.raises(ManifestError) as info:
            load()
        error = info.value
        assert message in str(error)
        assert "\n" not in str(error)
        assert error.line == line, (name, str(error))
        if field is not None:
            assert error.field == field


def test_100k_unknown_keys_fail_on_libyaml_without_ruamel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The line comes from libyaml's node marks: ruamel (over 20 s for this file) is never asked."""
    import hubrelease.manifest.load as load_module

    def no_ruamel(*args: object, **kwargs: object) -> None:
        raise AssertionError("ruamel parsed a manifest libyaml could read")

    monkeypatch.setattr(load_module, "_yaml", no_ruamel)
    path = tmp_path / "hubrelease.yaml"
    path.write_text(GOOD + "".join(f"k{i}: {i}\n" for i in range(100_000)), encoding="utf-8")
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert str(info.value).startswith(f"{path}:9: k0: unknown key")
    assert "(and 99999 more errors)" in str(info.value)


def test_validation_errors_have_the_same_lines_from_libyaml_and_ruamel(tmp_path: Path) -> None:
    text = (
        GOOD.replace("size: 10", "size: -1") + "pins:\n  targets:\n    - repo_id: a/b\n      revision: main\n"
    )
    path = tmp_path / "hubrelease.yaml"
    path.write_text(text, encoding="utf-8")
    from hubrelease.manifest.load import read_tree, validate_tree

    with pytest.raises(ManifestError) as fast:
        load_manifest(path)
    with pytest.raises(ManifestError) as slow:
        validate_tree(read_tree(path), path)
    assert str(fast.value) == str(slow.value)
    assert fast.value.line == 12  # the first error pydantic reports: the branch revision


@pytest.mark.parametrize(
    "args",
    [
        ["verify", "{m}"],
        ["verify", "{m}", "--remote", "--endpoint", "local"],
        ["checksums", "{m}"],
        ["render-card", "{m}"],
        ["lock", "{m}", "--dry-run", "--endpoint", "local"],
        ["push", "{m}", "--dry-run", "--endpoint", "local"],
        ["add", "{m}", "{f}"],
        ["rm", "{m}", "model.safetensors"],
    ],
    ids=lambda args: " ".join(a for a in args if not a.startswith("{")),
)
def test_every_command_that_loads_a_manifest_refuses_an_alias_bomb(tmp_path: Path, args: list[str]) -> None:
    manifest = write_release(tmp_path, {"model.safetensors": b"x" * 10})
    manifest.write_text(manifest.read_text() + alias_bomb(), encoding="utf-8")
    before = manifest.read_bytes()
    result = invoke([a.format(m=manifest, f=tmp_path / "model.safetensors") for a in args])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "alias bomb" in lines[0], result.stderr
    assert manifest.read_bytes() == before


def test_edits_refuse_100k_unknown_keys_before_ruamel_parses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``rm``/``add``/``lock`` refuse it from libyaml's parse alone (ruamel needs >20 s to parse it)."""
    import hubrelease.manifest.load as load_module

    def no_ruamel(*args: object, **kwargs: object) -> None:
        raise AssertionError("ruamel parsed a manifest the screen should have refused")

    monkeypatch.setattr(load_module, "_yaml", no_ruamel)
    path = tmp_path / "hubrelease.yaml"
    path.write_text(GOOD + "".join(f"k{i}: {i}\n" for i in range(100_000)), encoding="utf-8")
    with pytest.raises(ManifestError) as info:
        ManifestEditor.open(path).validate()
    assert str(info.value).startswith(
        f"{path}:9: k0: unknown key (allowed keys are listed by `hubrelease schema`) (and 99999 more"
    )
