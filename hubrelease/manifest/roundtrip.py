"""ruamel.yaml round trips: the YAML of edited entries, in the file's own indentation and comments.

``manifest.editor`` decides which lines of a manifest an edit rewrites; these helpers turn those
lines into ruamel trees and back, and edit artifact entries inside a tree.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from hubrelease.errors import ManifestError
from hubrelease.manifest.comments import trailing_comment_kept
from hubrelease.manifest.load import parse_tree
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


def refresh_entry(node: CommentedMap, entry: Mapping[str, Any]) -> dict[str, Any]:
    """Set ``entry``'s non-None values on ``node``; the previous values of the keys that changed.

    Keys already there keep their place and comments; new keys go at the end.
    """
    old: dict[str, Any] = {}
    for key, value in entry.items():
        if value is not None and node.get(key) != value:
            old[key] = node.get(key)
            node[key] = to_node(value)
    return old


def upsert_artifact(tree: CommentedMap, entry: Mapping[str, Any]) -> dict[str, Any] | None:
    """Add or update the artifact whose ``path`` equals ``entry['path']``.

    Returns the previous values of the keys that changed (empty dict if nothing changed), or None
    when the artifact is new.
    """
    artifacts = tree.get("artifacts")
    if artifacts is None:
        artifacts = CommentedSeq()
        tree["artifacts"] = artifacts
    # Blank lines and comments that followed the last entry stay at the end of the block.
    with trailing_comment_kept(tree, "artifacts"):
        for node in artifacts:
            if isinstance(node, CommentedMap) and node.get("path") == entry["path"]:
                return refresh_entry(node, entry)
        artifacts.append(to_node(entry))
    return None


def upsert_evaluation(tree: CommentedMap, entry: Mapping[str, Any]) -> None:
    """Add or refresh the ``evaluations`` entry at ``entry['path']`` (a bare path is upgraded in place);
    keys the entry does not set (``deviations``, a ``recipe``) stay as they were."""
    evaluations = tree.get("evaluations")
    if evaluations is None:
        evaluations = CommentedSeq()
        tree["evaluations"] = evaluations
    with trailing_comment_kept(tree, "evaluations"):
        for index, node in enumerate(evaluations):
            if isinstance(node, CommentedMap) and node.get("path") == entry["path"]:
                refresh_entry(node, entry)
                return
            if node == entry["path"]:
                evaluations[index] = to_node(entry)
                return
        evaluations.append(to_node(entry))


def artifact_listed(tree: CommentedMap, path: str) -> bool:
    """Whether ``tree`` lists an artifact at repo path ``path``."""
    return any(isinstance(n, CommentedMap) and n.get("path") == path for n in tree.get("artifacts") or ())


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


def load_section(text: str, path: Path, first_line: int) -> CommentedMap:
    """ruamel's tree of some lines of a manifest that start at 0-based line ``first_line``."""
    if not text.strip():
        return CommentedMap()
    try:
        return parse_tree(text, path)
    except ManifestError as exc:
        line = exc.line + first_line if exc.line is not None else None
        raise ManifestError(exc.message, path=path, line=line, field=exc.field) from None


def manifest_to_yaml(manifest: Manifest) -> str:
    """A fresh YAML document for a manifest (no comments to keep), omitting defaults."""
    data = manifest.model_dump(mode="json", exclude_defaults=True)
    data = {"schema_version": manifest.schema_version, **data}
    return dump_tree(to_node(data))
