"""`add` and `rm`: change a manifest's artifact list in place, keeping every comment and key order.

Edits go through ``manifest.editor`` (only the edited entries are written again, validation,
atomic save), so bytes outside them do not change. ``add`` on a file already listed refreshes its size, digest and
composition and reports old -> new; its role changes only when ``--role`` is given.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from hubrelease.errors import InputError
from hubrelease.fsutil import check_release_path, is_temp_name
from hubrelease.hashing import StatKey
from hubrelease.manifest.comments import YamlMap, is_yaml_map, trailing_comment_kept, yaml_map
from hubrelease.manifest.editor import ManifestEditor
from hubrelease.manifest.models import HAND_WRITTEN, ArtifactRole, Manifest
from hubrelease.manifest.root import release_root
from hubrelease.manifest.roundtrip import upsert_evaluation
from hubrelease.onboarding.facts import hash_scanned
from hubrelease.onboarding.roles import artifact_entry, guess_role
from hubrelease.onboarding.scan import ScannedFile
from hubrelease.progress import NULL_PROGRESS, Progress

Status = Literal["added", "changed", "unchanged", "evaluation", "card"]


@dataclass(frozen=True)
class AddChange:
    """What ``add`` did to one file's entry (``old_*`` None when the entry is new)."""

    path: str
    status: Status
    size: int
    sha256: str | None
    old_size: int | None = None
    old_sha256: str | None = None
    changed_keys: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return asdict(self)  # changed_keys: a tuple, written as a JSON list


@dataclass(frozen=True)
class AddResult:
    """Every file's change, and warnings about headers or evaluation files that did not parse."""

    changes: tuple[AddChange, ...]
    warnings: tuple[str, ...]


def add_files(
    manifest_path: Path,
    files: Sequence[Path],
    *,
    role: ArtifactRole | None = None,
    path_in_repo: str | None = None,
    root: Path | None = None,
    threads: int | None = None,
    progress: Progress = NULL_PROGRESS,
) -> AddResult:
    """Hash ``files`` and add or refresh their entries; write the manifest once, atomically.

    ``root`` is the release folder (``--dir``; default: the manifest's ``root:``, else its folder);
    every file must be inside it. A valid evaluation JSON goes to ``evaluations`` (with size and
    sha256) unless a role or repo path is given; the card file is pinned as a hand-written card
    (``card: {template: none, size, sha256}``), never as an artifact.
    """
    if path_in_repo is not None and len(files) != 1:
        raise InputError("--path-in-repo needs exactly one FILE", field="path-in-repo")
    if path_in_repo is not None:
        try:
            check_release_path(path_in_repo)
        except ValueError as exc:
            raise InputError(str(exc), field="path-in-repo") from None
    editor = ManifestEditor.open(manifest_path)
    manifest = editor.validate()
    published = {a.local_path: a.path for a in manifest.artifacts}
    local_of = {a.path: a.local_path for a in manifest.artifacts}
    folder = release_root(manifest, manifest_path, root)
    for file in files:
        if Path(file).resolve() == manifest_path.resolve():
            # Its digest changes the moment the entry is written, so verify could never pass.
            raise InputError("is the manifest itself; it cannot pin its own digest", path=file)
    scanned = [_scanned(folder, file) for file in files]
    facts, unreadable, warnings = hash_scanned(folder, scanned, threads=threads, progress=progress)
    if unreadable:
        first = unreadable[0]
        raise InputError(first.reason, path=folder / first.name)
    changes: list[AddChange] = []
    for item in facts:
        if item.name == manifest.card_output and item.name not in published and path_in_repo is None:
            _pin_card(editor.section("card"), manifest, item.name, item.size, item.sha256, folder=folder)
            changes.append(AddChange(item.name, "card", item.size, item.sha256))
            continue
        evaluation = item.name in manifest.evaluation_paths or (item.evaluation and role is None)
        if evaluation and path_in_repo is None and item.name not in published:
            upsert_evaluation(
                editor.section("evaluations"), {"path": item.name, "size": item.size, "sha256": item.sha256}
            )
            changes.append(AddChange(item.name, "evaluation", item.size, item.sha256))
            continue
        # A file already published under another repo path is refreshed there.
        path = path_in_repo or published.get(item.name, item.name)
        if published.get(item.name, path) != path:
            raise InputError(
                f"already listed as {published[item.name]}; `hubrelease rm` it first to publish it elsewhere",
                path=folder / item.name,
            )
        if local_of.get(path, item.name) != item.name:
            # Refreshing the entry would pin this file's digest on another file's bytes.
            raise InputError(
                f"{path} is already published from {local_of[path]}; `hubrelease rm {path}` first",
                path=folder / item.name,
            )
        # A role the user chose earlier is kept; a new entry gets a guessed one.
        guessed = None if role or editor.listed(path) else guess_role(item.name)
        entry = artifact_entry(item, role or guessed, path)
        old = editor.upsert_artifact(entry)
        if old is None:
            changes.append(AddChange(entry["path"], "added", item.size, item.sha256))
            continue
        status: Status = "changed" if old else "unchanged"
        changes.append(
            AddChange(
                entry["path"],
                status,
                item.size,
                item.sha256,
                old.get("size", item.size),
                old.get("sha256", item.sha256),
                tuple(old),
            )
        )
    if any(change.status != "unchanged" for change in changes):
        editor.save()
    return AddResult(tuple(changes), tuple(warnings))


def remove_paths(manifest_path: Path, paths: Sequence[str]) -> list[str]:
    """Remove artifacts (by repo path) and evaluation files; nothing is written if one is not listed."""
    editor = ManifestEditor.open(manifest_path)
    manifest = editor.validate()
    listed_evals = [p for p in paths if p in manifest.evaluation_paths]
    missing = [p for p in editor.remove_artifacts(paths) if p not in listed_evals]
    if missing:
        raise InputError(f"not in the manifest: {', '.join(missing)}", path=manifest_path)
    if listed_evals:
        tree = editor.section("evaluations")
        evaluations = tree["evaluations"]
        with trailing_comment_kept(tree, "evaluations"):
            for index in reversed(range(len(evaluations))):
                node = evaluations[index]
                if (node.get("path") if is_yaml_map(node) else node) in listed_evals:
                    del evaluations[index]
    editor.save()
    return list(paths)


def _scanned(folder: Path, file: Path) -> ScannedFile:
    """``file`` as a release-relative name, refusing what verify would refuse."""
    try:
        name = Path(os.path.abspath(file)).relative_to(os.path.abspath(folder)).as_posix()
    except ValueError:
        raise InputError(f"is outside the release folder {folder}", path=file) from None
    try:
        check_release_path(name)  # before hashing: the stat cache cannot store a lone surrogate either
    except ValueError as exc:
        raise InputError(
            f"{name!r} cannot be a path in the repo ({exc})", path=folder
        ) from None  # repr: one line
    try:
        st = os.lstat(file)
    except FileNotFoundError:
        raise InputError("no such file", path=file) from None
    except OSError as exc:
        raise InputError(f"cannot stat: {exc.strerror}", path=file) from None
    if stat.S_ISLNK(st.st_mode):
        raise InputError("is a symlink; add the file it points to", path=file)
    if any(is_temp_name(part) for part in name.split("/")):
        raise InputError("is the temp file of an interrupted write, not data; delete it", path=file)
    if not stat.S_ISREG(st.st_mode):
        raise InputError("is not a regular file", path=file)
    return ScannedFile(name, file, StatKey.of(st))


def _pin_card(
    tree: YamlMap, manifest: Manifest, name: str, size: int, sha256: str | None, *, folder: Path
) -> None:
    """Pin the card file as hand-written; a card render-card owns is refused (it is rendered, not added)."""
    card = manifest.card
    if card is not None and not card.hand_written:
        raise InputError(
            f"is the card rendered from template {card.template!r}; run `hubrelease render-card` instead, "
            "or set card.template: none to publish it as written",
            path=folder / name,
        )
    node = tree.get("card")
    if not is_yaml_map(node):
        node = yaml_map()
        tree["card"] = node
    node["template"] = HAND_WRITTEN
    node["size"] = size
    node["sha256"] = sha256
