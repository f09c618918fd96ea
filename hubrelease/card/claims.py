"""Claims computed from evaluation files: "+44.0% over Autoregressive at concurrency 1", "37.0% increase".

A claim names its source (file, configuration or comparison row) in the manifest; the number is
read or derived here, so a card can never state a ratio its data does not support.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hubrelease.card.filters import pct
from hubrelease.card.locator import Locator
from hubrelease.card.tables import cell_caveats
from hubrelease.evaluation import Evaluation
from hubrelease.evaluation.claims import cell_gain
from hubrelease.evaluation.models import ComparisonRow, Interval
from hubrelease.manifest.models import Card, ComparisonClaim, SpeedupClaim


@dataclass(frozen=True)
class Claim:
    """A relative claim with the numbers behind it."""

    id: str
    kind: str
    value: float
    """Treatment value (tok/s)."""
    baseline_value: float
    relative: float
    """Fractional change (0.44 = +44.0%)."""
    text: str
    """Default wording, e.g. '+44.0% over Autoregressive at concurrency 1' or '37.0% increase'."""
    label: str
    baseline_label: str
    hardware: str
    concurrency: int | None = None
    accepted_length: float | None = None
    row: ComparisonRow | None = None
    """The comparison row (comparison claims): mean_difference, ci95, n, p_value..."""
    relative_ci95: Interval | None = None
    digits: int = 3
    """Decimals for the paired difference and its interval (``card.claims[].digits``)."""
    caveats: tuple[str, ...] = ()
    """What the evaluation records about the claim's two cells (failures, accept-length scope...)."""
    setting: str | None = None
    """The condition the compared row was measured at (e.g. ``n_max=3``), when the comparison varies one."""
    unit: str = "tok/s"
    """Unit of ``value`` and ``baseline_value``: the comparison's metric (e.g. output tok/s), else tok/s."""
    boots: int | None = None
    """Server boots the comparison spans (its design's boot order), so the sentence says what its interval is
    conditional on; None when the design records none."""
    preregistered: bool = False
    """True only when the design names a preregistration: a primary row alone does not make it preregistered."""
    drafter_file: str | None = None
    """The one drafter file every arm ran (a comparison of settings, not of drafters), so the sentence names it."""


def _speedup(claim: SpeedupClaim, index: int, evaluation: Evaluation, where: Locator) -> Claim:
    labels = {c.id: c.label for c in evaluation.configurations}
    cells = []
    for key in ("configuration", "baseline"):
        config_id = getattr(claim, key)
        cell = evaluation.cell(config_id, claim.concurrency)
        if cell is None:
            raise where.error(
                f"{claim.evaluation} has no cell for configuration {config_id!r} at concurrency "
                f"{claim.concurrency} (configurations: {sorted(labels)})",
                ("card", "claims", index, key),
            )
        cells.append(cell)
    if getattr(cells[1], claim.metric) <= 0:
        raise where.error(
            "baseline throughput is zero; no relative claim", ("card", "claims", index, "baseline")
        )
    gain = cell_gain(evaluation, claim.configuration, claim.baseline, claim.concurrency, claim.metric)
    baseline_label = labels[claim.baseline]
    return Claim(
        id=claim.id,
        kind="speedup",
        value=gain.treatment,
        baseline_value=gain.baseline,
        relative=gain.relative_change,
        text=f"{pct(gain.relative_change, signed=True)} over {baseline_label} at concurrency {claim.concurrency}",
        label=labels[claim.configuration],
        baseline_label=baseline_label,
        hardware=evaluation.run.hardware.name,
        concurrency=claim.concurrency,
        accepted_length=cells[0].accepted_length,
        caveats=cell_caveats(
            evaluation, [(labels[claim.configuration], cells[0]), (baseline_label, cells[1])]
        ),
    )


def _comparison(claim: ComparisonClaim, index: int, evaluation: Evaluation, where: Locator) -> Claim:
    comparison = evaluation.comparison(claim.comparison)
    if comparison is None:
        known = [c.id for c in evaluation.comparisons]
        raise where.error(
            f"{claim.evaluation} has no comparison {claim.comparison!r} (comparisons: {known})",
            ("card", "claims", index, "comparison"),
        )
    if claim.setting is not None:
        row = next((r for r in comparison.rows if r.setting == claim.setting), None)
    else:
        row = comparison.primary or (comparison.rows[0] if len(comparison.rows) == 1 else None)
    if row is None:
        settings = [r.setting for r in comparison.rows]
        raise where.error(
            f"name a row of {claim.comparison!r} by setting (one of {settings})",
            ("card", "claims", index, "setting"),
        )
    arms = {arm.id: arm.label for arm in comparison.arms}
    design = comparison.design
    files = {arm.drafter.file if arm.drafter else None for arm in comparison.arms}
    direction = "increase" if row.relative_change >= 0 else "decrease"
    return Claim(
        id=claim.id,
        kind="comparison",
        value=row.treatment_mean,
        baseline_value=row.baseline_mean,
        relative=row.relative_change,
        text=f"{pct(abs(row.relative_change))} {direction}",
        label=arms[comparison.treatment],
        baseline_label=arms[comparison.baseline],
        hardware=evaluation.run.hardware.name,
        row=row,
        relative_ci95=row.relative_ci95,
        digits=claim.digits,
        unit=comparison.metric,
        setting=f"{comparison.setting_name}={row.setting}" if row.setting is not None else None,
        boots=len(design.boot_order) if design and design.boot_order else None,
        preregistered=bool(design and design.preregistration),
        drafter_file=next(iter(files)) if len(files) == 1 else None,
    )


def compute_claims(card: Card, evaluations: Mapping[str, Evaluation], where: Locator) -> dict[str, Claim]:
    """Every ``card.claims`` entry computed from its evaluation file, by id."""
    claims: dict[str, Claim] = {}
    for index, claim in enumerate(card.claims):
        if claim.id in claims:
            raise where.error(f"claim id {claim.id!r} is used twice", ("card", "claims", index, "id"))
        evaluation = evaluations.get(claim.evaluation)
        if evaluation is None:
            raise where.error(
                f"{claim.evaluation!r} is not listed in evaluations", ("card", "claims", index, "evaluation")
            )
        if isinstance(claim, SpeedupClaim):
            claims[claim.id] = _speedup(claim, index, evaluation, where)
        else:
            claims[claim.id] = _comparison(claim, index, evaluation, where)
    return claims
