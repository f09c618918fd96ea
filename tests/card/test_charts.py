"""Render-card draws SVG charts beside the card, byte-identical across runs and machines,
pinned like any artifact and linked from the card."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.style
import matplotlib.text
import pytest
import yaml

from hubrelease.card import charts, check_card
from hubrelease.evaluation import Evaluation, load_evaluation
from hubrelease.manifest import load_manifest
from tests.factories.cards import ab_evaluation, matrix_evaluation, write_card_release
from tests.factories.cli import run_cli, run_program

SEEDS = ("ornith-1.5-dflash2", "ornith-1.0-dflash-gguf")
_DRAW = (
    "import json, sys\n"
    "from hubrelease.card.render import render\n"
    "card = render(sys.argv[1])\n"
    "json.dump({c.path: c.svg.hex() for c in card.charts}, sys.stdout)\n"
)
# A user's matplotlibrc that would change every chart if the defaults were not reset.
_HOSTILE_RC = (
    "lines.linewidth: 7\nfont.family: serif\nsvg.fonttype: path\nsvg.hashsalt: other\nfont.size: 20\n"
)


def _draw(manifest: Path, env: dict[str, str]) -> dict[str, bytes]:
    done = run_program(
        [sys.executable, "-c", _DRAW, str(manifest)],
        env=env,
        check=True,
    )
    return {path: bytes.fromhex(svg) for path, svg in json.loads(done.stdout).items()}


def _env(**extra: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "VIRTUAL_ENV", "PYTHONPATH")}
    return {**keep, **extra}


@pytest.mark.parametrize("seed", SEEDS)
def test_seed_charts_are_byte_identical_across_processes_and_environments(
    seed: str, repo_root: Path, tmp_path: Path
) -> None:
    manifest = repo_root / "manifests" / seed / "hubrelease.yaml"
    hostile = tmp_path / "mplconfig"
    hostile.mkdir()
    (hostile / "matplotlibrc").write_text(_HOSTILE_RC)
    first = _draw(manifest, _env(TZ="UTC", LC_ALL="C", PYTHONHASHSEED="0", HOME=str(tmp_path / "a")))
    second = _draw(
        manifest,
        _env(
            TZ="Pacific/Kiritimati",
            LC_ALL="C.UTF-8",
            LANG="de_DE.UTF-8",
            PYTHONHASHSEED="12345",
            HOME=str(tmp_path / "b"),
            MPLCONFIGDIR=str(hostile),
            SOURCE_DATE_EPOCH="1",
        ),
    )
    assert first and first == second
    release = load_manifest(manifest)
    for path, svg in first.items():
        assert (manifest.parent / path).read_bytes() == svg  # the committed chart is the drawing
        artifact = release.artifact(path)
        assert artifact is not None and artifact.size == len(svg)  # pinned like any artifact
        assert b"<dc:date>" not in svg and b"hubrelease render-card (matplotlib)" in svg


def test_the_seed_cards_link_their_charts(repo_root: Path) -> None:
    gguf = (repo_root / "manifests/ornith-1.0-dflash-gguf/README.md").read_text()
    for name in ("retrain-ab", "spec-on-off", "n-max-sweep"):
        assert f"](charts/evaluation-{name}.svg)" in gguf
    dflash2 = (repo_root / "manifests/ornith-1.5-dflash2/README.md").read_text()
    assert (
        "![Throughput and TPOT against concurrency, NVIDIA H200](charts/h200-evaluation-serving.svg)"
        in dflash2
    )


def test_render_card_writes_and_pins_the_charts_and_check_catches_a_changed_one(tmp_path: Path) -> None:
    manifest = write_card_release(
        tmp_path, evaluations={"eval/matrix.json": matrix_evaluation(), "eval/ab.json": ab_evaluation()}
    )
    data = yaml.safe_load(manifest.read_text())
    data["card"]["charts"] = True
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))
    assert run_cli("render-card", manifest, "--check")[0] == 1  # nothing drawn yet
    code, _, err = run_cli("render-card", manifest)
    assert code == 0, err
    charts = sorted(p.relative_to(tmp_path).as_posix() for p in (tmp_path / "charts").iterdir())
    assert charts == ["charts/ab-retrain-ab.svg", "charts/matrix-serving.svg"]
    release = load_manifest(manifest)
    card = (tmp_path / "README.md").read_text()
    for path in charts:
        artifact = release.artifact(path)
        assert artifact is not None and artifact.sha256 is not None
        assert f"{artifact.sha256}  {path}" in card  # in the checksums block
        assert f"]({path})" in card  # linked
    assert run_cli("render-card", manifest, "--check")[0] == 0
    assert run_cli("verify", manifest)[0] == 0
    chart = tmp_path / "charts" / "matrix-serving.svg"
    chart.write_bytes(chart.read_bytes().replace(b"Concurrency", b"Concurrenxy"))
    code, _, err = run_cli("render-card", manifest, "--check")
    assert code == 1 and "chart charts/matrix-serving.svg is missing, differs from a fresh drawing" in err
    assert run_cli("render-card", manifest)[0] == 0
    assert check_card(manifest).current


def test_a_sweep_chart_is_drawn_only_with_a_step_time_fit(tmp_path: Path) -> None:
    manifest = write_card_release(tmp_path, evaluations={"eval/ab.json": ab_evaluation()})
    data = yaml.safe_load(manifest.read_text())
    data["card"].update(charts=True, claims=[])
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))
    charts = check_card(manifest).rendered
    assert charts is not None
    assert [c.path for c in charts.charts] == ["charts/ab-retrain-ab.svg"]  # the factory's sweep has no fit


_COLOUR_WORDS = ("red", "grey", "gray", "blue", "orange", "green")


def _charted() -> dict[str, Evaluation]:
    """Both seeds' evaluations, a matrix with a failed request and a ranked A/B with its sweep."""
    root = Path(__file__).resolve().parents[2] / "manifests"
    evaluations = {
        str(p): load_evaluation(p) for seed in SEEDS for p in sorted((root / seed).glob("*evaluation*.json"))
    }
    failed = matrix_evaluation()
    failed["cells"][2]["failed_requests"] = 2
    evaluations["failed.json"] = Evaluation.model_validate(failed)
    evaluations["ab.json"] = Evaluation.model_validate(ab_evaluation())
    return evaluations


def _drawn_labels(axes: Any) -> set[str]:
    """Labels of the marks the axes draw: lines with data, error bars, bars."""
    lines = {line.get_label() for line in axes.lines if len(line.get_xdata())}
    return lines | {container.get_label() for container in axes.containers}


def test_each_legend_names_only_marks_the_chart_draws_and_no_text_names_a_colour() -> None:
    with matplotlib.style.context("default"), matplotlib.rc_context(charts.RC):  # type: ignore[arg-type]
        for path, _, draw in charts.figures(_charted()):
            figure = draw()
            texts = [t.get_text() for t in figure.findobj(matplotlib.text.Text)]
            assert not [t for t in texts if set(re.findall(r"[a-z]+", t.lower())) & set(_COLOUR_WORDS)], path
            for axes in figure.axes:
                legend = axes.get_legend()
                named = {t.get_text() for t in legend.get_texts()} if legend else set()
                assert named <= _drawn_labels(axes), path


def test_failed_requests_and_rebuilt_step_times_are_marked() -> None:
    evaluations = _charted()
    drawn = {path: draw for path, _, draw in charts.figures(evaluations)}
    with matplotlib.style.context("default"), matplotlib.rc_context(charts.RC):  # type: ignore[arg-type]
        throughput = drawn["charts/failed-serving.svg"]().axes[0]
        (failed,) = [line for line in throughput.lines if line.get_label() == charts.FAILED_MARK[2]]
        assert (list(failed.get_xdata()), failed.get_marker()) == ([1], "x")  # DFlash2 at concurrency 1
        gguf = next(p for p in drawn if "n-max-sweep" in p)
        steps = drawn[gguf]().axes[0]
    # Seed 001 publishes residuals, not step times: every point is rebuilt, none is called measured.
    assert {line.get_label() for line in steps.lines} == {charts.REBUILT_LABEL, steps.lines[-1].get_label()}
    assert charts.MEASURED_LABEL not in {line.get_label() for line in steps.lines}


def test_charts_carry_the_conditions_of_their_measurements() -> None:
    drawn = {path: draw for path, _, draw in charts.figures(_charted())}
    with matplotlib.style.context("default"), matplotlib.rc_context(charts.RC):  # type: ignore[arg-type]
        serving = drawn["charts/h200-evaluation-serving.svg"]()
        comparison = drawn["charts/evaluation-spec-on-off.svg"]()
    legend = serving.axes[0].get_legend()
    assert legend is not None
    assert [t.get_text() for t in legend.get_texts()] == [
        "Autoregressive",
        "NEXTN (draft tokens not stated)",  # seed 000: "Both external drafts propose up to 10 tokens"
        "Qwen3.5 DFlash warm start (up to 10 draft tokens)",
        "Ornith DFlash2 (up to 10 draft tokens)",
    ]
    assert serving.get_suptitle() == "NVIDIA H200, greedy sampling, 40 prompts"
    assert (
        comparison.axes[0].get_title().endswith("(mean paired difference, 95% CI; paired by prompt, n = 8)")
    )
