"""Derived claims ("44.0% above target-only serving") computed from an evaluation, never typed into a card."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from hubrelease.errors import InputError
from hubrelease.evaluation.models import Evaluation, Setting

CellMetric = Literal["overall_tok_s", "per_user_tok_s"]


@dataclass(frozen=True)
class RelativeGain:
    """Treatment against baseline: both values and (treatment - baseline) / baseline."""

    treatment: float
    baseline: float
    relative_change: float


def cell_gain(
    evaluation: Evaluation,
    configuration: str,
    baseline: str,
    concurrency: int,
    metric: CellMetric = "overall_tok_s",
) -> RelativeGain:
    """Gain of one configuration over another at one concurrency, from the serving matrix."""
    cells = []
    for name in (configuration, baseline):
        cell = evaluation.cell(name, concurrency)
        if cell is None:
            raise InputError(
                f"no cell for configuration {name!r} at concurrency {concurrency}", field="cells"
            )
        cells.append(getattr(cell, metric))
    treatment_value, baseline_value = cells
    if baseline_value <= 0:
        raise InputError(
            f"configuration {baseline!r} has {metric} {baseline_value:g} at concurrency {concurrency}: "
            "no relative gain over it",
            field="cells",
        )
    return RelativeGain(treatment_value, baseline_value, (treatment_value - baseline_value) / baseline_value)


def comparison_gain(
    evaluation: Evaluation, comparison_id: str, setting: Setting | None = None
) -> RelativeGain:
    """Paired gain of a comparison row: mean difference over the baseline mean.

    With a ``setting`` the row at that setting; without, the primary row, else the only row.
    The paired mean difference is used rather than the ratio of the two rounded means, so a
    claim matches the interval printed beside it.
    """
    comparison = evaluation.comparison(comparison_id)
    if comparison is None:
        raise InputError(f"no comparison {comparison_id!r}", field="comparisons")
    if setting is not None:
        row = next((r for r in comparison.rows if r.setting == setting), None)
    else:
        row = comparison.primary or (comparison.rows[0] if len(comparison.rows) == 1 else None)
    if row is None:
        wanted = f"setting {setting!r}" if setting is not None else "a primary row"
        raise InputError(f"comparison {comparison_id!r} has no row for {wanted}", field="comparisons")
    return RelativeGain(row.treatment_mean, row.baseline_mean, row.relative_change)
