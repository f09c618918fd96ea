"""Evaluation files -> the rows of the card's tables, in the order the files list them.

Kept apart from ``context`` because tables only regroup measured values (no manifest lookups):
one benchmark table per evaluation matrix (configuration x concurrency rows), one A/B table per
paired comparison, one sweep table per parameter sweep.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from hubrelease.evaluation import Evaluation
from hubrelease.evaluation.ingest.serving import missing_cells
from hubrelease.evaluation.models import (
    Arm,
    BootSpread,
    CategoryResult,
    Cell,
    Comparison,
    ComparisonRow,
    Hardware,
    Setting,
    Sweep,
)


@dataclass(frozen=True)
class ChartLink:
    """A chart of the card (``card.charts``), relative to the card's folder."""

    path: str
    title: str


@dataclass(frozen=True)
class BenchmarkRow:
    """One configuration at one concurrency."""

    label: str
    cell: Cell


@dataclass(frozen=True)
class DraftTokens:
    """Draft tokens per round as the measurements set them, so the card never states one count for all.

    A run-level ``serving.draft_tokens`` holds for the serving matrix's speculative configurations
    that state none, not for rows that set n_max per request (comparisons and sweeps over n_max).
    """

    per_request: tuple[Setting, ...] = ()
    """n_max values that comparisons and sweeps set per request, ascending."""
    by_configuration: tuple[tuple[int | None, tuple[str, ...]], ...] = ()
    """Speculative configurations with cells, grouped by their draft tokens (None: not stated)."""


def draft_tokens(evaluation: Evaluation) -> DraftTokens:
    """What ``evaluation`` says about draft tokens per round, per measurement."""
    settings: set[int | float] = set()
    for comparison in evaluation.comparisons:
        if comparison.setting_name == "n_max":
            settings.update(r.setting for r in comparison.rows if isinstance(r.setting, int | float))
        settings.update(a.setting for a in comparison.arms if isinstance(a.setting, int | float))
    for sweep in evaluation.sweeps:
        if sweep.setting_name == "n_max":
            settings.update(r.setting for r in sweep.rows if isinstance(r.setting, int | float))
    measured = {cell.configuration for cell in evaluation.cells}
    groups: dict[int | None, list[str]] = {}
    for c in evaluation.configurations:
        if c.id in measured and c.method != "autoregressive":
            groups.setdefault(evaluation.draft_tokens(c), []).append(c.label)
    ordered = sorted(groups.items(), key=lambda kv: (kv[0] is None, -(kv[0] or 0)))
    return DraftTokens(tuple(sorted(settings)), tuple((k, tuple(v)) for k, v in ordered))


@dataclass(frozen=True)
class BenchmarkTable:
    """One hardware matrix."""

    path: str
    """Evaluation file, relative to the release folder."""
    title: str
    hardware: Hardware
    evaluation: Evaluation
    rows: tuple[BenchmarkRow, ...]
    chart: ChartLink | None = None
    caveats: tuple[str, ...] = ()
    """What the evaluation records about these cells' figures: failures, accept-length scope, unknown
    methods, unmeasured cells (``cell_caveats``), then the file's build warnings."""
    deviations: Mapping[str, str] = field(default_factory=dict)
    """Evaluation field (e.g. run.target.revision) -> the manifest's note where it differs from the pins
    by design (``evaluations[].deviations``), printed beside that value."""
    draft: DraftTokens = DraftTokens()
    """Draft tokens per round of the file's measurements."""


@dataclass(frozen=True)
class Spread:
    """Between-boot movement of one arm, with the arm's label."""

    arm: Arm
    spread: BootSpread


@dataclass(frozen=True)
class AbTable:
    """A paired comparison, primary endpoint marked by ``row.role``."""

    path: str
    comparison: Comparison
    baseline: Arm
    treatment: Arm
    rows: tuple[ComparisonRow, ...]
    primary: ComparisonRow | None
    spreads: tuple[Spread, ...]
    chart: ChartLink | None = None
    digits: int = 3
    """Decimals of the paired differences and intervals (``card.digits``)."""
    caveats: tuple[str, ...] = ()
    """The file's build warnings (incomplete grids allowed, ...), on its first table."""
    deviations: Mapping[str, str] = field(default_factory=dict)
    """Evaluation field (e.g. run.target.revision) -> the manifest's note where it differs from the pins
    by design (``evaluations[].deviations``), printed beside that value."""

    @property
    def ranked(self) -> bool:
        """True when the rows carry preregistration roles: a primary row, or a role stated besides the
        default. A comparison without a primary has no secondary endpoints, so its rows print none."""
        return self.primary is not None or any(row.role != "secondary" for row in self.rows)


@dataclass(frozen=True)
class SweepTable:
    """A parameter sweep of one drafter."""

    path: str
    sweep: Sweep
    chart: ChartLink | None = None
    caveats: tuple[str, ...] = ()
    """The file's build warnings, on its first table."""
    deviations: Mapping[str, str] = field(default_factory=dict)
    """Evaluation field (e.g. run.target.revision) -> the manifest's note where it differs from the pins
    by design (``evaluations[].deviations``), printed beside that value."""


def _cells(which: list[tuple[str, Cell]], total: int, whole: str) -> str:
    if len(which) == total:
        return whole
    return ", ".join(f"{label} at concurrency {cell.concurrency}" for label, cell in which)


def cell_caveats(evaluation: Evaluation, cells: list[tuple[str, Cell]] | None = None) -> tuple[str, ...]:
    """One sentence per caveat the evaluation records about ``cells`` (default: all of them)."""
    labels = {c.id: c.label for c in evaluation.configurations}
    rows = cells if cells is not None else [(labels[c.configuration], c) for c in evaluation.cells]
    lines = []
    for label, cell in rows:
        if cell.failed_requests:
            sent = cell.failed_requests + (cell.request_count or 0)
            lines.append(
                f"{label} at concurrency {cell.concurrency}: {cell.failed_requests} of {sent} requests failed "
                "and are left out of every figure."
            )
    speculating = [(label, c) for label, c in rows if c.accepted_length is not None]
    groups: list[tuple[list[tuple[str, Cell]], int, str, str]] = [
        (
            [(label, c) for label, c in rows if c.failed_requests is None],
            len(rows),
            "Failed requests were not counted for {} (unknown, not zero).",
            "any run",
        ),
        (
            [(label, c) for label, c in speculating if c.accepted_length_per_run is False],
            len(speculating),
            "Accepted length of {} is the server's lifetime average (warmup and earlier runs included), "
            "not the run's own.",
            "every run",
        ),
        (
            [(label, c) for label, c in speculating if c.accepted_length_per_run is None],
            len(speculating),
            "Whether the accepted length of {} covers only that run is not recorded.",
            "any run",
        ),
    ]
    lines += [
        sentence.format(_cells(which, total, whole)) for which, total, sentence, whole in groups if which
    ]
    shown = {cell.configuration for _, cell in rows}
    unchecked = {cell.configuration for _, cell in rows if cell.server_info is False}
    for configuration in evaluation.configurations:
        if configuration.id in shown and configuration.method in ("unknown", "speculative"):
            what = (
                "unknown" if configuration.method == "unknown" else "speculative, which method not recorded"
            )
            lines.append(
                f"{configuration.label}: the server did not report what it ran; decoding method {what}."
            )
        elif configuration.id in unchecked:
            lines.append(
                f"{configuration.label}: the server did not report what it ran, so the method "
                f"({configuration.method}) is as stated, not checked against the server."
            )
    if cells is None:
        holes = missing_cells(evaluation.cells, evaluation.configurations) if evaluation.cells else []
        if holes:
            lines.append(f"Not measured: {'; '.join(holes)}.")
    return tuple(lines)


def _benchmark(path: str, evaluation: Evaluation, chart: ChartLink | None) -> BenchmarkTable:
    labels = {c.id: c.label for c in evaluation.configurations}
    rows = tuple(BenchmarkRow(label=labels[cell.configuration], cell=cell) for cell in evaluation.cells)
    return BenchmarkTable(
        path=path,
        title=evaluation.title,
        hardware=evaluation.run.hardware,
        evaluation=evaluation,
        rows=rows,
        chart=chart,
        caveats=cell_caveats(evaluation),
        draft=draft_tokens(evaluation),
    )


def _ab(path: str, comparison: Comparison, chart: ChartLink | None, digits: int) -> AbTable:
    arms = {arm.id: arm for arm in comparison.arms}
    return AbTable(
        path=path,
        comparison=comparison,
        baseline=arms[comparison.baseline],
        treatment=arms[comparison.treatment],
        rows=tuple(comparison.rows),
        primary=comparison.primary,
        spreads=tuple(Spread(arm=arms[s.arm], spread=s) for s in comparison.between_boot_spread),
        chart=chart,
        digits=digits,
    )


def build_tables(
    evaluations: Mapping[str, Evaluation],
    charts: bool = False,
    digits: Mapping[str, int] | None = None,
    deviations: Mapping[str, Mapping[str, str]] | None = None,
) -> tuple[tuple[BenchmarkTable, ...], tuple[AbTable, ...], tuple[SweepTable, ...]]:
    """Benchmark, A/B and sweep tables of every evaluation file, in manifest order, each with its chart
    when ``charts`` (``card.charts``), its comparison's decimals (``card.digits``, default 3) and its
    file's declared deviations (path -> evaluation field -> note)."""
    from hubrelease.card import charts as drawn

    titles = drawn.chart_titles(evaluations) if charts else {}

    def link(path: str) -> ChartLink | None:
        return ChartLink(path, titles[path]) if path in titles else None

    places = digits or {}
    benchmarks = tuple(
        _benchmark(path, ev, link(drawn.serving_chart_path(path)))
        for path, ev in evaluations.items()
        if ev.cells
    )
    comparisons = tuple(
        _ab(path, c, link(drawn.comparison_chart_path(path, c)), places.get(c.id, 3))
        for path, ev in evaluations.items()
        for c in ev.comparisons
    )
    sweeps = tuple(
        SweepTable(path=path, sweep=s, chart=link(drawn.sweep_chart_path(path, s)))
        for path, ev in evaluations.items()
        for s in ev.sweeps
    )
    notes = deviations or {}
    return _with_warnings(
        tuple(replace(t, deviations=notes.get(t.path, {})) for t in benchmarks),
        tuple(replace(t, deviations=notes.get(t.path, {})) for t in comparisons),
        tuple(replace(t, deviations=notes.get(t.path, {})) for t in sweeps),
        evaluations,
    )


def _with_warnings(
    benchmarks: tuple[BenchmarkTable, ...],
    comparisons: tuple[AbTable, ...],
    sweeps: tuple[SweepTable, ...],
    evaluations: Mapping[str, Evaluation],
) -> tuple[tuple[BenchmarkTable, ...], tuple[AbTable, ...], tuple[SweepTable, ...]]:
    """Each file's build warnings (``provenance.warnings``) on the first table the card shows of it."""
    seen: set[str] = set()

    def first(path: str) -> tuple[str, ...]:
        if path in seen:
            return ()
        seen.add(path)
        return tuple(f"Recorded by the build: {w}" for w in evaluations[path].provenance.warnings)

    return (
        tuple(replace(t, caveats=t.caveats + first(t.path)) for t in benchmarks),
        tuple(replace(t, caveats=first(t.path)) for t in comparisons),
        tuple(replace(t, caveats=first(t.path)) for t in sweeps),
    )


@dataclass(frozen=True)
class CategoryRow:
    """One configuration's result over one prompt category, with its display label."""

    label: str
    result: CategoryResult

    @property
    def positions(self) -> str:
        """Acceptance per draft position, ``1: 81.0% (405/500), 2: ...`` (empty when not measured)."""
        return ", ".join(
            f"{p.position}: {'n/a' if p.rate is None else format(p.rate, '.1%')} ({p.accepted}/{p.drafted})"
            for p in self.result.acceptance_by_position
        )


@dataclass(frozen=True)
class CategoryComparison:
    """A paired comparison's rows per prompt category."""

    comparison: Comparison
    baseline: Arm
    treatment: Arm
    rows: tuple[ComparisonRow, ...]
    digits: int = 3
    """Decimals of the paired differences (``card.digits``)."""


@dataclass(frozen=True)
class CategoryTable:
    """Results per prompt category of one evaluation file: its split cells and bench runs, then its
    comparisons per category. Only files whose runs carry categories (or llama-spec-bench runs) get one."""

    path: str
    title: str
    rows: tuple[CategoryRow, ...]
    comparisons: tuple[CategoryComparison, ...]
    chart: ChartLink | None = None


def build_category_tables(
    evaluations: Mapping[str, Evaluation], charts: bool = False, digits: Mapping[str, int] | None = None
) -> tuple[CategoryTable, ...]:
    """One table per evaluation file with results per category, in manifest order; none without."""
    from hubrelease.card import charts as drawn

    titles = drawn.chart_titles(evaluations) if charts else {}
    places = digits or {}
    tables = []
    for path, ev in evaluations.items():
        compared = [c for c in ev.comparisons if c.by_category]
        if not (ev.by_category or compared):
            continue
        labels = {c.id: c.label for c in ev.configurations}
        chart = drawn.category_chart_path(path)
        tables.append(
            CategoryTable(
                path=path,
                title=ev.title,
                rows=tuple(
                    CategoryRow(labels.get(r.configuration, r.configuration), r) for r in ev.by_category
                ),
                comparisons=tuple(
                    CategoryComparison(
                        comparison=c,
                        baseline=next(a for a in c.arms if a.id == c.baseline),
                        treatment=next(a for a in c.arms if a.id == c.treatment),
                        rows=tuple(c.by_category),
                        digits=places.get(c.id, 3),
                    )
                    for c in compared
                ),
                chart=ChartLink(chart, titles[chart]) if chart in titles else None,
            )
        )
    return tuple(tables)
