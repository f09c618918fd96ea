"""Provenance binding: an evaluation's run metadata must be the release's pins and artifacts.

An evaluation names the target (repo, commit) it was measured against, the engine (name, commit,
server binary digests), the drafters (files, digests) and the machine. A card built from it states
those numbers next to the manifest's pins, so the two must agree: a run against another target
commit or with another drafter file is a disagreement that ``render-card``, ``verify`` and ``push``
refuse, naming both values. A difference made on purpose is stated in the manifest
(``evaluations[].deviations``: field + ``note``) and printed on the card instead.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from hubrelease.errors import CheckFailed, HubReleaseError
from hubrelease.evaluation.models import Drafter, Evaluation, SourceDocument
from hubrelease.manifest.models import Engine, Manifest, PinnedRepo, ProvenanceField

if TYPE_CHECKING:
    from hubrelease.findings import Finding


@dataclass(frozen=True)
class Disagreement:
    """One fact of an evaluation's run that the manifest pins differently."""

    evaluation: str
    """Evaluation file (its manifest path)."""
    field: ProvenanceField
    where: str
    """The evaluation field that holds the value (e.g. run.engine.commit)."""
    evaluated: str
    """What the evaluation says."""
    pinned: str
    """What the manifest pins."""
    note: str | None = None
    """The manifest's ``deviations[].note`` when the difference is by design."""

    @property
    def message(self) -> str:
        return f"{self.where} is {self.evaluated}, but the manifest pins {self.pinned}"


def _revision(pin: PinnedRepo) -> str:
    return (
        f"{pin.repo_id} unpinned (branch {pin.revision or 'main'})"
        if pin.unpinned
        else f"{pin.repo_id}@{pin.revision}"
    )


def _drafters(evaluation: Evaluation) -> Iterator[tuple[str, Drafter]]:
    if evaluation.run.drafter is not None:
        yield "run.drafter", evaluation.run.drafter
    for c in evaluation.configurations:
        if c.drafter is not None:
            yield f"configurations[{c.id}].drafter", c.drafter
    for comparison in evaluation.comparisons:
        for arm in comparison.arms:
            if arm.drafter is not None:
                yield f"comparisons[{comparison.id}].arms[{arm.id}].drafter", arm.drafter
    for sweep in evaluation.sweeps:
        if sweep.drafter is not None:
            yield f"sweeps[{sweep.id}].drafter", sweep.drafter


def _digests_of(manifest: Manifest) -> dict[str, str]:
    """Published and pinned file name -> sha256: artifacts, files of pinned repos, external files."""
    digests = {a.path: a.sha256 for a in manifest.artifacts if a.sha256}
    for pin in (*manifest.pins.targets, *manifest.pins.base_drafters):
        digests.update({f"{pin.repo_id}/{f.path}": f.sha256 for f in pin.files if f.sha256})
    digests.update({f.name: f.sha256 for f in manifest.pins.external_files})
    return digests


def foreign_name(drafter: Drafter, names: Collection[str], artifacts: Collection[str]) -> str | None:
    """What a drafter named by a name alone should name instead, when the release publishes drafter files.

    With no repo, file or digest, a name that is neither the release's (repo id, title) nor one of its
    files identifies nothing: the card would state another model's figures as this release's.
    """
    if not artifacts or drafter.repo_id or drafter.file or drafter.sha256 or drafter.sha256_prefix:
        return None
    if drafter.name in names or drafter.name in artifacts:
        return None
    shown = ", ".join(sorted(artifacts)[:3]) + (", ..." if len(artifacts) > 3 else "")
    return f"a file of the release ({shown}) by file and sha256, or a pinned repo by repo_id"


def unidentified_drafters(
    evaluation: Evaluation, names: Collection[str], artifacts: Collection[str]
) -> list[str]:
    """One line per drafter of ``evaluation`` named only by a foreign name (see :func:`foreign_name`)."""
    return [
        f"{where} is named only {drafter.name!r}: name {instead}"
        for where, drafter in _drafters(evaluation)
        if (instead := foreign_name(drafter, names, artifacts)) is not None
    ]


def _release_names(manifest: Manifest) -> set[str]:
    return {name for name in (manifest.release.repo_id, manifest.release.title) if name}


def _drafter_findings(manifest: Manifest, where: str, drafter: Drafter) -> Iterator[tuple[str, str, str]]:
    """(where, evaluated, pinned) for each way ``drafter`` is not the release's or a pinned one."""
    release = manifest.release.repo_id
    instead = foreign_name(drafter, _release_names(manifest), [a.path for a in manifest.artifacts])
    if instead is not None:
        yield f"{where}.name", repr(drafter.name), f"no name of the release; name {instead}"
        return
    repos = {p.repo_id: p for p in (*manifest.pins.base_drafters, *manifest.pins.targets)}
    foreign = drafter.repo_id is not None and drafter.repo_id != release
    if foreign:
        pin = repos.get(drafter.repo_id or "")
        if pin is None:
            known = ", ".join([release, *repos]) or "none"
            yield f"{where}.repo_id", repr(drafter.repo_id), f"the release or a pinned repo ({known})"
            return
        if drafter.revision is not None and drafter.revision != pin.revision:
            yield f"{where}.revision", drafter.revision, _revision(pin)
    digests = _digests_of(manifest)
    digest = drafter.sha256 or drafter.sha256_prefix
    if drafter.file is not None:
        key = f"{drafter.repo_id}/{drafter.file}" if foreign else drafter.file
        if key not in digests and manifest.artifact(drafter.file) is None:
            yield (
                f"{where}.file",
                repr(drafter.file),
                "no artifact, pinned file or external file of that name",
            )
            return
        pinned = digests.get(key)
        if digest is not None and pinned is None:
            yield f"{where}.sha256", digest, f"{drafter.file} without a sha256 (`hubrelease add` pins it)"
        elif digest is not None and pinned is not None and not pinned.startswith(digest):
            yield f"{where}.sha256", digest, f"{drafter.file} at {pinned}"
    elif digest is not None and not any(d.startswith(digest) for d in digests.values()):
        yield f"{where}.sha256", digest, "no artifact, pinned file or external file with that digest"


def _engine_findings(
    engine: Engine, evaluation: Evaluation
) -> Iterator[tuple[ProvenanceField, str, str, str]]:
    measured = evaluation.run.engine
    if measured.commit is not None and measured.commit != engine.commit:
        yield "engine.commit", "run.engine.commit", measured.commit, f"{engine.name} at {engine.commit}"
    pinned = [b.sha256 for b in engine.binaries]
    for digest in measured.binaries:
        if not any(p.startswith(digest) for p in pinned):
            shown = ", ".join(f"{b.name} {b.sha256[:16]}" for b in engine.binaries) or "no binaries"
            yield "engine.binaries", "run.engine.binaries", digest, f"{engine.name} with {shown}"


def disagreements(path: str, evaluation: Evaluation, manifest: Manifest) -> list[Disagreement]:
    """Every fact of ``evaluation``'s run that ``manifest`` pins differently (declared deviations included)."""
    found: list[tuple[ProvenanceField, str, str, str]] = []
    run, pins = evaluation.run, manifest.pins
    # A kind the manifest pins nothing of (no targets, engines or machines yet: `init` writes none)
    # has nothing to contradict; once one is pinned, the evaluation must name it.
    target = next((t for t in pins.targets if t.repo_id == run.target.repo_id), None)
    if target is None and pins.targets:
        known = ", ".join(t.repo_id for t in pins.targets)
        found.append(("target", "run.target.repo_id", run.target.repo_id, known))
    elif (
        target is not None
        and run.target.revision is not None
        and (target.unpinned or run.target.revision != target.revision)
    ):
        found.append(("target.revision", "run.target.revision", run.target.revision, _revision(target)))
    engine = next((e for e in pins.engines if e.name == run.engine.name), None)
    if engine is None and pins.engines:
        known = ", ".join(e.name for e in pins.engines)
        found.append(("engine", "run.engine.name", run.engine.name, known))
    elif engine is not None:
        found.extend(_engine_findings(engine, evaluation))
    found.extend(
        ("drafter", *finding)
        for where, d in _drafters(evaluation)
        for finding in _drafter_findings(manifest, where, d)
    )
    hardware = next((h for h in pins.hardware if h.id == run.hardware.id), None)
    if hardware is None and pins.hardware:
        known = ", ".join(h.id for h in pins.hardware)
        found.append(("hardware", "run.hardware.id", run.hardware.id, known))
    elif hardware is not None:
        for name in ("name", "accelerator", "count", "memory"):
            mine, theirs = getattr(run.hardware, name), getattr(hardware, name)
            if mine is not None and theirs is not None and mine != theirs:
                found.append(
                    ("hardware", f"run.hardware.{name}", repr(mine), f"{hardware.id} with {name} {theirs!r}")
                )
    notes = {d.field: d.note for e in manifest.evaluation_files if e.path == path for d in e.deviations}
    return [
        Disagreement(path, field, where, evaluated, pinned, notes.get(field))
        for field, where, evaluated, pinned in found
    ]


_HUB_FILE = re.compile(
    r"^https?://(?:huggingface\.co|hf\.co)/(?:datasets/)?([^/]+/[^/]+)/(?:blob|resolve)/[^/]+/(.+)$"
)


def _document_keys(document: SourceDocument) -> list[str]:
    """The names the release could pin the document under: its path (an artifact or an external file's
    name) and, for a Hub URL, its repo/path (a file of a pinned repo)."""
    keys = []
    if document.path is not None:
        keys.append(posixpath.normpath(document.path))
    match = _HUB_FILE.match(document.url or "")
    if match:
        keys.append(f"{match.group(1)}/{match.group(2)}")
    return keys


def document_problems(manifest: Manifest, evaluation: Evaluation) -> list[str]:
    """A source document whose sha256 is not the digest the release pins for the same file."""
    digests = _digests_of(manifest)
    problems = []
    for index, document in enumerate(evaluation.provenance.documents):
        for key in _document_keys(document):
            pinned = digests.get(key)
            if pinned is not None and pinned != document.sha256:
                problems.append(
                    f"provenance.documents[{index}] ({document.name}) has sha256 {document.sha256}, but the "
                    f"release pins {key} as {pinned}: the numbers were transcribed from other bytes"
                )
                break
    return problems


def _table_problems(evaluation: Evaluation, pinned: Mapping[str, Path]) -> list[str]:
    """A table's line range past the end of its document, for documents whose bytes verified."""
    problems = []
    for index, document in enumerate(evaluation.provenance.documents):
        local = pinned.get(posixpath.normpath(document.path)) if document.path else None
        if local is None or not document.tables:
            continue
        count = len(local.read_bytes().splitlines())
        problems += [
            f"provenance.documents[{index}].tables[{table.title!r}] ends at line {table.lines[1]}, but "
            f"{document.path} has {count} lines"
            for table in document.tables
            if table.lines[1] > count
        ]
    return problems


def refusals(manifest: Manifest, evaluations: Mapping[str, Evaluation]) -> list[str]:
    """One line per undeclared disagreement and per declared deviation that nothing differs in."""
    lines = []
    for path, evaluation in evaluations.items():
        found = disagreements(path, evaluation, manifest)
        lines += [f"{path}: {d.message}" for d in found if d.note is None]
        lines += [f"{path}: {line}" for line in document_problems(manifest, evaluation)]
        differing = {d.field for d in found}
        entry = next((e for e in manifest.evaluation_files if e.path == path), None)
        for deviation in entry.deviations if entry is not None else ():
            if deviation.field not in differing:
                lines.append(
                    f"{path}: deviations names {deviation.field}, but the evaluation agrees with the pins there"
                )
    return lines


def check_provenance(
    manifest: Manifest, evaluations: Mapping[str, Evaluation], manifest_path: object
) -> None:
    """Raise ``CheckFailed`` (exit 1) naming every disagreement between the evaluations and the pins."""
    lines = refusals(manifest, evaluations)
    if lines:
        more = f" (and {len(lines) - 1} more: {'; '.join(lines[1:])})" if len(lines) > 1 else ""
        raise CheckFailed(
            f"evaluation disagrees with the pins: {lines[0]}{more}; fix the evaluation or the pin, or state "
            "a deliberate difference in evaluations[].deviations",
            path=str(manifest_path),
        )


def provenance_findings(manifest: Manifest, folder: Path, verified: Collection[str]) -> list[Finding]:
    """``verify``'s findings (kind ``provenance``) for the evaluation files whose bytes verified."""
    from hubrelease.evaluation.load import load_evaluation
    from hubrelease.findings import Finding

    findings = []
    for path in manifest.evaluation_paths:
        if path not in verified:
            continue
        try:
            evaluation = load_evaluation(folder / path)
        except HubReleaseError as exc:
            findings.append(Finding.make("provenance", path, f"cannot read the evaluation: {exc.message}"))
            continue
        entry = {path: evaluation}
        for line in refusals(manifest, entry):
            findings.append(Finding.make("provenance", path, line.removeprefix(f"{path}: ")))
        documents = {a.path: folder / a.local_path for a in manifest.artifacts if a.local_path in verified}
        for line in _table_problems(evaluation, documents):
            findings.append(Finding.make("provenance", path, line))
    return findings
