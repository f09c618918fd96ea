"""MeasuredRequest rows -> paired A/B comparisons, between-boot spread, n_max sweeps and their step-time fit.

Kept apart from the readers (``hubrelease.evaluation.ingest``): they turn each tool's output into
``MeasuredRequest`` rows; this module only analyses rows. Per prompt, each arm's repetitions are averaged per
boot, then the boots (boots weigh equally); pairs are by prompt, and again within each prompt
category when the rows carry one. Tokens per round pools as the ratio
of sums, predicted_n / (predicted_n - accepted); step time as predicted_ms / (predicted_n - accepted).
The design (prompts, repetitions, predicted tokens, boot order) is counted from the rows, whether
the repetitions are numbered from 0 or from 1, and a spec that states other counts is refused.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence

from hubrelease.errors import BuildError, FormatError
from hubrelease.evaluation.ingest.llama_server import MeasuredRequest
from hubrelease.evaluation.models import (
    Arm,
    BootSpread,
    Comparison,
    ComparisonRow,
    Design,
    FitResidual,
    Interval,
    Range,
    Setting,
    StepTimeFit,
    Sweep,
    SweepRow,
)
from hubrelease.evaluation.spec import ComparisonSpec, SweepSpec
from hubrelease.evaluation.stats import least_squares, log_ratio_interval, paired_t_interval


def derive_design(runs: Sequence[MeasuredRequest], stated: Design | None, where: str) -> Design:
    """The design the rows hold: distinct prompts, repetitions per cell (0- or 1-based alike), the
    common predicted_n, each boot's arm in boot order; ``stated`` counts must be the same."""
    per_cell: dict[tuple[str, str, int, int], set[int]] = defaultdict(set)
    for run in runs:
        per_cell[(run.prompt, run.arm, run.boot, run.n_max)].add(run.repetition)
    arms_of_boot: dict[int, set[str]] = defaultdict(set)
    for run in runs:
        arms_of_boot[run.boot].add(run.arm)
    predicted = {run.predicted_n for run in runs}
    derived = {
        "prompts": len({run.prompt for run in runs}),
        "repetitions": max(len(r) for r in per_cell.values()),
        "predicted_tokens": predicted.pop() if len(predicted) == 1 else None,
        "boot_order": (
            [next(iter(arms_of_boot[boot])) for boot in sorted(arms_of_boot)]
            if all(len(arms) == 1 for arms in arms_of_boot.values())
            else []
        ),
    }
    given = stated or Design()
    for name, value in derived.items():
        mine = getattr(given, name)
        if mine not in (None, []) and value not in (None, []) and mine != value:
            raise BuildError(f"{where}: design.{name} is {mine} in the spec, but the rows hold {value}")
    return given.model_copy(update={k: v for k, v in derived.items() if getattr(given, k) in (None, [])})


def _prompt_means(runs: Iterable[MeasuredRequest]) -> dict[str, float]:
    """Per prompt: mean over repetitions within each boot, then mean over boots (boots weigh equally)."""
    by_boot: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        by_boot[run.prompt][run.boot].append(run.tok_s)
    return {
        prompt: statistics.fmean(statistics.fmean(values) for values in boots.values())
        for prompt, boots in by_boot.items()
    }


def _paired_row(
    baseline: dict[str, float],
    treatment: dict[str, float],
    setting: Setting | None,
    primary: bool,
    where: str,
    *,
    category: str | None = None,
) -> ComparisonRow:
    """``where`` names the comparison (and setting) for the error when there are too few prompts."""
    prompts = sorted(baseline)
    if len(prompts) < 2:
        raise BuildError(f"{where}: a paired interval needs at least 2 prompts, got {len(prompts)}")
    a = [baseline[p] for p in prompts]
    b = [treatment[p] for p in prompts]
    t = paired_t_interval(a, b)
    ratio = log_ratio_interval(a, b)
    baseline_mean = statistics.fmean(a)
    relative = [y / x - 1.0 for x, y in zip(a, b, strict=True)]
    return ComparisonRow(
        setting=setting,
        baseline_mean=baseline_mean,
        treatment_mean=statistics.fmean(b),
        mean_difference=t.mean,
        sd_difference=t.sd,
        n=t.n,
        ci95=Interval(low=t.low, high=t.high),
        relative_change=t.mean / baseline_mean,
        relative_ci95=Interval(low=t.low / baseline_mean, high=t.high / baseline_mean),
        ratio=ratio.ratio,
        ratio_ci95=Interval(low=ratio.low, high=ratio.high),
        p_value=t.p_value,
        per_pair_relative_range=Range(low=min(relative), high=max(relative)),
        positive_pairs=sum(d > 0 for d in relative),
        role="primary" if primary else "secondary",
        category=category,
    )


def _check_pairing(groups: dict[str, list[MeasuredRequest]], labels: dict[str, str], where: str) -> None:
    """Every prompt must appear on both sides; name the first row of a prompt found on one side only."""
    first, second = groups
    prompts = {side: {run.prompt for run in groups[side]} for side in (first, second)}
    for side, other in ((first, second), (second, first)):
        for run in groups[side]:
            if run.prompt not in prompts[other]:
                raise run.record.error(
                    f"prompt {run.prompt!r} {where} has rows in {labels[side]} only, none in {labels[other]}",
                    "prompt_id",
                )


def _category_rows(
    groups: Iterable[Sequence[MeasuredRequest]],
    baseline: dict[str, float],
    treatment: dict[str, float],
    setting: Setting | None,
    where: str,
) -> list[ComparisonRow]:
    """The paired analysis again within each prompt category the rows carry (none: no rows)."""
    category_of = {run.prompt: run.category for group in groups for run in group}
    rows = []
    for category in sorted({c for c in category_of.values() if c is not None}):
        mine = {p for p, c in category_of.items() if c == category}
        rows.append(
            _paired_row(
                {p: m for p, m in baseline.items() if p in mine},
                {p: m for p, m in treatment.items() if p in mine},
                setting,
                False,
                f"{where}, category {category!r}",
                category=category,
            )
        )
    return rows


def compare_arms(runs: Sequence[MeasuredRequest], spec: ComparisonSpec) -> Comparison:
    """Paired-by-prompt A/B per setting, plus each arm's between-boot spread."""
    rows: list[ComparisonRow] = []
    by_category: list[ComparisonRow] = []
    spreads: list[BootSpread] = []
    settings = sorted({run.n_max for run in runs if run.arm in (spec.baseline, spec.treatment)})
    if not settings:
        raise FormatError(
            f"comparison {spec.id!r}: no rows for arms {spec.baseline!r} and {spec.treatment!r}"
        )
    if spec.primary_setting is not None and spec.primary_setting not in settings:
        raise FormatError(
            f"comparison {spec.id!r}: no rows at the primary {spec.setting_name} {spec.primary_setting!r} "
            f"(measured: {', '.join(map(str, settings))})"
        )
    for setting in settings:
        groups = {
            arm: [run for run in runs if run.arm == arm and run.n_max == setting]
            for arm in (spec.baseline, spec.treatment)
        }
        _check_pairing(groups, {arm: f"arm {arm}" for arm in groups}, f"at n_max {setting}")
        means = {arm: _prompt_means(group) for arm, group in groups.items()}
        rows.append(
            _paired_row(
                means[spec.baseline],
                means[spec.treatment],
                setting,
                setting == spec.primary_setting,
                f"comparison {spec.id!r} at {spec.setting_name} {setting}",
            )
        )
        spreads.extend(_boot_spread(arm, setting, group) for arm, group in groups.items())
        by_category += _category_rows(
            groups.values(),
            means[spec.baseline],
            means[spec.treatment],
            setting,
            f"comparison {spec.id!r} at {spec.setting_name} {setting}",
        )
    return Comparison(
        id=spec.id,
        title=spec.title,
        setting_name=spec.setting_name,
        baseline=spec.baseline,
        treatment=spec.treatment,
        arms=spec.arms,
        design=derive_design(
            [run for run in runs if run.arm in (spec.baseline, spec.treatment)],
            spec.design,
            f"comparison {spec.id!r}",
        ),
        rows=rows,
        between_boot_spread=spreads,
        notes=spec.notes,
        by_category=by_category,
    )


def _boot_spread(arm: str, setting: int, runs: Sequence[MeasuredRequest]) -> BootSpread:
    by_boot: dict[int, list[float]] = defaultdict(list)
    for run in runs:
        by_boot[run.boot].append(run.tok_s)
    boots = sorted(by_boot)
    means = {boot: statistics.fmean(by_boot[boot]) for boot in boots}
    return BootSpread(
        arm=arm,
        setting=setting,
        boot_means={str(boot): mean for boot, mean in means.items()},
        last_minus_first=means[boots[-1]] - means[boots[0]],
    )


def sweep(runs: Sequence[MeasuredRequest], spec: SweepSpec) -> tuple[Sweep, list[Comparison]]:
    """Per-setting throughput of one arm, and the paired setting-vs-setting comparisons the spec asks for."""
    mine = [run for run in runs if run.arm == spec.arm]
    if not mine:
        raise FormatError(f"sweep {spec.id!r}: no rows for arm {spec.arm!r}")
    by_setting: dict[int, list[MeasuredRequest]] = defaultdict(list)
    for run in mine:
        by_setting[run.n_max].append(run)
    rows = []
    for setting in sorted(by_setting):
        group = by_setting[setting]
        rounds = sum(run.predicted_n - run.accepted for run in group)
        speeds = [run.tok_s for run in group]
        rows.append(
            SweepRow(
                setting=setting,
                mean_tok_s=statistics.fmean(speeds),
                sd_tok_s=statistics.stdev(speeds) if len(speeds) > 1 else 0.0,
                runs=len(group),
                tokens_per_round=(
                    sum(run.predicted_n for run in group) / rounds
                    if any(run.draft_n for run in group)
                    else None
                ),
                step_time_ms=sum(run.predicted_ms for run in group) / rounds,
            )
        )
    comparisons = []
    for pair in spec.pairs:
        groups = {}
        for side in (pair.baseline, pair.treatment):
            if side not in by_setting:
                raise FormatError(f"sweep {spec.id!r}: no rows at {spec.setting_name} {side}")
            groups[str(side)] = by_setting[int(side)]
        labels = {key: f"{spec.setting_name} {key}" for key in groups}
        _check_pairing(groups, labels, f"in arm {spec.arm}")
        baseline, treatment = (_prompt_means(groups[str(side)]) for side in (pair.baseline, pair.treatment))
        comparisons.append(
            Comparison(
                id=pair.id,
                title=pair.title,
                setting_name=spec.setting_name,
                baseline="baseline",
                treatment="treatment",
                arms=[
                    _setting_arm("baseline", spec, pair.baseline),
                    _setting_arm("treatment", spec, pair.treatment),
                ],
                rows=[_paired_row(baseline, treatment, None, False, f"comparison {pair.id!r}")],
                notes=pair.notes,
                by_category=_category_rows(
                    groups.values(), baseline, treatment, None, f"comparison {pair.id!r}"
                ),
            )
        )
    sweep_model = Sweep(
        id=spec.id,
        title=spec.title,
        setting_name=spec.setting_name,
        drafter=spec.drafter,
        boots=len({run.boot for run in mine}),
        rows=rows,
        step_time_fit=step_time_fit(rows, spec.fit_range),
        notes=spec.notes,
    )
    return sweep_model, comparisons


def step_time_fit(rows: Sequence[SweepRow], fit_range: tuple[float, float] | None) -> StepTimeFit | None:
    """Least squares of step time on (setting - 1) over the speculating rows in ``fit_range``.

    Seed 001 states "about 90.9 + 14.7 x (n_max - 1) ms over K = 1 to 12" with per-K residuals;
    this computes that line and the residual of every speculating row, inside the range or not.
    """
    measured = [
        (float(row.setting), row.step_time_ms)
        for row in rows
        if row.tokens_per_round is not None
        and row.step_time_ms is not None
        and isinstance(row.setting, int | float)
    ]
    low, high = (
        fit_range
        if fit_range is not None
        else (min((k for k, _ in measured), default=0.0), max((k for k, _ in measured), default=0.0))
    )
    points = [(k, ms) for k, ms in measured if low <= k <= high]
    if len({k for k, _ in points}) < 2:
        return None
    line = least_squares([k - 1 for k, _ in points], [ms for _, ms in points])
    residuals = []
    for k, ms in measured:
        fitted = line.intercept + line.slope * (k - 1)
        residuals.append(
            FitResidual(
                setting=_plain(k),
                step_time_ms=ms,
                fitted_ms=max(fitted, 0.0),
                residual_ms=ms - fitted,
                in_range=low <= k <= high,
            )
        )
    return StepTimeFit(
        setting_min=_plain(min(k for k, _ in points)),
        setting_max=_plain(max(k for k, _ in points)),
        points=len(points),
        intercept_ms=line.intercept,
        slope_ms=line.slope,
        residuals=residuals,
    )


def _plain(value: float) -> int | float:
    """3.0 -> 3, so settings read as the rows give them."""
    return int(value) if value == int(value) else value


def _setting_arm(arm_id: str, spec: SweepSpec, setting: Setting) -> Arm:
    return Arm(id=arm_id, label=f"{spec.setting_name}={setting}", drafter=spec.drafter, setting=setting)
