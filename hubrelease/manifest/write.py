"""Round-trip saving: edit a manifest in place, keeping its comments and key order.

Commands that change a manifest (build --manifest, init, add, rm, lock) load the ruamel tree,
edit it through these helpers, re-validate, and save atomically. Nothing outside the edited
entries changes byte-for-byte.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from hubrelease.fsutil import STATE_DIR, atomic_write_text
from hubrelease.manifest.comments import trailing_comment_kept
from hubrelease.manifest.load import read_tree, validate_tree
from hubrelease.manifest.models import Manifest

Indent = tuple[int, int, int]
"""ruamel's (mapping, sequence, offset) indentation."""
HOUSE_INDENT: Indent = (2, 4, 2)
# A key whose value is a nested block (nothing after the colon but a comment); dash lines excluded.
_BLOCK_KEY = re.compile(r"^ *[^\s#-][^#]*:[ \t]*(#.*)?$")


def _yaml(indent: Indent = HOUSE_INDENT) -> YAML:
    yaml = YAML(typ="rt")
    mapping, sequence, offset = indent
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    yaml.width = 4096
    yaml.preserve_quotes = True
    return yaml


def guess_indent(text: str) -> Indent:
    """The indentation ``text`` already uses, so saving an edit re-indents nothing else.

    ruamel keeps one indentation per document, not per node; its own guesser
    (``util.load_yaml_guess_indent``) reports our house style's sequence indent as the mapping
    indent, so the first nested key and the first nested dash decide here. Unknown parts keep the house style.
    """
    mapping: int | None = None
    offset: int | None = None
    parent: int | None = None
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        column = len(line) - len(stripped)
        if parent is not None:
            if stripped == "-" or stripped.startswith("- "):
                offset = column - parent if offset is None and column >= parent else offset
            elif mapping is None and column > parent:
                mapping = column - parent
        if mapping is not None and offset is not None:
            break
        parent = column if _BLOCK_KEY.match(line) else None
    offset = HOUSE_INDENT[2] if offset is None else offset
    return (mapping or HOUSE_INDENT[0], offset + 2, offset)


def dump_tree(tree: CommentedMap, indent: Indent = HOUSE_INDENT) -> str:
    """Serialise a ruamel tree back to YAML text."""
    buffer = io.StringIO()
    _yaml(indent).dump(tree, buffer)
    return buffer.getvalue()


def save_tree(tree: CommentedMap, path: str | Path) -> Manifest:
    """Validate ``tree`` and write it atomically to ``path`` in the file's own indentation;
    the file is untouched if invalid."""
    target = Path(path)
    manifest = validate_tree(tree, target)
    try:
        indent = guess_indent(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        indent = HOUSE_INDENT
    atomic_write_text(target, dump_tree(tree, indent))
    return manifest


def to_node(value: Any) -> Any:
    """Plain Python -> ruamel nodes, so new entries dump in block style like the rest of the file."""
    if isinstance(value, Mapping):
        node = CommentedMap()
        for key, item in value.items():
            if item is not None:
                node[key] = to_node(item)
        return node
    if isinstance(value, list | tuple):
        seq = CommentedSeq()
        for item in value:
            seq.append(to_node(item))
        return seq
    return value


def upsert_artifact(tree: CommentedMap, entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """Add or update the artifact whose ``path`` equals ``entry['path']``.

    Returns the previous values of the keys that changed (empty dict if nothing changed), or None
    when the artifact is new. Keys of an existing entry keep their order and comments.
    """
    artifacts = tree.get("artifacts")
    if artifacts is None:
        artifacts = CommentedSeq()
        tree["artifacts"] = artifacts
    # Blank lines and comments that followed the last entry stay at the end of the block.
    with trailing_comment_kept(tree, "artifacts"):
        for node in artifacts:
            if isinstance(node, CommentedMap) and node.get("path") == entry["path"]:
                old: dict[str, Any] = {}
                for key, value in entry.items():
                    if value is None:
                        continue
                    if node.get(key) != value:
                        old[key] = node.get(key)
                        node[key] = to_node(value)
                return old
        artifacts.append(to_node(entry))
    return None


def remove_artifacts(tree: CommentedMap, paths: list[str]) -> list[str]:
    """Remove artifacts by repo path; returns the paths that were not found."""
    artifacts = tree.get("artifacts") or CommentedSeq()
    missing = [
        p for p in paths if not any(isinstance(n, CommentedMap) and n.get("path") == p for n in artifacts)
    ]
    with trailing_comment_kept(tree, "artifacts"):
        for index in reversed(range(len(artifacts))):
            node = artifacts[index]
            if isinstance(node, CommentedMap) and node.get("path") in paths:
                del artifacts[index]
    return missing


def load_tree(path: str | Path) -> CommentedMap:
    """The editable tree of a manifest file."""
    return read_tree(Path(path))


def manifest_to_yaml(manifest: Manifest) -> str:
    """A fresh YAML document for a manifest (no comments to keep), omitting defaults."""
    data = manifest.model_dump(mode="json", exclude_defaults=True)
    data = {"schema_version": manifest.schema_version, **data}
    return dump_tree(to_node(data))


def published_manifest(manifest: Manifest, manifest_path: Path, root: Path) -> Path:
    """The manifest file as the Hub gets it: itself, or (with ``root:``) a copy without that line.

    On the Hub (and after ``hf download``) the manifest sits at the top of the release folder, so
    a ``root:`` pointing from its local place to the folder would send every command astray. The
    copy lives in the release's state folder, which is never published or walked.
    """
    if manifest.root is None:
        return manifest_path
    tree = load_tree(manifest_path)
    del tree["root"]
    text = dump_tree(tree, guess_indent(manifest_path.read_text(encoding="utf-8")))
    copy = root / STATE_DIR / "published" / manifest_path.name
    atomic_write_text(copy, text)
    return copy
