"""Manifest + evaluation files -> ``CardContext``: every number and claim a card prints, computed.

Templates only format what is here (see ``card.filters``). Anything a manifest refers to that
does not exist (an engine, a configuration, a comparison row) is a ``ManifestError`` naming the
``card.*`` field and its YAML line, raised before any template runs.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

from hubrelease.card.benchmark import Benchmark, benchmark
from hubrelease.card.changes import ChangesSince, changes_since
from hubrelease.card.claims import Claim, compute_claims
from hubrelease.card.filters import bytes_
from hubrelease.card.locator import Locator
from hubrelease.card.rebuilt import Rebuilt, rebuilt
from hubrelease.card.signature import SignatureCheck, signature_check
from hubrelease.card.tables import (
    AbTable,
    BenchmarkTable,
    CategoryTable,
    DraftTokens,
    SweepTable,
    build_category_tables,
    build_tables,
    draft_tokens,
)
from hubrelease.card.training import TrainingFacts, training_facts
from hubrelease.evaluation import Evaluation
from hubrelease.evaluation.provenance import Disagreement, disagreements
from hubrelease.formats.ggml_types import BY_NAME
from hubrelease.hub_licenses import license_label
from hubrelease.manifest.models import (
    Card,
    Engine,
    Manifest,
    Notices,
    PinnedDataset,
    PinnedRepo,
    Release,
    Usage,
)


@dataclass(frozen=True)
class FileRow:
    """One published file, as the files table and checksum block show it."""

    path: str
    size: int | None
    """Exact size in bytes, when pinned."""
    size_text: str | None
    """Size as printed: the exact size in decimal units, else ``reported_size`` verbatim, else None."""
    role: str
    description: str | None
    sha256: str | None
    composition: tuple[tuple[str, int], ...]
    """GGUF tensor types with counts, most frequent first."""
    checked: bool
    """True when ``verify`` lints the file (so the composition is checked against the bytes)."""
    ik_only: tuple[str, ...]
    """Types in ``composition`` that only ik_llama.cpp loads (mainline llama.cpp rejects them)."""


@dataclass(frozen=True)
class Measurement:
    """The engine build the evaluations were measured with, against the pin a usage command names."""

    engine: str
    commit: str | None
    """The evaluations' engine commit (None: they do not record it)."""
    evaluations: tuple[str, ...]
    """Evaluation files measured with this build."""
    pinned: Engine
    note: str | None = None
    """``evaluations[].deviations`` note when the commit differs from the pin by design."""

    @property
    def same_build(self) -> bool:
        """True when the evaluations name the pinned commit (so the pin's patches and binaries apply)."""
        return self.commit == self.pinned.commit


@dataclass(frozen=True)
class UsageCommand:
    """A command line built from a ``card.usage`` entry."""

    engine: Engine
    executable: str
    lines: tuple[str, ...]
    """First the executable, then one line per flag group."""
    measured: tuple[Measurement, ...] = ()
    """What the evaluations were measured with, from the evaluations."""

    @property
    def text(self) -> str:
        """The command with shell line continuations."""
        return " \\\n  ".join(self.lines)


@dataclass(frozen=True)
class DrafterRef:
    """Where a usage command finds the drafter: the card names the repo at its branch; ``pull`` the
    commit it read and, with ``--dir``, the copies it fetched."""

    repo: str
    """The repo id, or the local folder holding the drafter."""
    revision: str
    files: Mapping[str, str] = field(default_factory=dict)
    """Repo path -> the path the command names (absent: the repo path)."""
    target_file: str | None = None
    """The local target GGUF ``pull`` paired with: named instead of the pinned target's first file."""


@dataclass(frozen=True)
class Licensed:
    """A pinned repo with the licence the card cites."""

    repo_id: str
    name: str
    license: str | None
    label: str | None
    """Short licence label (Apache-2.0, MIT, CC-BY-4.0), or None when the pin has no licence."""
    derived_from: tuple[str, ...] = ()
    attribution: str | None = None


@dataclass(frozen=True)
class Licence:
    """The release licence and the credits it owes, from ``release`` and ``pins``."""

    id: str
    label: str
    name: str | None
    link: str | None
    inherited: bool
    """True when every warm-start drafter carries the release's licence (it is inherited)."""
    base_drafters: tuple[Licensed, ...]
    targets: tuple[Licensed, ...]
    datasets: tuple[Licensed, ...]
    """Training datasets (role training or training-source)."""
    attribution: tuple[str, ...]
    """Dataset credit lines, then ``notices.attribution``."""
    not_affiliated_with: tuple[str, ...]


@dataclass(frozen=True)
class Section:
    """A prose section as the template places it: its body read from the manifest or its pinned file."""

    title: str
    body: str
    place: str


def _sections(manifest: Manifest, card: Card, root: Path, where: Locator) -> tuple[Section, ...]:
    found = []
    for index, section in enumerate(card.sections):
        body = section.body
        if section.path is not None:
            artifact = manifest.artifact(section.path)
            if artifact is None or artifact.sha256 is None:
                raise where.error(
                    f"{section.path!r} is not an artifact pinned by sha256: a section's prose is a published, "
                    "pinned file (`hubrelease add`)",
                    ("card", "sections", index, "path"),
                )
            try:
                body = (root / artifact.local_path).read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as exc:
                raise where.error(
                    f"cannot read {section.path!r}: {exc}", ("card", "sections", index, "path")
                ) from None
        assert body is not None
        found.append(Section(section.title, body, section.place))
    return tuple(found)


@dataclass(frozen=True)
class CardContext:
    """Everything a template can use, as top-level variables (the README documents each)."""

    manifest: Manifest
    release: Release
    card: Card
    sections: tuple[Section, ...]
    """``card.sections`` with each body read (from the manifest or its pinned Markdown file)."""
    benchmark: Benchmark | None
    """The Hub benchmark the release's ``eval.yaml`` registers (a dataset release of a prompt set)."""
    title: str
    files: tuple[FileRow, ...]
    recommended: FileRow | None
    checksums: tuple[FileRow, ...]
    """Files with a pinned sha256: artifacts, then evaluation files (role ``evaluation``)."""
    usage: tuple[UsageCommand, ...]
    licence: Licence
    benchmarks: tuple[BenchmarkTable, ...]
    comparisons: tuple[AbTable, ...]
    sweeps: tuple[SweepTable, ...]
    categories: tuple[CategoryTable, ...]
    """Results per prompt category, one table per evaluation file whose runs carry categories."""
    claims: Mapping[str, Claim]
    evaluations: Mapping[str, Evaluation]
    targets: tuple[PinnedRepo, ...]
    base_drafters: tuple[PinnedRepo, ...]
    datasets: tuple[PinnedDataset, ...]
    engines: tuple[Engine, ...]
    notices: Notices
    deviations: tuple[Disagreement, ...]
    """Where an evaluation differs from the pins by design (``evaluations[].deviations``), with the note."""
    draft_tokens: Mapping[str, DraftTokens]
    """Per evaluation path, draft tokens per round as its measurements set them (``run_line``)."""
    deviation_notes: Mapping[str, Mapping[str, str]]
    """The same by evaluation path, then evaluation field (``run.target.revision``): what ``run_line``
    and the tables print beside each value."""
    signature: SignatureCheck | None
    """How to check ``model.sig`` with model-signing (the manifest's ``signing:`` section), else None."""
    training: TrainingFacts | None
    """What the ``training:`` files say (architecture, recipe, steps, data counts, machines)."""
    rebuilt: Rebuilt | None
    """The files (and evaluation figures) ``hubrelease rebuild --check`` re-makes from recipes, else None."""
    changes: ChangesSince | None
    """What changed since the superseded release (``release.supersedes``), from the pinned ``changes.json``."""

    def variables(self) -> dict[str, object]:
        """The context as Jinja variables, one per field."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _file_rows(manifest: Manifest) -> tuple[FileRow, ...]:
    rows = []
    for artifact in manifest.artifacts:
        composition = sorted((artifact.composition or {}).items(), key=lambda kv: (-kv[1], kv[0]))
        known = [BY_NAME.get(name) for name, _ in composition]
        rows.append(
            FileRow(
                path=artifact.path,
                size=artifact.size,
                size_text=bytes_(artifact.size) if artifact.size is not None else artifact.reported_size,
                role=artifact.role,
                description=artifact.description,
                sha256=artifact.sha256,
                composition=tuple(composition),
                checked=artifact.lint,
                ik_only=tuple(t.name for t in known if t is not None and t.origin == "ik"),
            )
        )
    return tuple(rows)


def _evaluation_rows(manifest: Manifest) -> tuple[FileRow, ...]:
    """Pinned evaluation files, for the checksums block: every number in the card comes from them."""
    rows = []
    for e in manifest.evaluation_files:
        if e.sha256 is not None:
            size_text = bytes_(e.size) if e.size is not None else None
            rows.append(FileRow(e.path, e.size, size_text, "evaluation", None, e.sha256, (), False, ()))
    return tuple(rows)


def _flag_value(
    usage: Usage, index: int, flag_index: int, manifest: Manifest, where: Locator, *, drafter: DrafterRef
) -> str:
    flag = usage.flags[flag_index]
    loc = ("card", "usage", index, "flags", flag_index, "value_from")
    if flag.value_from is None:
        return "" if flag.value is None else str(flag.value)
    if flag.value_from == "release.repo_id":
        return drafter.repo
    if flag.value_from == "release.revision":
        return drafter.revision
    if flag.value_from == "recommended.path":
        recommended = next((a for a in manifest.artifacts if a.role == "recommended"), None)
        if recommended is None:
            raise where.error("no artifact has role 'recommended'", loc)
        return drafter.files.get(recommended.path, recommended.path)
    target = _usage_target(usage, index, manifest, where)
    if flag.value_from == "target.repo_id":
        return target.repo_id
    if flag.value_from == "target.revision":
        if target.unpinned or target.revision is None:
            raise where.error(f"target {target.repo_id} has no pinned revision to show", loc)
        return target.revision
    if not target.files:
        raise where.error(f"target {target.repo_id} pins no files", loc)
    return drafter.target_file or target.files[0].path


def _usage_target(usage: Usage, index: int, manifest: Manifest, where: Locator) -> PinnedRepo:
    targets = manifest.pins.targets
    if usage.target is None:
        if not targets:
            raise where.error(
                "the command needs a target but pins.targets is empty", ("card", "usage", index)
            )
        return targets[0]
    found = next((t for t in targets if t.repo_id == usage.target), None)
    if found is None:
        raise where.error(f"{usage.target!r} is not in pins.targets", ("card", "usage", index, "target"))
    return found


def _measurements(
    engine: Engine, evaluations: Mapping[str, Evaluation], deviations: tuple[Disagreement, ...]
) -> tuple[Measurement, ...]:
    """One entry per engine commit the evaluations name for ``engine``, in manifest order."""
    builds: dict[str | None, list[str]] = {}
    for path, evaluation in evaluations.items():
        if evaluation.run.engine.name == engine.name:
            builds.setdefault(evaluation.run.engine.commit, []).append(path)
    notes = {d.evaluation: d.note for d in deviations if d.field == "engine.commit"}
    return tuple(
        Measurement(
            engine.name, commit, tuple(paths), engine, next((notes[p] for p in paths if p in notes), None)
        )
        for commit, paths in builds.items()
    )


def usage_commands(
    manifest: Manifest,
    card: Card,
    where: Locator,
    evaluations: Mapping[str, Evaluation],
    deviations: tuple[Disagreement, ...],
    *,
    drafter: DrafterRef | None = None,
) -> tuple[UsageCommand, ...]:
    """The ``card.usage`` command lines, values from the pins; the card's and ``pull``'s (one code path).

    ``drafter`` says where the commands find the drafter (default: its repo at ``release.revision``).
    """
    drafter = drafter or DrafterRef(manifest.release.repo_id, manifest.release.revision)
    commands = []
    for index, usage in enumerate(card.usage):
        engine = next((e for e in manifest.pins.engines if e.name == usage.engine), None)
        if engine is None:
            known = [e.name for e in manifest.pins.engines]
            raise where.error(
                f"{usage.engine!r} is not in pins.engines {known}", ("card", "usage", index, "engine")
            )
        lines = [usage.executable]
        for flag_index, flag in enumerate(usage.flags):
            value = _flag_value(usage, index, flag_index, manifest, where, drafter=drafter)
            text = (
                f"{flag.flag} {shlex.quote(value)}"
                if flag.value is not None or flag.value_from
                else flag.flag
            )
            if flag.same_line and len(lines) > 1:
                lines[-1] += f" {text}"
            else:
                lines.append(text)
        commands.append(
            UsageCommand(
                engine=engine,
                executable=usage.executable,
                lines=tuple(lines),
                measured=_measurements(engine, evaluations, deviations),
            )
        )
    return tuple(commands)


def _licensed(repo: PinnedRepo | PinnedDataset) -> Licensed:
    derived = tuple(repo.derived_from) if isinstance(repo, PinnedRepo) else ()
    attribution = repo.attribution if isinstance(repo, PinnedDataset) else None
    return Licensed(
        repo_id=repo.repo_id,
        name=repo.name or repo.repo_id,
        license=repo.license,
        label=license_label(repo.license) if repo.license else None,
        derived_from=derived,
        attribution=attribution,
    )


def _licence(manifest: Manifest) -> Licence:
    release, pins = manifest.release, manifest.pins
    drafters = tuple(_licensed(d) for d in pins.base_drafters)
    datasets = tuple(_licensed(d) for d in pins.datasets if d.role in ("training", "training-source"))
    credits = tuple(d.attribution for d in datasets if d.attribution)
    return Licence(
        id=release.license,
        label=license_label(release.license),
        name=release.license_name,
        link=release.license_link,
        inherited=bool(drafters) and all(d.license == release.license for d in drafters),
        base_drafters=drafters,
        targets=tuple(_licensed(t) for t in pins.targets),
        datasets=datasets,
        attribution=credits + tuple(manifest.notices.attribution),
        not_affiliated_with=tuple(manifest.notices.not_affiliated_with),
    )


def deviation_notes(deviations: tuple[Disagreement, ...]) -> dict[str, dict[str, str]]:
    """Declared deviations as evaluation path -> evaluation field -> note."""
    notes: dict[str, dict[str, str]] = {}
    for d in deviations:
        if d.note is not None:
            notes.setdefault(d.evaluation, {})[d.where] = d.note
    return notes


def build_context(
    manifest: Manifest,
    manifest_path: Path,
    evaluations: Mapping[str, Evaluation],
    card: Card,
    root: Path | None = None,
) -> CardContext:
    """Compute the card context; ``evaluations`` maps each ``manifest.evaluations`` path to its file and
    ``root`` is the release folder the ``training:`` files are read from (default: the manifest's)."""
    where = Locator(manifest_path)
    files = _file_rows(manifest)
    deviations = tuple(
        d for path, ev in evaluations.items() for d in disagreements(path, ev, manifest) if d.note is not None
    )
    notes = deviation_notes(deviations)
    benchmarks, comparisons, sweeps = build_tables(evaluations, card.charts, card.digits, notes)
    return CardContext(
        manifest=manifest,
        release=manifest.release,
        card=card,
        sections=_sections(manifest, card, root or manifest_path.parent, where),
        benchmark=benchmark(manifest, root or manifest_path.parent, where),
        title=manifest.release.title or manifest.release.repo_id.split("/")[-1],
        files=files,
        recommended=next((f for f in files if f.role == "recommended"), None),
        checksums=tuple(f for f in files if f.sha256) + _evaluation_rows(manifest),
        usage=usage_commands(manifest, card, where, evaluations, deviations),
        licence=_licence(manifest),
        benchmarks=benchmarks,
        comparisons=comparisons,
        sweeps=sweeps,
        categories=build_category_tables(evaluations, card.charts, card.digits),
        claims=compute_claims(card, evaluations, where),
        evaluations=evaluations,
        targets=tuple(manifest.pins.targets),
        base_drafters=tuple(manifest.pins.base_drafters),
        datasets=tuple(manifest.pins.datasets),
        engines=tuple(manifest.pins.engines),
        notices=manifest.notices,
        deviations=deviations,
        draft_tokens={path: draft_tokens(ev) for path, ev in evaluations.items()},
        deviation_notes=notes,
        signature=signature_check(manifest, manifest_path.name),
        training=training_facts(manifest, root or manifest_path.parent, where),
        rebuilt=rebuilt(manifest, evaluations),
        changes=changes_since(manifest, root or manifest_path.parent),
    )
