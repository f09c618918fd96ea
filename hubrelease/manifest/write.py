"""Round-trip saving: edit a manifest in place, keeping its comments and key order.

Commands that change a manifest (build --manifest, init, add, rm, lock) load the ruamel tree,
edit it through these helpers, re-validate, and save atomically. Nothing outside the edited
entries changes byte-for-byte.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from hubrelease.fsutil import atomic_write_text
from hubrelease.manifest.comments import trailing_comment_kept
from hubrelease.manifest.load import read_tree, validate_tree
from hubrelease.manifest.models import Manifest


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    yaml.preserve_quotes = True
    return yaml


def dump_tree(tree: CommentedMap) -> str:
    """Serialise a ruamel tree back to YAML text."""
    buffer = io.StringIO()
    _yaml().dump(tree, buffer)
    return buffer.getvalue()


def save_tree(tree: CommentedMap, path: str | Path) -> Manifest:
    """Validate ``tree`` and write it atomically to ``path``; the file is untouched if invalid."""
    target = Path(path)
    manifest = validate_tree(tree, target)
    atomic_write_text(target, dump_tree(tree))
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
