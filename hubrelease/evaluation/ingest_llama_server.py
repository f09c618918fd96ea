"""llama-server per-request rows -> paired A/B comparisons, between-boot spread and n_max sweeps.

A row is one request: prompt_id, arm, boot, repetition, n_max, and the server's ``timings``
(predicted_n, predicted_ms, draft_n, draft_n_accepted). llama-server omits the draft fields when
nothing was drafted, so they default to 0. Decode tok/s is 1000 * predicted_n / predicted_ms; a verify
round produces predicted_n - draft_n_accepted rounds' worth of target tokens, so tokens per round is
predicted_n / (predicted_n - accepted), pooled over runs as the ratio of sums.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import math
import re
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from hubrelease.errors import BuildError, FormatError, InputError
from hubrelease.evaluation.models import (
    Arm,
    BootSpread,
    Comparison,
    ComparisonRow,
    FitResidual,
    Interval,
    Range,
    Setting,
    StepTimeFit,
    Sweep,
    SweepRow,
)
from hubrelease.evaluation.records import Record
from hubrelease.evaluation.spec import ComparisonSpec, SweepSpec
from hubrelease.evaluation.stats import least_squares, log_ratio_interval, paired_t_interval

# Canonical field -> the names published layouts use for it (seed 001's bench.py writes boot_index,
# drafter, drafter_sha16, server_sha16). The first one present in a row is read.
ALIASES: dict[str, tuple[str, ...]] = {
    "prompt_id": ("prompt_id", "prompt_index", "prompt_idx", "prompt_name"),
    "arm": ("arm", "arm_id", "config"),
    "boot": ("boot", "boot_index", "boot_idx", "boot_id"),
    "repetition": ("repetition", "rep", "repeat", "rep_index"),
    "n_max": ("n_max", "speculative.n_max", "nmax", "k"),
    "predicted_n": ("predicted_n",),
    "predicted_ms": ("predicted_ms",),
    "draft_n": ("draft_n",),
    "draft_n_accepted": ("draft_n_accepted",),
    "drafter": ("drafter", "drafter_file", "drafter_filename", "model_draft"),
    "drafter_sha": ("drafter_sha256", "drafter_sha16", "drafter_sha"),
    "server_sha": ("server_sha256", "server_sha16", "server_sha", "binary_sha16", "binary_sha256"),
}
_DIGEST = re.compile(r"^[0-9a-f]{8,64}$")


@dataclass(frozen=True)
class Columns:
    """Which column of a row holds each canonical field: the aliases, overridden by ``--columns``."""

    mapping: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str | None) -> Columns:
        """``FIELD=COLUMN,FIELD=COLUMN`` (e.g. ``prompt_id=task,boot=server_boot``)."""
        mapping: dict[str, str] = {}
        for part in filter(None, (text or "").split(",")):
            name, sep, column = part.partition("=")
            name, column = name.strip(), column.strip()
            if not sep or not column or name not in ALIASES:
                raise InputError(
                    f"--columns: expected FIELD=COLUMN with FIELD one of {', '.join(ALIASES)}, got {part!r}"
                )
            mapping[name] = column
        return cls(mapping)

    def key(self, record: Record, name: str) -> str:
        """The column holding ``name`` in ``record`` (the canonical name when none is present)."""
        if name in self.mapping:
            return self.mapping[name]
        return next((alias for alias in ALIASES[name] if _present(record.data.get(alias))), name)


def _present(value: Any) -> bool:
    return value is not None and value != ""


def flatten(record: Record) -> Record:
    """A raw llama-server ``/completion`` response (``timings`` nested, n_max under generation_settings)
    as a flat row; flat rows pass unchanged."""
    timings = record.data.get("timings")
    if not isinstance(timings, dict):
        return record
    data: dict[str, Any] = {key: value for key, value in record.data.items() if key != "timings"}
    for key, value in timings.items():
        data.setdefault(key, value)
    settings = record.data.get("generation_settings")
    if isinstance(settings, dict) and "speculative.n_max" in settings:
        data.setdefault("n_max", settings["speculative.n_max"])
    return Record(record.path, record.line, data)


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
    drafter: str | None = None
    drafter_sha: str | None = None
    server_sha: str | None = None
    sha_columns: tuple[str, str] = ("drafter_sha", "server_sha")
    """The row's own names of the drafter and server digest columns, for errors."""
    numbered: bool = False
    """The row has no repetition column: :func:`number_repetitions` gives it one."""

    @property
    def tok_s(self) -> float:
        return 1000.0 * self.predicted_n / self.predicted_ms


@dataclass(frozen=True)
class RowDefaults:
    """What a file of raw responses leaves out: its arm (CONFIG=PATH or file stem) and boot (its order)."""

    arm: str | None = None
    boot: int | None = None


def _digest(record: Record, key: str) -> str | None:
    value = record.data.get(key)
    if not _present(value):
        return None
    text = str(value).strip().lower()
    if not _DIGEST.match(text):
        raise record.error(
            f"expected a hex sha256 or a prefix of one (8 to 64 characters), got {value!r}", key
        )
    return text


def parse_run(record: Record, columns: Columns = Columns(), defaults: RowDefaults = RowDefaults()) -> Request:
    """Validate one row (a flat row or a raw ``/completion`` response)."""
    record = flatten(record)
    key = functools.partial(columns.key, record)

    def fallback(name: str, value: str | int | None) -> str | int | None:
        return value if value is not None and not _present(record.data.get(key(name))) else None

    # A raw response has the prompt text, not an id: pair by its digest.
    prompt_text = record.data.get("prompt")
    prompt_default = None
    if isinstance(prompt_text, str) and not _present(record.data.get(key("prompt_id"))):
        prompt_default = "sha256:" + hashlib.sha256(prompt_text.encode()).hexdigest()[:12]
    arm_default = fallback("arm", defaults.arm)
    boot_default = fallback("boot", defaults.boot)
    drafter = record.data.get(key("drafter"))
    run = Request(
        record=record,
        prompt=prompt_default or record.text(key("prompt_id")),
        arm=str(arm_default) if arm_default is not None else record.text(key("arm")),
        boot=int(boot_default) if boot_default is not None else record.integer(key("boot")),
        repetition=record.integer(key("repetition")) if _present(record.data.get(key("repetition"))) else 0,
        n_max=record.integer(key("n_max")),
        predicted_n=record.integer(key("predicted_n")),
        predicted_ms=record.number(key("predicted_ms")),
        draft_n=record.integer(key("draft_n"), default=0),
        accepted=record.integer(key("draft_n_accepted"), default=0),
        drafter=str(drafter) if _present(drafter) else None,
        drafter_sha=_digest(record, key("drafter_sha")),
        server_sha=_digest(record, key("server_sha")),
        sha_columns=(key("drafter_sha"), key("server_sha")),
        numbered=not _present(record.data.get(key("repetition"))),
    )
    if run.predicted_ms <= 0:
        raise record.error(f"zero-duration run ({run.predicted_ms:g} ms)", key("predicted_ms"))
    if run.predicted_n < 1:
        raise record.error("no tokens predicted", key("predicted_n"))
    if not math.isfinite(run.tok_s):
        raise record.error(
            f"{run.predicted_n} tokens in {run.predicted_ms:g} ms is not a finite speed", key("predicted_ms")
        )
    reported = record.data.get("predicted_per_second")
    # llama-server's own figure, 1e3 / t_token_generation * n_decoded (tools/server/server-task.cpp,
    # result_timings): ours must be the same number, up to the rounding of a CSV cell.
    if _present(reported) and not math.isclose(
        record.number("predicted_per_second"), run.tok_s, rel_tol=1e-3
    ):
        raise record.error(
            f"{reported} tok/s disagrees with predicted_n / predicted_ms = {run.tok_s:.6g} tok/s",
            "predicted_per_second",
        )
    if not 0 <= run.accepted <= min(run.draft_n, run.predicted_n - 1):
        raise record.error(
            f"draft_n_accepted {run.accepted} is outside 0..min(draft_n, predicted_n - 1)",
            key("draft_n_accepted"),
        )
    return run


def number_repetitions(runs: Sequence[Request]) -> list[Request]:
    """Rows without a repetition column are numbered 1, 2, ... per prompt, arm, boot and n_max, in file order."""
    counts: dict[tuple[str, str, int, int], int] = defaultdict(int)
    numbered = []
    for run in runs:
        if run.numbered:
            group = (run.prompt, run.arm, run.boot, run.n_max)
            counts[group] += 1
            run = dataclasses.replace(run, repetition=counts[group])
        numbered.append(run)
    return numbered


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


def missing_cells(runs: Sequence[Request]) -> list[str]:
    """Per arm, the runs of the full grid boots x n_max x prompts x repetitions that are absent."""
    missing: list[str] = []
    for arm in dict.fromkeys(run.arm for run in runs):
        mine = [run for run in runs if run.arm == arm]
        have = {(run.boot, run.n_max, run.prompt, run.repetition) for run in mine}
        axes = [
            sorted({getattr(run, name) for run in mine}) for name in ("boot", "n_max", "prompt", "repetition")
        ]
        missing.extend(
            f"arm {arm} boot {boot} n_max {n_max} prompt {prompt} repetition {repetition}"
            for boot, n_max, prompt, repetition in itertools.product(*axes)
            if (boot, n_max, prompt, repetition) not in have
        )
    return missing


def check_grid(runs: Sequence[Request], allow_incomplete: bool) -> list[str]:
    """Refuse a grid with missing runs (a missing cell moves a mean silently) unless allowed; then warn."""
    missing = missing_cells(runs)
    if not missing:
        return []
    shown = "; ".join(missing[:5]) + ("; ..." if len(missing) > 5 else "")
    message = f"incomplete grid: {len(missing)} run{'s' if len(missing) > 1 else ''} missing ({shown})"
    if not allow_incomplete:
        raise FormatError(f"{message}; pass --allow-incomplete to build from what is there")
    return [message]


def check_digests(
    runs: Sequence[Request], artifacts: Mapping[str, str | None], binaries: Sequence[str]
) -> None:
    """Every row's drafter and server digests (or 16-character prefixes) must be the release's.

    Within an arm all rows must name one drafter digest (a boot with the wrong drafter is refused even
    without a manifest); with one, the digest must be an artifact's (the one named by the ``drafter``
    column when it names an artifact) and the server digest one of the engine binaries'.
    """
    first: dict[str, Request] = {}
    for run in runs:
        if run.drafter_sha is None:
            continue
        earlier = first.setdefault(run.arm, run)
        assert earlier.drafter_sha is not None
        if not (
            earlier.drafter_sha.startswith(run.drafter_sha) or run.drafter_sha.startswith(earlier.drafter_sha)
        ):
            raise run.record.error(
                f"arm {run.arm!r} ran drafter {run.drafter_sha}, but {earlier.drafter_sha} at "
                f"{earlier.record.path}:{earlier.record.line}",
                run.sha_columns[0],
            )
    if not artifacts and not binaries:
        return
    for run in runs:
        if run.drafter_sha is not None:
            named = _artifact_digest(artifacts, run.drafter)
            candidates = [named] if named else [d for d in artifacts.values() if d]
            if not any(d.startswith(run.drafter_sha) for d in candidates):
                what = (
                    f"the manifest's digest of {run.drafter}"
                    if named
                    else "any artifact digest in the manifest"
                )
                raise run.record.error(f"drafter digest {run.drafter_sha} is not {what}", run.sha_columns[0])
        if run.server_sha is not None and not any(d.startswith(run.server_sha) for d in binaries):
            raise run.record.error(
                f"server digest {run.server_sha} is not one of the manifest's engine binaries",
                run.sha_columns[1],
            )


@dataclass(frozen=True)
class LlamaOptions:
    """How to read llama-server rows: column names, completeness, and the release digests to check against."""

    columns: Columns = Columns()
    allow_incomplete: bool = False
    artifacts: Mapping[str, str | None] = field(default_factory=dict)
    """Artifact path -> sha256, from ``--manifest``."""
    binaries: Sequence[str] = ()
    """Engine binary sha256s, from ``--manifest``."""


def _artifact_digest(artifacts: Mapping[str, str | None], drafter: str | None) -> str | None:
    if drafter is None:
        return None
    for path, digest in artifacts.items():
        if path == drafter or PurePosixPath(path).name == PurePosixPath(drafter).name:
            return digest
    return None


def is_llama_record(record: Record) -> bool:
    """True for a llama-server row or raw response (it has ``predicted_n``, flat or under ``timings``)."""
    timings = record.data.get("timings")
    return "predicted_n" in record.data or (isinstance(timings, dict) and "predicted_n" in timings)


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
