"""llama-server per-request rows -> paired A/B comparisons, between-boot spread and n_max sweeps.

A row is one request: prompt_id, arm, boot, repetition, n_max, and the server's ``timings``
(predicted_n, predicted_ms, draft_n, draft_n_accepted). llama-server omits the draft fields when
nothing was drafted, so they default to 0. Decode tok/s is 1000 * predicted_n / predicted_ms; a verify
round produces predicted_n - draft_n_accepted rounds' worth of target tokens, so tokens per round is
predicted_n / (predicted_n - accepted), pooled over runs as the ratio of sums.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hubrelease.errors import BuildError, FormatError
from hubrelease.evaluation.models import (
    Arm,
    BootSpread,
    Comparison,
    ComparisonRow,
    Interval,
    Range,
    Setting,
    Sweep,
    SweepRow,
)
from hubrelease.evaluation.records import Record
from hubrelease.evaluation.spec import ComparisonSpec, SweepSpec
from hubrelease.evaluation.stats import log_ratio_interval, paired_t_interval


@dataclass(frozen=True)
class Request:
    """One llama-server request (one row)."""

    record: Record
    prompt: str
    arm: str
    boot: int
    repetition: int
    n_max: int
    predicted_n: int
    predicted_ms: float
    draft_n: int
    accepted: int

    @property
    def tok_s(self) -> float:
        return 1000.0 * self.predicted_n / self.predicted_ms


def parse_run(record: Record) -> Request:
    """Validate one row."""
    run = Request(
        record=record,
        prompt=record.text("prompt_id"),
        arm=record.text("arm"),
        boot=record.integer("boot"),
        repetition=record.integer("repetition"),
        n_max=record.integer("n_max"),
        predicted_n=record.integer("predicted_n"),
        predicted_ms=record.number("predicted_ms"),
        draft_n=record.integer("draft_n", default=0),
        accepted=record.integer("draft_n_accepted", default=0),
    )
    if run.predicted_ms <= 0:
        raise record.error(f"zero-duration run ({run.predicted_ms:g} ms)", "predicted_ms")
    if run.predicted_n < 1:
        raise record.error("no tokens predicted", "predicted_n")
    if not math.isfinite(run.tok_s):
        raise record.error(
            f"{run.predicted_n} tokens in {run.predicted_ms:g} ms is not a finite speed", "predicted_ms"
        )
    if not 0 <= run.accepted <= min(run.draft_n, run.predicted_n - 1):
        raise record.error(
            f"draft_n_accepted {run.accepted} is outside 0..min(draft_n, predicted_n - 1)", "draft_n_accepted"
        )
    return run


def check_unique(runs: Sequence[Request]) -> None:
    """Refuse a request measured twice (same prompt, arm, boot, repetition, n_max), e.g. a file given twice."""
    first: dict[tuple[str, str, int, int, int], Request] = {}
    for run in runs:
        key = (run.prompt, run.arm, run.boot, run.repetition, run.n_max)
        earlier = first.setdefault(key, run)
        if earlier is not run:
            raise run.record.error(
                f"repeats prompt {run.prompt!r}, arm {run.arm!r}, boot {run.boot}, repetition {run.repetition},"
                f" n_max {run.n_max} (first at {earlier.record.path}:{earlier.record.line})",
                "repetition",
            )


def is_llama_record(record: Record) -> bool:
    """True for a llama-server row (it has ``predicted_n``)."""
    return "predicted_n" in record.data


def _prompt_means(runs: Iterable[Request]) -> dict[str, float]:
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
    )


def _check_pairing(groups: dict[str, list[Request]], labels: dict[str, str], where: str) -> None:
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


def compare_arms(runs: Sequence[Request], spec: ComparisonSpec) -> Comparison:
    """Paired-by-prompt A/B per setting, plus each arm's between-boot spread."""
    rows: list[ComparisonRow] = []
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
    return Comparison(
        id=spec.id,
        title=spec.title,
        setting_name=spec.setting_name,
        baseline=spec.baseline,
        treatment=spec.treatment,
        arms=spec.arms,
        design=spec.design,
        rows=rows,
        between_boot_spread=spreads,
        notes=spec.notes,
    )


def _boot_spread(arm: str, setting: int, runs: Sequence[Request]) -> BootSpread:
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


def sweep(runs: Sequence[Request], spec: SweepSpec) -> tuple[Sweep, list[Comparison]]:
    """Per-setting throughput of one arm, and the paired setting-vs-setting comparisons the spec asks for."""
    mine = [run for run in runs if run.arm == spec.arm]
    if not mine:
        raise FormatError(f"sweep {spec.id!r}: no rows for arm {spec.arm!r}")
    by_setting: dict[int, list[Request]] = defaultdict(list)
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
            )
        )
    sweep_model = Sweep(
        id=spec.id,
        title=spec.title,
        setting_name=spec.setting_name,
        drafter=spec.drafter,
        boots=len({run.boot for run in mine}),
        rows=rows,
        notes=spec.notes,
    )
    return sweep_model, comparisons


def _setting_arm(arm_id: str, spec: SweepSpec, setting: Setting) -> Arm:
    return Arm(id=arm_id, label=f"{spec.setting_name}={setting}", drafter=spec.drafter, setting=setting)
