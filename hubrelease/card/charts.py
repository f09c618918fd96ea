"""SVG charts of the evaluations, byte-identical across runs and machines, written next to the card.

One chart per figure a reader would otherwise compare by eye: throughput and median TPOT against
concurrency (one line per configuration, one chart per hardware matrix), each paired comparison's
mean difference with its 95% interval per setting, each sweep's step times with their
least-squares fit and residuals, and the results per prompt category with their intervals.
matplotlib draws them (its SVG backend, no pyplot state) under matplotlib's own defaults, so a
user's matplotlibrc changes nothing, with the reproducibility knobs fixed: ``svg.hashsalt`` (element
ids), ``svg.fonttype: none`` (text stays text: no glyph outlines from whatever fonts a machine has),
no ``Date`` and a fixed ``Creator`` in the metadata.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from hubrelease.evaluation import Evaluation
from hubrelease.evaluation.models import Comparison, Configuration, Interval, StepTimeFit, Sweep

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

CHARTS_DIR = "charts"
"""Folder of the charts, beside the card."""
RC: dict[str, Any] = {
    "svg.hashsalt": "hubrelease",
    "svg.fonttype": "none",
    "font.family": ["DejaVu Sans"],  # ships with matplotlib: the same metrics on every machine
    "font.size": 9.0,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "path.simplify": False,
    "figure.dpi": 100.0,
    "savefig.dpi": 100.0,
}
METADATA = {"Date": None, "Creator": "hubrelease render-card (matplotlib)"}
# Every mark a chart can draw, with the legend words that name it: a legend is built from the marks
# drawn (matplotlib lists only labelled artists), so it never names a colour nothing is drawn in.
ROLE_MARKS: dict[str, tuple[str, str]] = {
    "primary": ("C3", "primary endpoint (preregistered)"),
    "secondary": ("C0", "secondary"),
    "exploratory": ("C1", "exploratory"),
}
FAILED_MARK = ("black", "x", "run with failed requests (see the table)")
MEASURED_LABEL = "measured"
REBUILT_LABEL = "fit + published residual (no measured step time)"
OUTSIDE_FIT = ("C7", "outside the fitted range")
INSIDE_FIT = ("C0", "in the fitted range")


@dataclass(frozen=True)
class Chart:
    """One chart: where it goes (relative to the card's folder), its alt text, and its bytes."""

    path: str
    title: str
    svg: bytes


def _stem(evaluation_path: str) -> str:
    return PurePosixPath(evaluation_path).stem


def serving_chart_path(evaluation_path: str) -> str:
    """Path of the throughput / TPOT chart of an evaluation's matrix."""
    return f"{CHARTS_DIR}/{_stem(evaluation_path)}-serving.svg"


def comparison_chart_path(evaluation_path: str, comparison: Comparison) -> str:
    return f"{CHARTS_DIR}/{_stem(evaluation_path)}-{comparison.id}.svg"


def sweep_chart_path(evaluation_path: str, sweep: Sweep) -> str:
    return f"{CHARTS_DIR}/{_stem(evaluation_path)}-{sweep.id}.svg"


def category_chart_path(evaluation_path: str) -> str:
    """Path of the chart of an evaluation's results per prompt category."""
    return f"{CHARTS_DIR}/{_stem(evaluation_path)}-categories.svg"


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def _svg(figure: Figure) -> bytes:
    from matplotlib.backends.backend_svg import FigureCanvasSVG

    buffer = io.BytesIO()
    FigureCanvasSVG(figure).print_svg(buffer, metadata=METADATA)  # type: ignore[no-untyped-call]
    return buffer.getvalue()


def _configuration_label(evaluation: Evaluation, configuration: Configuration) -> str:
    """The legend entry: the label, with its draft tokens per round when it speculates."""
    if configuration.method == "autoregressive":
        return configuration.label
    tokens = evaluation.draft_tokens(configuration)
    counted = f"up to {tokens} draft tokens" if tokens is not None else "draft tokens not stated"
    return f"{configuration.label} ({counted})"


def _run_conditions(evaluation: Evaluation) -> str:
    """Hardware, sampling and prompts: the conditions every cell of the matrix shares."""
    run = evaluation.run
    parts = [run.hardware.name]
    if run.serving.sampling:
        parts.append(f"{run.serving.sampling} sampling")
    if run.prompt_set.total is not None:
        parts.append(f"{run.prompt_set.total} prompts")
    return ", ".join(parts)


def _serving(evaluation: Evaluation) -> Figure:
    figure = _figure(9.0, 3.6)
    throughput, tpot = figure.subplots(1, 2)
    for configuration in evaluation.configurations:
        cells = [c for c in evaluation.cells if c.configuration == configuration.id]
        if not cells:
            continue
        levels = [c.concurrency for c in cells]
        label = _configuration_label(evaluation, configuration)
        throughput.plot(levels, [c.overall_tok_s for c in cells], marker="o", label=label)
        tpot.plot(levels, [c.median_tpot_ms for c in cells], marker="o", label=label)
    failed = [c for c in evaluation.cells if c.failed_requests]
    if failed:
        colour, marker, label = FAILED_MARK
        for axes, metric in ((throughput, "overall_tok_s"), (tpot, "median_tpot_ms")):
            axes.plot(
                [c.concurrency for c in failed],
                [getattr(c, metric) for c in failed],
                marker,
                color=colour,
                markersize=10,
                markeredgewidth=2,
                label=label if axes is throughput else "_nolegend_",
            )
    levels = sorted({c.concurrency for c in evaluation.cells})
    for axes, label in ((throughput, "Overall output tok/s"), (tpot, "Median TPOT (ms)")):
        axes.set_xlabel("Concurrency")
        axes.set_ylabel(label)
        axes.set_xticks(levels)
    throughput.legend(fontsize=7.5)
    figure.suptitle(_run_conditions(evaluation))
    figure.tight_layout()
    return figure


def _comparison(comparison: Comparison) -> Figure:
    figure = _figure(6.0, 3.4)
    axes: Axes = figure.subplots()
    arms = {arm.id: arm.label for arm in comparison.arms}
    labels = [
        str(row.setting) if row.setting is not None else arms[comparison.treatment] for row in comparison.rows
    ]
    means = [row.mean_difference for row in comparison.rows]
    errors = [
        [m - row.ci95.low for m, row in zip(means, comparison.rows, strict=True)],
        [row.ci95.high - m for m, row in zip(means, comparison.rows, strict=True)],
    ]
    positions = list(range(len(labels)))
    # Roles mean something only beside a primary endpoint (or where stated): else one unlabelled mark.
    ranked = comparison.primary is not None or any(row.role != "secondary" for row in comparison.rows)
    named: set[str] = set()
    for x, mean, low, high, row in zip(positions, means, errors[0], errors[1], comparison.rows, strict=True):
        colour, label = ROLE_MARKS[row.role]
        shown = ranked and label not in named
        named.add(label)
        axes.errorbar(
            [x],
            [mean],
            yerr=[[low], [high]],
            fmt="o",
            color=colour,
            capsize=4,
            label=label if shown else "_nolegend_",
        )
    axes.axhline(0.0, color="black", linewidth=0.8)
    axes.set_xticks(positions, labels)
    axes.set_xlabel(comparison.setting_name or "comparison")
    axes.set_ylabel(f"{arms[comparison.treatment]} minus {arms[comparison.baseline]} ({comparison.metric})")
    pairs = sorted({row.n for row in comparison.rows})
    paired = (
        f"paired by {comparison.paired_by}, n = {pairs[0]}"
        if len(pairs) == 1
        else f"paired by {comparison.paired_by}"
    )
    axes.set_title(f"{comparison.title}\n(mean paired difference, 95% CI; {paired})", fontsize=9)
    if ranked:
        axes.legend(fontsize=7.5)
    figure.tight_layout()
    return figure


def _intervals(axes: Axes, names: list[str], means: list[float], intervals: list[Interval | None]) -> None:
    """One point per name with its 95% interval where there is one, names down the y axis."""
    positions = list(range(len(names)))
    for y, mean, interval in zip(positions, means, intervals, strict=True):
        errors = [[mean - interval.low], [interval.high - mean]] if interval is not None else None
        axes.errorbar([mean], [y], xerr=errors, fmt="o", color="C0", capsize=4)
    axes.set_yticks(positions, names)
    axes.invert_yaxis()


def _categories(evaluation: Evaluation) -> Figure:
    """Decode tok/s per configuration and category, and each comparison's paired difference per category."""
    labels = {c.id: c.label for c in evaluation.configurations}
    compared = [c for c in evaluation.comparisons if c.by_category]
    panels = int(bool(evaluation.by_category)) + len(compared)
    rows = len(evaluation.by_category) + sum(len(c.by_category) for c in compared)
    figure = _figure(7.0, 1.2 + 0.35 * rows + 0.9 * panels)
    axes_list: list[Axes] = list(figure.subplots(panels, 1, squeeze=False)[:, 0])
    if evaluation.by_category:
        axes = axes_list.pop(0)
        results = evaluation.by_category
        _intervals(
            axes,
            [
                f"{labels.get(r.configuration, r.configuration)}"
                + (f" @{r.concurrency}" if r.concurrency is not None else "")
                + f": {r.category or 'all prompts'}"
                for r in results
            ],
            [r.decode_tok_s for r in results],
            [r.ci95 for r in results],
        )
        axes.set_xlabel("Decode tok/s, mean over the category's prompts (95% CI)")
    for comparison, axes in zip(compared, axes_list, strict=True):
        arms = {arm.id: arm.label for arm in comparison.arms}
        rows_ = comparison.by_category
        _intervals(
            axes,
            [
                f"{row.category}"
                + (f" ({comparison.setting_name} {row.setting})" if row.setting is not None else "")
                for row in rows_
            ],
            [row.mean_difference for row in rows_],
            [row.ci95 for row in rows_],
        )
        axes.axvline(0.0, color="black", linewidth=0.8)
        axes.set_xlabel(
            f"{arms[comparison.treatment]} minus {arms[comparison.baseline]} ({comparison.metric}), "
            f"paired by {comparison.paired_by} within each category (95% CI)"
        )
        axes.set_title(comparison.title, fontsize=9)
    figure.suptitle(f"Results per prompt category, {_run_conditions(evaluation)}", fontsize=9)
    figure.tight_layout()
    return figure


def _line(fit: StepTimeFit, setting: float) -> float:
    return fit.intercept_ms + fit.slope_ms * (setting - 1)


def _sweep(sweep: Sweep) -> Figure:
    fit = sweep.step_time_fit
    assert fit is not None
    figure = _figure(9.0, 3.6)
    steps, residuals = figure.subplots(1, 2)
    # A transcribed fit may carry only the residuals: the step time is then rebuilt as fit + residual,
    # drawn hollow and named so, never passed off as a measurement.
    measured = [(float(r.setting), r.step_time_ms) for r in fit.residuals if r.step_time_ms is not None]
    rebuilt = [
        (float(r.setting), _line(fit, r.setting) + r.residual_ms)
        for r in fit.residuals
        if r.step_time_ms is None
    ]
    if measured:
        steps.plot(
            [k for k, _ in measured], [ms for _, ms in measured], "o", color="C0", label=MEASURED_LABEL
        )
    if rebuilt:
        steps.plot(
            [k for k, _ in rebuilt],
            [ms for _, ms in rebuilt],
            "o",
            color="C0",
            fillstyle="none",
            label=REBUILT_LABEL,
        )
    line = [fit.setting_min, fit.setting_max]
    steps.plot(
        line,
        [_line(fit, k) for k in line],
        "-",
        label=(f"fit {fit.intercept_ms:.1f} + {fit.slope_ms:.1f} x ({sweep.setting_name} - 1) ms"),
    )
    steps.set_xlabel(sweep.setting_name)
    steps.set_ylabel("Step time (ms per verify round)")
    steps.legend(fontsize=7.5)
    for (colour, label), inside in ((INSIDE_FIT, True), (OUTSIDE_FIT, False)):
        chosen = [r for r in fit.residuals if r.in_range is inside]
        if chosen:
            residuals.bar(
                [str(r.setting) for r in chosen], [r.residual_ms for r in chosen], color=colour, label=label
            )
    residuals.axhline(0.0, color="black", linewidth=0.8)
    if any(not r.in_range for r in fit.residuals):
        residuals.legend(fontsize=7.5)
    residuals.set_xlabel(sweep.setting_name)
    residuals.set_ylabel("Measured minus fit (ms)")
    figure.suptitle(sweep.title)
    figure.tight_layout()
    return figure


def figures(evaluations: Mapping[str, Evaluation]) -> Iterator[tuple[str, str, Any]]:
    """(path, alt text, draw) per chart: ``draw()`` makes the matplotlib Figure (under ``RC``)."""
    for path, evaluation in evaluations.items():
        if evaluation.cells:
            title = f"Throughput and TPOT against concurrency, {evaluation.run.hardware.name}"
            yield serving_chart_path(path), title, lambda e=evaluation: _serving(e)
        for comparison in evaluation.comparisons:
            yield (
                comparison_chart_path(path, comparison),
                comparison.title,
                lambda c=comparison: _comparison(c),
            )
        for sweep in evaluation.sweeps:
            if sweep.step_time_fit is not None:
                title = f"{sweep.title}: step time, fit and residuals"
                yield sweep_chart_path(path, sweep), title, lambda s=sweep: _sweep(s)
        if evaluation.by_category or any(c.by_category for c in evaluation.comparisons):
            title = f"Results per prompt category, {evaluation.run.hardware.name}"
            yield category_chart_path(path), title, lambda e=evaluation: _categories(e)


def chart_titles(evaluations: Mapping[str, Evaluation]) -> dict[str, str]:
    """Path -> alt text of every chart the evaluations give, without drawing any (the card's links)."""
    return {path: title for path, title, _ in figures(evaluations)}


def build_charts(evaluations: Mapping[str, Evaluation]) -> list[Chart]:
    """Every chart of the evaluations, drawn: same evaluations and matplotlib version, same bytes."""
    import matplotlib
    import matplotlib.style

    charts = []
    with matplotlib.style.context("default"), matplotlib.rc_context(RC):  # type: ignore[arg-type]
        for path, title, draw in figures(evaluations):
            charts.append(Chart(path, title, _svg(draw())))
    return charts
