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


@dataclass(frozen=True)
class SweepTable:
    """A parameter sweep of one drafter."""

    path: str
    sweep: Sweep


def _benchmark(path: str, evaluation: Evaluation) -> BenchmarkTable:
    labels = {c.id: c.label for c in evaluation.configurations}
    rows = tuple(BenchmarkRow(label=labels[cell.configuration], cell=cell) for cell in evaluation.cells)
    return BenchmarkTable(
        path=path, title=evaluation.title, hardware=evaluation.run.hardware, evaluation=evaluation, rows=rows
    )


def _ab(path: str, comparison: Comparison) -> AbTable:
    arms = {arm.id: arm for arm in comparison.arms}
    return AbTable(
        path=path,
        comparison=comparison,
        baseline=arms[comparison.baseline],
        treatment=arms[comparison.treatment],
        rows=tuple(comparison.rows),
        primary=comparison.primary,
        spreads=tuple(Spread(arm=arms[s.arm], spread=s) for s in comparison.between_boot_spread),
    )


def build_tables(
    evaluations: Mapping[str, Evaluation],
) -> tuple[tuple[BenchmarkTable, ...], tuple[AbTable, ...], tuple[SweepTable, ...]]:
    """Benchmark, A/B and sweep tables of every evaluation file, in manifest order."""
    benchmarks = tuple(_benchmark(path, ev) for path, ev in evaluations.items() if ev.cells)
    comparisons = tuple(_ab(path, c) for path, ev in evaluations.items() for c in ev.comparisons)
    sweeps = tuple(SweepTable(path=path, sweep=s) for path, ev in evaluations.items() for s in ev.sweeps)
    return benchmarks, comparisons, sweeps
