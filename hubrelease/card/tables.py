"""Evaluation files -> the rows of the card's tables, in the order the files list them.

Kept apart from ``context`` because tables only regroup measured values (no manifest lookups):
one benchmark table per evaluation matrix (configuration x concurrency rows), one A/B table per
paired comparison, one sweep table per parameter sweep.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hubrelease.evaluation import Evaluation
from hubrelease.evaluation.models import Arm, BootSpread, Cell, Comparison, ComparisonRow, Hardware, Sweep


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
class BenchmarkTable:
    """One hardware matrix."""

    path: str
    """Evaluation file, relative to the release folder."""
    title: str
    hardware: Hardware
    evaluation: Evaluation
    rows: tuple[BenchmarkRow, ...]
    chart: ChartLink | None = None


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


@dataclass(frozen=True)
class SweepTable:
    """A parameter sweep of one drafter."""

    path: str
    sweep: Sweep
    chart: ChartLink | None = None


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
    evaluations: Mapping[str, Evaluation], charts: bool = False, digits: Mapping[str, int] | None = None
) -> tuple[tuple[BenchmarkTable, ...], tuple[AbTable, ...], tuple[SweepTable, ...]]:
    """Benchmark, A/B and sweep tables of every evaluation file, in manifest order, each with its chart
    when ``charts`` (``card.charts``) and its comparison's decimals (``card.digits``, default 3)."""
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
    return benchmarks, comparisons, sweeps
