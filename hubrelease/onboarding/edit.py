"""`add` and `rm`: change a manifest's artifact list in place, keeping every comment and key order.

Edits go through ``manifest.write`` (ruamel round trip, validation, atomic save), so bytes outside
the edited entries do not change. ``add`` on a file already listed refreshes its size, digest and
composition and reports old -> new; its role changes only when ``--role`` is given.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from hubrelease.errors import InputError
from hubrelease.fsutil import check_release_path, is_temp_name
from hubrelease.hashing import StatKey
from hubrelease.manifest.comments import trailing_comment_kept
from hubrelease.manifest.load import validate_tree
from hubrelease.manifest.models import Role
from hubrelease.manifest.write import load_tree, remove_artifacts, save_tree, upsert_artifact
from hubrelease.onboarding.facts import hash_scanned
from hubrelease.onboarding.roles import artifact_entry, guess_role
from hubrelease.onboarding.scan import ScannedFile
from hubrelease.progress import NULL_PROGRESS, Progress

Status = Literal["added", "changed", "unchanged", "evaluation"]


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
        return {
            "path": self.path,
            "status": self.status,
            "size": self.size,
            "sha256": self.sha256,
            "old_size": self.old_size,
            "old_sha256": self.old_sha256,
            "changed_keys": list(self.changed_keys),
        }


@dataclass(frozen=True)
class AddResult:
    """Every file's change, and warnings about headers or evaluation files that did not parse."""

    changes: tuple[AddChange, ...]
    warnings: tuple[str, ...]


def add_files(
    manifest_path: Path,
    files: Sequence[Path],
    *,
    role: Role | None = None,
    path_in_repo: str | None = None,
    root: Path | None = None,
    threads: int | None = None,
    progress: Progress = NULL_PROGRESS,
) -> AddResult:
    """Hash ``files`` and add or refresh their entries; write the manifest once, atomically.

    ``root`` is the release folder (default: the manifest's folder); every file must be inside it.
    A valid evaluation JSON goes to ``evaluations`` unless a role or repo path is given.
    """
    if path_in_repo is not None and len(files) != 1:
        raise InputError("--path-in-repo needs exactly one FILE", field="path-in-repo")
    if path_in_repo is not None:
        try:
            check_release_path(path_in_repo)
        except ValueError as exc:
            raise InputError(str(exc), field="path-in-repo") from None
    tree = load_tree(manifest_path)
    published = {a.local_path: a.path for a in validate_tree(tree, manifest_path).artifacts}
    folder = root or manifest_path.parent
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
        if item.evaluation and role is None and path_in_repo is None and item.name not in published:
            with trailing_comment_kept(tree, "evaluations"):
                _add_evaluation(tree, item.name)
            changes.append(AddChange(item.name, "evaluation", item.size, item.sha256))
            continue
        # A file already published under another repo path is refreshed there.
        path = path_in_repo or published.get(item.name, item.name)
        if published.get(item.name, path) != path:
            raise InputError(
                f"already listed as {published[item.name]}; `hubrelease rm` it first to publish it elsewhere",
                path=folder / item.name,
            )
        # A role the user chose earlier is kept; a new entry gets a guessed one.
        guessed = None if role or _listed(tree, path) else guess_role(item.name)
        entry = artifact_entry(item, role or guessed, path)
        old = upsert_artifact(tree, entry)
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
        save_tree(tree, manifest_path)
    return AddResult(tuple(changes), tuple(warnings))


def remove_paths(manifest_path: Path, paths: Sequence[str]) -> list[str]:
    """Remove artifacts (by repo path) and evaluation files; nothing is written if one is not listed."""
    tree = load_tree(manifest_path)
    validate_tree(tree, manifest_path)
    evaluations = tree.get("evaluations")
    listed_evals = [p for p in paths if isinstance(evaluations, CommentedSeq) and p in evaluations]
    missing = [p for p in remove_artifacts(tree, list(paths)) if p not in listed_evals]
    if missing:
        raise InputError(f"not in the manifest: {', '.join(missing)}", path=manifest_path)
    with trailing_comment_kept(tree, "evaluations"):
        for name in listed_evals:
            del evaluations[evaluations.index(name)]
    save_tree(tree, manifest_path)
    return list(paths)


def _scanned(folder: Path, file: Path) -> ScannedFile:
    """``file`` as a release-relative name, refusing what verify would refuse."""
    try:
        name = Path(os.path.abspath(file)).relative_to(os.path.abspath(folder)).as_posix()
    except ValueError:
        raise InputError(f"is outside the release folder {folder}", path=file) from None
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


def _add_evaluation(tree: CommentedMap, name: str) -> None:
    evaluations = tree.get("evaluations")
    if evaluations is None:
        evaluations = CommentedSeq()
        tree["evaluations"] = evaluations
    if name not in evaluations:
        evaluations.append(name)


def _listed(tree: CommentedMap, path: str) -> bool:
    return any(isinstance(n, CommentedMap) and n.get("path") == path for n in tree.get("artifacts") or ())
