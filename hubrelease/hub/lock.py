"""`lock`: turn every pin's branch or tag into a commit and fill pinned file sizes and sha256s.

Pins marked ``unpinned: true`` are deliberate and kept as they are; ``--pin REPO_ID`` converts one.

Everything comes from Hub metadata (``repo_info`` for the commit, ``get_paths_info`` for files), so
locking a 100 GB target costs a few requests. GGUF and safetensors files also get a header pin
(``header_sha256`` + ``composition``) from range reads of their headers (``hub.remote_headers``):
one or two requests per file, so a size-only pin of a mutable repo still catches changed metadata. Values already in the manifest are never overwritten:
if the Hub disagrees, lock stops and names the field, because a silent rewrite would hide drift.
The manifest is rewritten through ``manifest.editor``: only the pins section, comments and key order kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from huggingface_hub import HfApi

from hubrelease.errors import CheckFailed, FormatError, HubError, InputError
from hubrelease.hub.metadata import remote_files, resolve_commit
from hubrelease.hub.remote_headers import RemoteRepo, header_pin
from hubrelease.hub.remote_verify import pin_label
from hubrelease.manifest.comments import (
    YamlMap,
    add_note,
    delete_key,
    end_comment_kept,
    is_yaml_map,
    pop_comment_above,
)
from hubrelease.manifest.editor import ManifestEditor
from hubrelease.revisions import is_commit

_PIN_LISTS = (("targets", "model"), ("base_drafters", "model"), ("datasets", "dataset"))


@dataclass(frozen=True)
class LockChange:
    """One value lock wrote (``old`` None when the field was absent)."""

    pin: str
    field: str
    old: str | int | bool | dict[str, int] | None
    new: str | int | bool | dict[str, int]

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class LockResult:
    """What lock changed and what it could not pin (regular files have no sha256 on the Hub)."""

    changes: tuple[LockChange, ...]
    size_only: tuple[str, ...]
    written: bool
    no_header_pin: tuple[str, ...] = ()
    """GGUF / safetensors files whose header could not be parsed: ``label: reason``."""
    kept_unpinned: tuple[str, ...] = ()
    """Pins marked ``unpinned: true`` and left exactly as they are (``--pin`` converts one)."""
    removed_comments: tuple[tuple[str, str], ...] = ()
    """(repo id, text) of the comment above each pin ``--pin`` converted: it described the pin as unpinned."""
    warnings: tuple[str, ...] = ()
    """What was locked but could not be followed up (the pinned target's header not read)."""


def lock_manifest(path: Path, api: HfApi, *, dry_run: bool = False, pin: Sequence[str] = ()) -> LockResult:
    """Resolve and fill the pins of the manifest at ``path``; write it back unless ``dry_run``.

    A pin marked ``unpinned: true`` says on purpose that no commit is to be recorded (seed 001's
    target: the revision was not recorded when it was measured), so it is kept as it is, unless
    its repo id is in ``pin``: then it is locked like any branch, ``unpinned`` dropped, and the
    comment above it (which explained why it was unpinned) removed and returned.
    """
    editor = ManifestEditor.open(path)
    pins = editor.section("pins").get("pins")
    nodes = _pin_nodes(pins)
    ids = {str(node.get("repo_id")) for node, *_ in nodes}
    unknown = [repo_id for repo_id in pin if repo_id not in ids]
    if unknown:
        raise InputError(f"--pin {unknown[0]}: no pin has that repo_id", path=path, field="pins")
    wanted = []
    kept: list[str] = []
    for node, default_type, key, index in nodes:
        deliberate = node.get("unpinned") is True
        if deliberate and str(node.get("repo_id")) not in pin:
            kept.append(str(node["repo_id"]))
            continue
        # A branch in `revision` is what lock is for: validate as if it were marked unpinned
        # (the validation message for it says "hubrelease lock resolves branches").
        if "unpinned" not in node and not is_commit(node.get("revision")):
            node["unpinned"] = True
        wanted.append((node, default_type, key, index, deliberate))
    editor.validate()
    changes: list[LockChange] = []
    size_only: list[str] = []
    no_header: list[str] = []
    for node, default_type, _, _, deliberate in wanted:
        _lock_pin(api, node, default_type, changes, size_only, no_header=no_header)
        if deliberate:
            changes.append(LockChange(str(node["repo_id"]), "unpinned", True, False))
    removed = []
    for node, _, key, index, deliberate in wanted:
        text = pop_comment_above(pins, key, index) if deliberate else ""
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if lines:
            removed.append((str(node["repo_id"]), "\n".join(lines)))
    written = bool(changes) and not dry_run
    if written:
        editor.save()
    return LockResult(
        tuple(changes), tuple(size_only), written, tuple(no_header), tuple(kept), tuple(removed)
    )


def lock_release(path: Path, api: HfApi, *, dry_run: bool = False, pin: Sequence[str] = ()) -> LockResult:
    """``lock_manifest``, then (unless ``dry_run``) the now pinned target's depth and width read into
    the release folder, so that a local verify lints against them without the Hub."""
    from hubrelease.errors import HubReleaseError
    from hubrelease.hub.target_facts import fetch_target
    from hubrelease.manifest import load_manifest
    from hubrelease.manifest.root import release_root

    result = lock_manifest(path, api, dry_run=dry_run, pin=pin)
    if dry_run:
        return result
    manifest = load_manifest(path)
    try:
        fetch_target(api, manifest, release_root(manifest, path))
    except HubReleaseError as exc:
        warning = f"the pinned target's header was not read ({exc}): lint runs without its depth"
        return replace(result, warnings=(warning,))
    return result


def _pin_nodes(pins: object) -> list[tuple[YamlMap, str, str, int]]:
    """Every pin mapping with its default repo type, list and index (anything malformed is left to validation)."""
    if not is_yaml_map(pins):
        return []
    return [
        (node, default_type, key, index)
        for key, default_type in _PIN_LISTS
        if isinstance(pins.get(key), list)
        for index, node in enumerate(pins[key])
        if is_yaml_map(node)
    ]


def _lock_pin(
    api: HfApi,
    node: YamlMap,
    default_type: str,
    changes: list[LockChange],
    size_only: list[str],
    *,
    no_header: list[str],
) -> None:
    repo_id = str(node["repo_id"])
    repo_type = str(node.get("repo_type") or default_type)
    revision = str(node.get("revision") or "main")
    commit = revision
    with end_comment_kept(node):
        if not is_commit(revision):
            commit = resolve_commit(api, repo_id, revision, repo_type)
            changes.append(LockChange(repo_id, "revision", node.get("revision"), commit))
            node["revision"] = commit
            add_note(node, "revision", f"locked from {revision}")
        if "unpinned" in node:
            delete_key(node, "unpinned")
        files = [f for f in node.get("files") or [] if is_yaml_map(f)]
        if not files:
            return
        remote = remote_files(api, repo_id, [str(f["path"]) for f in files], commit, repo_type)
        headers = RemoteRepo(api, repo_id, commit, repo_type)
        for item in files:
            label = pin_label(repo_id, commit, str(item["path"]))
            found = remote.get(str(item["path"]))
            if found is None:
                raise HubError(f"{label}: file not found at the pinned revision", repo_id=repo_id, status=404)
            with end_comment_kept(item):
                _fill(item, "size", found.size, label, changes)
                if found.sha256 is None:
                    size_only.append(label)
                else:
                    _fill(item, "sha256", found.sha256, label, changes)
                try:
                    pinned = header_pin(headers, str(item["path"]))
                except FormatError as exc:
                    no_header.append(f"{label}: {exc.message}")
                    continue
                if pinned is not None:
                    _fill(item, "header_sha256", pinned[0], label, changes)
                    _fill(item, "composition", pinned[1], label, changes)


def _fill(item: YamlMap, field: str, value: Any, label: str, changes: list[LockChange]) -> None:
    old = item.get(field)
    if old is None:
        item[field] = value
        changes.append(LockChange(label, field, None, value))
    elif old != value:
        raise CheckFailed(
            f"{label}: the Hub has {field} {value}, the manifest pins {old}; not overwriting", field=field
        )
