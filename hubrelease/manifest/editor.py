"""Editing a manifest in place at release scale: only what an edit touches is written again.

ruamel.yaml needs ~80 s to load and dump a 25,000-artifact manifest; libyaml parses it in a few
seconds at most. So an edit parses the file once with libyaml, whose node marks give the line
span of every top-level section and of every artifact entry, and round-trips through ruamel only
the sections and entries it changes, each from its own lines: ruamel keeps their comments, quotes
and key order as before, and every other line of the file is copied as it was. The edited result
is validated as data (the parsed data with the edited parts swapped in) and written atomically;
only an invalid result is parsed again, to name the line of the error.

A file whose layout line spans cannot describe (an alias, CR line ends, a byte-order mark, a
flow-style top level, YAML 1.1 line breaks) is edited as one ruamel tree: slower, same result.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml as pyyaml
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from hubrelease.fsutil import STATE_DIR, atomic_write_bytes, atomic_write_text
from hubrelease.manifest.load import (
    load_manifest_text,
    parse_nodes,
    parse_tree,
    to_plain,
    valid_manifest,
    validate_tree,
)
from hubrelease.manifest.models import Manifest
from hubrelease.manifest.roundtrip import (
    Indent,
    artifact_listed,
    dump_tree,
    guess_indent,
    load_section,
    refresh_entry,
    remove_artifacts,
    to_node,
    upsert_artifact,
)
from hubrelease.manifest.text import read_text

_ARTIFACTS = "artifacts"


class ManifestEditor:
    """A manifest open for editing: sections as ruamel trees, artifacts by repo path, one save."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.text = text

    @classmethod
    def open(cls, path: str | Path) -> ManifestEditor:
        """Parse the manifest at ``path`` (syntax errors are a ``ManifestError``; nothing is validated yet)."""
        target = Path(path)
        text = read_text(target)
        if not any(ch in text for ch in "\r\ufeff"):
            parsed = parse_nodes(text, target)
            if parsed is not None and _spliceable(parsed[0]) and not ("*" in text and _aliased(parsed[0])):
                return _SpliceEditor(target, text, *parsed)
        return _TreeEditor(target, text)

    def section(self, key: str) -> CommentedMap:
        """A tree holding the top-level ``key`` (empty if absent: assign ``tree[key]`` to add it).

        Changes to that key of the returned tree are saved; other keys of it must not be edited.
        """
        raise NotImplementedError

    def listed(self, path: str) -> bool:
        """Whether an artifact is published at repo path ``path``."""
        raise NotImplementedError

    def upsert_artifact(self, entry: Mapping[str, Any]) -> dict[str, Any] | None:
        """``write.upsert_artifact``: the previous values of the keys that changed, None if new."""
        raise NotImplementedError

    def remove_artifacts(self, paths: Iterable[str]) -> list[str]:
        """Remove artifacts by repo path; returns the paths that were not listed."""
        raise NotImplementedError

    def validate(self) -> Manifest:
        """The manifest as edited so far; a ``ManifestError`` names the line of the edited text."""
        raise NotImplementedError

    def render(self) -> str:
        """The edited file's text."""
        raise NotImplementedError

    def save(self) -> Manifest:
        """Validate the edits and write them atomically; the file is untouched if they are invalid."""
        manifest = self.validate()
        atomic_write_text(self.path, self.render())
        return manifest


class _TreeEditor(ManifestEditor):
    """The whole file as one ruamel tree (``manifest.roundtrip``)."""

    def __init__(self, path: Path, text: str) -> None:
        super().__init__(path, text)
        self.tree = parse_tree(text, path)

    def section(self, key: str) -> CommentedMap:
        return self.tree

    def listed(self, path: str) -> bool:
        return artifact_listed(self.tree, path)

    def upsert_artifact(self, entry: Mapping[str, Any]) -> dict[str, Any] | None:
        return upsert_artifact(self.tree, entry)

    def remove_artifacts(self, paths: Iterable[str]) -> list[str]:
        return remove_artifacts(self.tree, list(paths))

    def validate(self) -> Manifest:
        return validate_tree(self.tree, self.path)

    def render(self) -> str:
        return dump_tree(self.tree, guess_indent(self.text))


@dataclass
class _Entry:
    """One artifact entry: its plain data, its lines in the original text, its ruamel node once edited."""

    data: dict[str, Any]
    first: int | None  # the line of its dash; None for an entry this edit adds
    last: int  # its last line of content (comment lines after it stay where they are)
    node: CommentedMap | None = None
    dirty: bool = False
    removed: bool = False


class _SpliceEditor(ManifestEditor):
    """Edits as line splices: untouched sections and entries keep their exact lines."""

    def __init__(self, path: Path, text: str, root: pyyaml.MappingNode, data: dict[str, Any]) -> None:
        super().__init__(path, text)
        self.data = data
        parts = text.split("\n")  # libyaml's line breaks too: CR and YAML 1.1 breaks took the tree path
        self.lines = [part + "\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
        keys = [(key.value, key.start_mark.line, value) for key, value in root.value]
        self.spans = {
            name: (line, keys[i + 1][1] if i + 1 < len(keys) else len(self.lines))
            for i, (name, line, _) in enumerate(keys)
        }
        self.sections: dict[str, CommentedMap] = {}
        value = next((v for name, _, v in keys if name == _ARTIFACTS), None)
        self.entries = _entries(value, data.get(_ARTIFACTS), self.lines)
        # Listed entries by repo path (the first of equal paths, as a scan would find): an `add` of
        # 1,000 files to a 25,000-entry list looks each up twice.
        self.by_path: dict[str, _Entry] = {}
        for entry in self.entries or ():
            repo_path = entry.data.get("path")
            if isinstance(repo_path, str):  # anything else fails validation; it must not fail hashing first
                self.by_path.setdefault(repo_path, entry)
        self.indent = guess_indent(text)

    def section(self, key: str) -> CommentedMap:
        if key == _ARTIFACTS and self.entries is not None:
            raise RuntimeError("artifacts are edited by path (upsert_artifact / remove_artifacts)")
        tree = self.sections.get(key)
        if tree is None:
            span = self.spans.get(key)
            text = "".join(self.lines[span[0] : span[1]]) if span else ""
            tree = self.sections[key] = load_section(text, self.path, span[0] if span else 0)
        return tree

    def listed(self, path: str) -> bool:
        if self.entries is None:
            return artifact_listed(self.section(_ARTIFACTS), path)
        return path in self.by_path

    def upsert_artifact(self, entry: Mapping[str, Any]) -> dict[str, Any] | None:
        if self.entries is None:
            return upsert_artifact(self.section(_ARTIFACTS), entry)
        found = self.by_path.get(entry["path"])
        if found is None:
            node = to_node(entry)
            self.by_path[entry["path"]] = _Entry(to_plain(node), None, -1, node, dirty=True)
            self.entries.append(self.by_path[entry["path"]])
            return None
        if found.node is None:
            found.node = self._entry_node(found)
        old = refresh_entry(found.node, entry)
        if old:
            found.dirty = True
            found.data = to_plain(found.node)
        return old

    def remove_artifacts(self, paths: Iterable[str]) -> list[str]:
        wanted = list(paths)
        if self.entries is None:
            return remove_artifacts(self.section(_ARTIFACTS), wanted)
        missing = [p for p in wanted if p not in self.by_path]
        gone = set(wanted)
        for entry in self.entries:
            path = entry.data.get("path")
            if isinstance(path, str) and path in gone:
                entry.removed = True
        for path in gone:
            self.by_path.pop(path, None)
        return missing

    def _entry_node(self, entry: _Entry) -> CommentedMap:
        assert entry.first is not None
        text = f"{_ARTIFACTS}:\n" + "".join(self.lines[entry.first : entry.last + 1])
        node = load_section(text, self.path, entry.first - 1)[_ARTIFACTS][0]
        if not isinstance(node, CommentedMap):
            raise RuntimeError(f"artifact entry on line {entry.first + 1} did not parse as a mapping")
        return node

    def _edited_data(self) -> dict[str, Any]:
        data = dict(self.data)
        for key, tree in self.sections.items():
            if key in tree:
                data[key] = to_plain(tree[key])
            else:
                data.pop(key, None)
        if self.entries is not None:
            data[_ARTIFACTS] = [e.data for e in self.entries if not e.removed]
        return data

    def validate(self) -> Manifest:
        manifest = valid_manifest(self._edited_data())
        if manifest is None:
            # Parsing the edited text again gives the error its line (only an invalid edit pays for it).
            load_manifest_text(self.render(), self.path)
            raise RuntimeError("an edit failed validation as data but not as text")
        return manifest

    def render(self) -> str:
        splices: list[tuple[int, int, str]] = []  # (first line, end line, replacement), in order
        appended: list[str] = []
        for key, tree in self.sections.items():
            text = dump_tree(tree, self.indent) if key in tree else ""
            if key in self.spans:
                splices.append((*self.spans[key], text))
            elif text:
                appended.append(text)
        if self.entries is not None:
            splices.extend(self._entry_splices())
        out: list[str] = []
        position = 0
        for first, end, text in sorted(splices, key=lambda s: (s[0], s[1])):
            out.extend(self.lines[position:first])
            out.append(text)
            position = end
        out.extend(self.lines[position:])
        if appended and out and not out[-1].endswith("\n"):
            out.append("\n")
        return "".join(out + appended)

    def _entry_splices(self) -> list[tuple[int, int, str]]:
        assert self.entries is not None
        listed = [(e, e.first) for e in self.entries if e.first is not None]
        last_entry = listed[-1][0]
        indent = _entry_indent(self.lines[listed[-1][1]], self.indent)
        splices: list[tuple[int, int, str]] = []
        for entry, first in listed:
            end = entry.last + 1
            if entry.removed:
                # Entries set apart by blank lines stay so: the blank line after it goes with it.
                if entry is not last_entry and not self.lines[end].strip():
                    end += 1
                splices.append((first, end, ""))
            elif entry.dirty:
                splices.append((first, end, _dump_entry(entry, indent)))
        added = "".join(_dump_entry(e, indent) for e in self.entries if e.first is None and not e.removed)
        if added:
            splices.append((last_entry.last + 1, last_entry.last + 1, added))
        elif all(entry.removed for entry, _ in listed):
            key_line = self.spans[_ARTIFACTS][0]
            splices.append((key_line, key_line + 1, _empty_list(self.lines[key_line])))
        return splices


def _spliceable(root: pyyaml.Node) -> bool:
    """A block mapping whose keys all start their line: each section is then a run of whole lines."""
    return (
        isinstance(root, pyyaml.MappingNode)
        and not root.flow_style
        and all(key.start_mark.column == 0 for key, _ in root.value)
    )


def _aliased(root: pyyaml.Node) -> bool:
    """Whether an alias reuses a node (libyaml's composer shares the anchored node object): the
    value then lives in two places, and a splice of one would not change the other."""
    seen: set[int] = set()
    stack: list[pyyaml.Node] = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            return True
        seen.add(id(node))
        if isinstance(node, pyyaml.MappingNode):
            stack.extend(item for pair in node.value for item in pair)
        elif isinstance(node, pyyaml.SequenceNode):
            stack.extend(node.value)
    return False


def _entries(node: pyyaml.Node | None, data: Any, lines: list[str]) -> list[_Entry] | None:
    """Each artifact entry with its lines; None when the list is not a non-empty block list of block maps."""
    if not isinstance(node, pyyaml.SequenceNode) or node.flow_style or not node.value:
        return None
    if not isinstance(data, list) or len(data) != len(node.value):
        return None
    entries: list[_Entry] = []
    for index, item in enumerate(node.value):
        if not isinstance(item, pyyaml.MappingNode) or item.flow_style or not item.value:
            return None
        line = item.start_mark.line
        if lines[line][: item.start_mark.column].strip() != "-":
            return None  # the dash is on a line of its own: not a shape these spans describe
        entries.append(_Entry(data[index], line, _last_line(item)))
    for entry, following in itertools.pairwise(entries):
        assert following.first is not None
        entry.last = min(entry.last, following.first - 1)
    return entries


def _last_line(node: pyyaml.Node) -> int:
    """The line where ``node``'s content ends (its deepest last value's end mark)."""
    while isinstance(node, pyyaml.CollectionNode) and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if isinstance(last, tuple) else last
    end = node.end_mark
    # A block scalar ends at the start of the line after it.
    return end.line - 1 if end.column == 0 and end.line > node.start_mark.line else end.line


def _entry_indent(line: str, indent: Indent) -> Indent:
    """The indentation of the list's entries (from an entry's dash ``line``), nested maps as the file's."""
    dash = line.index("-")
    key = dash + 1 + len(line[dash + 1 :]) - len(line[dash + 1 :].lstrip(" "))
    return (indent[0], key, dash)


def _dump_entry(entry: _Entry, indent: Indent) -> str:
    assert entry.node is not None
    tree = CommentedMap()
    tree[_ARTIFACTS] = CommentedSeq([entry.node])
    text = dump_tree(tree, indent)
    return text.split("\n", 1)[1]  # without the `artifacts:` line


def _empty_list(key_line: str) -> str:
    """``artifacts:  # note`` -> ``artifacts: []  # note`` (every entry was removed)."""
    colon = key_line.index(":")
    return key_line[: colon + 1] + " []" + key_line[colon + 1 :]


def published_manifest(manifest: Manifest, manifest_path: Path, root: Path) -> Path:
    """The manifest file as the Hub gets it: itself, or (with ``root:``) a copy without that line.

    On the Hub (and after ``hf download``) the manifest sits at the top of the release folder, so
    a ``root:`` pointing from its local place to the folder would send every command astray. The
    copy lives in the release's state folder, which is never published or walked.
    """
    if manifest.root is None:
        return manifest_path
    copy = root / STATE_DIR / "published" / manifest_path.name
    atomic_write_bytes(copy, published_manifest_bytes(manifest, manifest_path))
    return copy


def published_manifest_bytes(manifest: Manifest, manifest_path: Path) -> bytes:
    """The bytes the Hub gets for the manifest (see ``published_manifest``), nothing written."""
    if manifest.root is None:
        return manifest_path.read_bytes()
    editor = ManifestEditor.open(manifest_path)
    del editor.section("root")["root"]
    return editor.render().encode("utf-8")
