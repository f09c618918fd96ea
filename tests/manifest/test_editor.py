"""Edits keep everything outside the edited entries byte for byte, in both editors (line splices, one tree)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hubrelease.errors import ManifestError
from hubrelease.manifest import load_manifest
from hubrelease.manifest.editor import ManifestEditor

TEXT = """\
# header comment
schema_version: 1
release:
  repo_id: acme/x   # where it goes
  license: mit

artifacts:
  # the weights
  - path: a.bin
    size: 1
    sha256: 0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a

# trailing section comment
evaluations: []
"""

DIGEST = "1f" * 32


def test_update_existing_and_append_keep_comments_and_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "hubrelease.yaml"
    path.write_text(TEXT)
    editor = ManifestEditor.open(path)
    assert editor.upsert_artifact({"path": "a.bin", "size": 2, "sha256": DIGEST}) == {
        "size": 1,
        "sha256": "0a" * 32,
    }
    assert editor.upsert_artifact({"path": "b.bin", "size": 3, "sha256": DIGEST, "role": "doc"}) is None
    editor.save()
    assert path.read_text() == TEXT.replace(
        "size: 1\n    sha256: " + "0a" * 32, f"size: 2\n    sha256: {DIGEST}"
    ).replace(
        "\n\n# trailing",
        f"\n  - path: b.bin\n    size: 3\n    sha256: {DIGEST}\n    role: doc\n\n# trailing",
    )


def test_remove_reports_unknown_paths(tmp_path: Path) -> None:
    path = tmp_path / "hubrelease.yaml"
    path.write_text(TEXT)
    editor = ManifestEditor.open(path)
    assert editor.remove_artifacts(["a.bin", "nope.bin"]) == ["nope.bin"]
    editor.save()
    assert "a.bin" not in path.read_text()
    assert path.read_text().startswith("# header comment\n")


def test_an_invalid_edit_names_its_line_in_the_edited_text_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "hubrelease.yaml"
    path.write_text(TEXT)
    editor = ManifestEditor.open(path)
    editor.upsert_artifact({"path": "../escape.bin", "size": 1, "sha256": DIGEST})
    with pytest.raises(ManifestError) as info:
        editor.save()
    assert info.value.field == "artifacts[1].path"
    assert info.value.line == 12  # where the new entry would have been
    assert path.read_text() == TEXT  # nothing written


LISTED = """\
schema_version: 1
release:
  repo_id: acme/x
  license: mit
artifacts:
  - path: a.bin   # first
    size: 1
    sha256: {a}

  # about b
  - path: b.bin
    size: 2
    sha256: {b}

  - path: c.bin
    size: 3
    sha256: {c}
ignore:
  - scratch
"""


def _listed(path: Path) -> str:
    text = LISTED.format(a="0a" * 32, b="0b" * 32, c="0c" * 32)
    path.write_text(text)
    return text


def test_removing_a_middle_entry_keeps_the_comments_around_it_and_one_blank_line(tmp_path: Path) -> None:
    path = tmp_path / "hubrelease.yaml"
    text = _listed(path)
    editor = ManifestEditor.open(path)
    assert editor.remove_artifacts(["b.bin"]) == []
    editor.save()
    assert path.read_text() == text.replace(f"  - path: b.bin\n    size: 2\n    sha256: {'0b' * 32}\n\n", "")


def test_refreshing_an_entry_rewrites_only_its_lines(tmp_path: Path) -> None:
    path = tmp_path / "hubrelease.yaml"
    text = _listed(path)
    editor = ManifestEditor.open(path)
    assert editor.upsert_artifact({"path": "a.bin", "sha256": DIGEST, "role": "doc"}) == {
        "sha256": "0a" * 32,
        "role": None,
    }
    assert editor.upsert_artifact({"path": "c.bin", "size": 3}) == {}  # unchanged: not rewritten
    editor.save()
    assert path.read_text() == text.replace(f"sha256: {'0a' * 32}\n", f"sha256: {DIGEST}\n    role: doc\n")


def test_removing_every_entry_leaves_an_empty_list(tmp_path: Path) -> None:
    path = tmp_path / "hubrelease.yaml"
    _listed(path)
    editor = ManifestEditor.open(path)
    editor.remove_artifacts(["a.bin", "b.bin", "c.bin"])
    manifest = editor.save()
    assert manifest.artifacts == []
    text = path.read_text()
    assert text.startswith("schema_version: 1\nrelease:\n  repo_id: acme/x\n  license: mit\nartifacts: []\n")
    assert "# about b" in text and text.endswith("ignore:\n  - scratch\n")


def test_a_new_section_is_added_at_the_end_and_an_edited_one_in_place(tmp_path: Path) -> None:
    path = tmp_path / "hubrelease.yaml"
    text = _listed(path)
    editor = ManifestEditor.open(path)
    editor.section("evaluations")["evaluations"] = ["eval.json"]
    editor.section("release")["release"]["license"] = "apache-2.0"
    manifest = editor.save()
    assert manifest.evaluation_paths == ["eval.json"] and manifest.release.license == "apache-2.0"
    assert (
        path.read_text()
        == text.replace("license: mit", "license: apache-2.0") + "evaluations:\n  - eval.json\n"
    )


def test_artifacts_are_not_edited_as_a_section() -> None:
    editor = ManifestEditor.open(Path(__file__).parents[2] / "manifests" / "example" / "hubrelease.yaml")
    with pytest.raises(RuntimeError):
        editor.section("artifacts")


@pytest.mark.parametrize(
    "layout",
    [
        pytest.param(
            lambda t: t.replace("ignore:\n  - scratch\n", "ignore: &ign\n  - scratch\n"), id="anchor"
        ),
        pytest.param(
            lambda t: t.replace("size: 1\n", "size: &one 1\n").replace("size: 3\n", "size: *one\n"),
            id="alias",
        ),
        pytest.param(lambda t: t.replace("\n", "\r\n"), id="crlf"),
        pytest.param(
            lambda t: t.replace(
                "release:\n  repo_id: acme/x\n  license: mit\n", "release: {repo_id: acme/x, license: mit}\n"
            ),
            id="flow-section",
        ),
        pytest.param(lambda t: t.replace("  - path: b.bin\n", "  -\n    path: b.bin\n"), id="dash-alone"),
        pytest.param(
            lambda t: (
                "{schema_version: 1, release: {repo_id: acme/x, license: mit}, artifacts: ["
                + ", ".join(f"{{path: {n}.bin, size: {i}, sha256: {n * 64}}}" for i, n in enumerate("abc", 1))
                + "]}\n"
            ),
            id="flow-top",
        ),
    ],
)
def test_every_layout_gets_the_same_edits(tmp_path: Path, layout: object) -> None:
    """Layouts line spans cannot describe take the one-tree editor or section round trips: same data."""
    path = tmp_path / "hubrelease.yaml"
    text = layout(_listed(path))  # type: ignore[operator]
    path.write_bytes(text.encode())
    editor = ManifestEditor.open(path)
    editor.upsert_artifact({"path": "d.bin", "size": 4, "sha256": DIGEST})
    editor.remove_artifacts(["a.bin"])
    saved = editor.save()
    reloaded = load_manifest(path)
    assert reloaded == saved
    assert [(a.path, a.size) for a in reloaded.artifacts][-1:] == [("d.bin", 4)]
    assert "a.bin" not in {a.path for a in reloaded.artifacts}


@st.composite
def _listings(draw: st.DrawFn) -> tuple[str, list[tuple[str, int]], list[tuple[str, str, int]]]:
    """A manifest of 1-6 entries with blank lines and comments between them, and edits to make."""
    names = [f"f{i}.bin" for i in range(draw(st.integers(1, 6)))]
    lines = ["# header", "schema_version: 1", "release:", "  repo_id: acme/x", "  license: mit", "artifacts:"]
    for index, name in enumerate(names):
        if draw(st.booleans()):
            lines.append("")
        if draw(st.booleans()):
            lines.append(f"  # note {index}")
        eol = f"  # eol {index}" if draw(st.booleans()) else ""
        last = f"  # last {index}" if draw(st.booleans()) else ""
        lines += [f"  - path: {name}{eol}", f"    size: {index}", f"    sha256: {'ab' * 32}{last}"]
    if draw(st.booleans()):
        lines += ["", "# trailing", "ignore:", "  - scratch"]
    pool = [*names, "new-a.bin", "new-b.bin"]
    ops = draw(
        st.lists(
            st.tuples(st.sampled_from(["upsert", "remove"]), st.sampled_from(pool), st.integers(0, 99)),
            max_size=6,
        )
    )
    return "\n".join(lines) + "\n", [(n, i) for i, n in enumerate(names)], ops


@given(_listings())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_random_edits_save_exactly_the_edited_list_and_keep_every_comment(
    tmp_path: Path, case: tuple[str, list[tuple[str, int]], list[tuple[str, str, int]]]
) -> None:
    text, model, ops = case
    path = tmp_path / "hubrelease.yaml"
    path.write_text(text)
    editor = ManifestEditor.open(path)
    removed: set[str] = set()
    for op, name, size in ops:
        if op == "upsert":
            editor.upsert_artifact({"path": name, "size": size, "sha256": DIGEST})
            at = next((i for i, (n, _) in enumerate(model) if n == name), None)
            model = [*model, (name, size)] if at is None else [*model[:at], (name, size), *model[at + 1 :]]
        else:
            editor.remove_artifacts([name])
            model = [(n, s) for n, s in model if n != name]
            removed.add(name)
    editor.save()
    saved = path.read_text()
    assert [(a.path, a.size) for a in load_manifest(path).artifacts] == model
    kept = {n for n, _ in model} - removed  # an entry removed and added again is a new entry
    lines = text.splitlines(keepends=True)
    for name in {n for n, _ in model} - {n for _, n, _ in ops}:  # untouched entries: byte for byte
        start = next(i for i, line in enumerate(lines) if f"- path: {name}" in line)
        assert "".join(lines[start : start + 3]) in saved
    for line in text.splitlines():
        comment = line.partition("#")[2]
        owner = re.search(r"(?:eol|last) (\d+)", comment)
        if comment and (owner is None or f"f{owner.group(1)}.bin" in kept):
            assert f"#{comment}" in saved, line


def test_an_entry_whose_path_is_not_a_string_is_a_located_error_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "hubrelease.yaml"
    path.write_text(_listed(path).replace("path: a.bin   # first", "path: [a, b]"))
    editor = ManifestEditor.open(path)
    assert editor.remove_artifacts(["c.bin"]) == [] and not editor.listed("c.bin")
    with pytest.raises(ManifestError) as info:
        editor.save()
    assert (info.value.line, info.value.field) == (6, "artifacts[0].path")
