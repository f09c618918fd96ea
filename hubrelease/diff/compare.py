"""Two releases compared: files, pins, architecture from headers, evaluation cells, licence and signer.

Each difference is one ``Change`` in a section, with the old and the new value. Architecture is read
only for model files whose digest changed (``formats.architecture``), so an unchanged release costs no
header reads; evaluation files are read (small JSON) only when their digests differ.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hubrelease.card.changes import CHANGES_FILE, changes_document
from hubrelease.diff.sides import Side, hub_side, is_local, local_side, published_of, side
from hubrelease.errors import HubReleaseError, InputError
from hubrelease.evaluation.load import validate_model
from hubrelease.evaluation.models import Evaluation
from hubrelease.formats.architecture import architecture_changes, is_model_file
from hubrelease.fsutil import atomic_write_bytes
from hubrelease.manifest.editor import ManifestEditor
from hubrelease.manifest.models import Manifest, PinnedRepo
from hubrelease.pull.files import file_changes, manifest_files

if TYPE_CHECKING:
    from huggingface_hub import HfApi

Section = Literal["file", "architecture", "pin", "engine", "evaluation", "licence", "signer"]
CELL_METRICS = ("overall_tok_s", "per_user_tok_s", "accepted_length")


@dataclass(frozen=True)
class Change:
    section: Section
    subject: str
    detail: str
    old: Any = None
    new: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "subject": self.subject,
            "detail": self.detail,
            "old": self.old,
            "new": self.new,
        }


@dataclass(frozen=True)
class ReleaseDiff:
    old: str
    new: str
    changes: tuple[Change, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "old": self.old,
            "new": self.new,
            "same": not self.changes,
            "changes": [c.to_dict() for c in self.changes],
        }


def _pin_files(pin: PinnedRepo) -> dict[str, tuple[int | None, str | None, str | None]]:
    return {f.path: (f.size, f.sha256, f.header_sha256) for f in pin.files}


def _pins(kind: str, old: list[PinnedRepo], new: list[PinnedRepo]) -> list[Change]:
    before, after = {p.repo_id: p for p in old}, {p.repo_id: p for p in new}
    changes = []
    for repo in sorted(before.keys() | after.keys()):
        a, b = before.get(repo), after.get(repo)
        if a is None or b is None:
            changes.append(
                Change(
                    "pin",
                    repo,
                    f"{kind} {'added' if a is None else 'removed'}",
                    a and a.revision,
                    b and b.revision,
                )
            )
            continue
        if a.revision != b.revision:
            changes.append(
                Change("pin", repo, f"{kind} revision {a.revision} -> {b.revision}", a.revision, b.revision)
            )
        for path, was, now in (
            (p, _pin_files(a).get(p), _pin_files(b).get(p))
            for p in sorted(_pin_files(a).keys() | _pin_files(b).keys())
        ):
            if was != now:
                changes.append(
                    Change(
                        "pin", f"{repo}:{path}", f"{kind} file pin changed", list(was or ()), list(now or ())
                    )
                )
    return changes


def _engines(old: Manifest, new: Manifest) -> list[Change]:
    before = {e.name: e.commit for e in old.pins.engines}
    after = {e.name: e.commit for e in new.pins.engines}
    return [
        Change(
            "engine",
            name,
            f"commit {before.get(name)} -> {after.get(name)}",
            before.get(name),
            after.get(name),
        )
        for name in sorted(before.keys() | after.keys())
        if before.get(name) != after.get(name)
    ]


def _architecture(a: Side, b: Side, paths: list[str]) -> list[Change]:
    changes = []
    for path in paths:
        try:
            found = architecture_changes(a.architecture(path), b.architecture(path))
        except HubReleaseError as exc:
            changes.append(Change("architecture", path, f"not readable: {exc}"))
            continue
        changes.extend(
            Change("architecture", path, f"{key} {was} -> {now}", was, now) for key, was, now in found
        )
    return changes


def _evaluation(side: Side, path: str) -> Evaluation:
    try:
        data = json.loads(side.read(path))
    except (ValueError, OSError) as exc:
        raise HubReleaseError(f"{side.label}: {path}: not readable ({exc})") from None
    return validate_model(Evaluation, data, f"{side.label}:{path}")


def _evaluations(a: Side, b: Side, paths: list[str]) -> list[Change]:
    changes = []
    for path in paths:
        old, new = _evaluation(a, path), _evaluation(b, path)
        cells = {(c.configuration, c.concurrency): c for c in old.cells}
        for cell in new.cells:
            was = cells.get((cell.configuration, cell.concurrency))
            subject = f"{path}: {cell.configuration} at concurrency {cell.concurrency}"
            if was is None:
                changes.append(Change("evaluation", subject, "cell added"))
                continue
            for metric in CELL_METRICS:
                before, after = getattr(was, metric), getattr(cell, metric)
                if before != after:
                    delta = f" ({(after - before) / before:+.1%})" if before and after is not None else ""
                    changes.append(
                        Change("evaluation", subject, f"{metric} {before} -> {after}{delta}", before, after)
                    )
        rows = {(c.id, str(r.setting)): r for c in old.comparisons for r in c.rows}
        for comparison in new.comparisons:
            for row in comparison.rows:
                was_row = rows.get((comparison.id, str(row.setting)))
                if was_row is not None and (was_row.relative_change, was_row.ci95) != (
                    row.relative_change,
                    row.ci95,
                ):
                    changes.append(
                        Change(
                            "evaluation",
                            f"{path}: {comparison.id}"
                            + (f" at {row.setting}" if row.setting is not None else ""),
                            f"relative change {was_row.relative_change:+.3f} [{was_row.ci95.low:g}, {was_row.ci95.high:g}]"
                            f" -> {row.relative_change:+.3f} [{row.ci95.low:g}, {row.ci95.high:g}]",
                            was_row.relative_change,
                            row.relative_change,
                        )
                    )
    return changes


def _licence(old: Manifest, new: Manifest) -> list[Change]:
    fields = ("license", "license_name", "license_link")
    before = {f: getattr(old.release, f) for f in fields}
    after = {f: getattr(new.release, f) for f in fields}
    return [
        Change("licence", f, f"{before[f]} -> {after[f]}", before[f], after[f])
        for f in fields
        if before[f] != after[f]
    ]


def _signer(old: Manifest, new: Manifest) -> list[Change]:
    before = old.signing.model_dump(exclude_defaults=True) if old.signing else None
    after = new.signing.model_dump(exclude_defaults=True) if new.signing else None
    return [] if before == after else [Change("signer", "signing", f"{before} -> {after}", before, after)]


def diff_releases(a: Side, b: Side) -> ReleaseDiff:
    """What changed from ``a`` (old) to ``b`` (new)."""
    old, new = a.manifest, b.manifest
    files = file_changes(manifest_files(old), manifest_files(new))
    changed = [c.path for c in files if c.change == "changed"]
    evaluation_paths = set(old.evaluation_paths) & set(new.evaluation_paths)
    changes = [Change("file", c.path, f"{c.change}: {c.detail}") for c in files]
    changes += _architecture(a, b, [p for p in changed if is_model_file(p)])
    changes += _pins("target", old.pins.targets, new.pins.targets)
    changes += _pins("base drafter", old.pins.base_drafters, new.pins.base_drafters)
    changes += _engines(old, new)
    changes += _evaluations(a, b, [p for p in changed if p in evaluation_paths])
    changes += _licence(old, new) + _signer(old, new)
    return ReleaseDiff(a.label, b.label, tuple(changes))


def needs_hub(old: str, new: str | None) -> bool:
    """Whether comparing ``old`` and ``new`` reads the Hub (a ``REPO@REV``, or a local release's published one)."""
    return new is None or not (is_local(old) and is_local(new))


def diff_specs(api: HfApi | None, old: str, new: str | None) -> ReleaseDiff:
    """``diff OLD NEW`` (manifests or ``REPO@REV``); without NEW, the release OLD supersedes (else its
    published one) -> OLD."""
    if new is None:
        if not is_local(old) or api is None:
            raise InputError("with one argument, diff compares a local manifest with its published release")
        local = local_side(old)
        return diff_releases(published_of(api, local), local)
    return diff_releases(side(api, old), side(api, new))


@dataclass(frozen=True)
class RecordedChanges:
    path: Path
    since: str
    count: int
    sha256: str


def record_changes(api: HfApi, manifest_path: str) -> RecordedChanges:
    """Write what changed since the superseded release into ``changes.json`` and pin it as an artifact.

    The card's "Changes since" section renders from that file, so render-card and verify stay offline;
    the file itself is left out of the comparison, so recording again gives the same bytes.
    """
    local = local_side(manifest_path)
    since = local.manifest.release.supersedes
    if since is None:
        raise InputError("release.supersedes is not set: there is no earlier release to record changes since")
    result = diff_releases(hub_side(api, since), local)
    kept = [c.to_dict() for c in result.changes if not (c.section == "file" and c.subject == CHANGES_FILE)]
    data = changes_document(since, kept)
    target = local.root / CHANGES_FILE
    atomic_write_bytes(target, data)
    sha256 = hashlib.sha256(data).hexdigest()
    editor = ManifestEditor.open(manifest_path)
    editor.upsert_artifact(
        {
            "path": CHANGES_FILE,
            "size": len(data),
            "sha256": sha256,
            "role": "doc",
            "description": f"changes since {since} (hubrelease diff --record)",
        }
    )
    editor.save()
    return RecordedChanges(target, since, len(kept), sha256)


def diff_or_record(
    old: str, new: str | None, *, hub: Callable[[], HfApi], record: bool = False
) -> ReleaseDiff | RecordedChanges:
    """``hubrelease diff``: ``diff_specs``, the Hub client made (``hub``) only when a side is on the
    Hub; with ``record``, ``record_changes`` of the one manifest ``old`` instead."""
    if record:
        if new is not None:
            raise InputError("--record takes one manifest: it compares it with release.supersedes")
        return record_changes(hub(), old)
    return diff_specs(hub() if needs_hub(old, new) else None, old, new)
