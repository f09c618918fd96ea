"""Conditions stated per measurement: a draft-token count is printed only for the rows it holds for, and\nresults per prompt category get their own table and chart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hubrelease.card.charts import category_chart_path
from hubrelease.card.render import render
from hubrelease.card.tables import CategoryRow, DraftTokens, draft_tokens
from hubrelease.evaluation import Evaluation
from hubrelease.evaluation.models import CategoryResult, PositionAcceptance
from tests.factories.cards import ab_evaluation, matrix_evaluation, safetensors_card, write_card_release


def _load(data: dict[str, Any]) -> Evaluation:
    return Evaluation.model_validate(data)


def test_rows_that_set_n_max_per_request_are_not_given_the_servers_count() -> None:
    # The run's serving.draft_tokens is 10; the A/B and sweep rows ran at n_max 0 and 3.
    assert draft_tokens(_load(ab_evaluation())) == DraftTokens(per_request=(0, 3))


def test_a_configuration_that_states_no_count_is_not_given_the_runs() -> None:
    data = matrix_evaluation()
    data["run"]["serving"]["draft_tokens"] = None
    data["configurations"].append({"id": "nextn", "label": "NEXTN", "method": "mtp"})
    data["configurations"][1]["draft_tokens"] = 10
    data["cells"] += [
        dict(c, configuration="nextn") for c in data["cells"] if c["configuration"] == "dflash2"
    ]
    assert draft_tokens(_load(data)).by_configuration == ((10, ("DFlash2",)), (None, ("NEXTN",)))
    data["run"]["serving"]["draft_tokens"] = 4  # stated once for the run: every configuration without its own
    assert draft_tokens(_load(data)).by_configuration == ((10, ("DFlash2",)), (4, ("NEXTN",)))


def _with_categories(tmp_path: Path) -> Path:
    """A matrix whose DFlash2 cell at concurrency 1 is split by language, and an A/B with rows per think mode."""
    matrix = matrix_evaluation()
    matrix["by_category"] = [
        {
            "configuration": "dflash2", "concurrency": 1, "category": category, "prompts": 20, "requests": 20,
            "failed_requests": 0, "decode_tok_s": speed, "sd_decode_tok_s": 4.0,
            "ci95": {"low": speed - 1.87, "high": speed + 1.87}, "median_ttft_ms": 140.0,
        }
        for category, speed in (("chinese", 96.5), ("english", 131.25))
    ]  # fmt: skip
    ab = ab_evaluation()
    ab["comparisons"][0]["by_category"] = [
        {**row, "category": category, "n": 4, "role": "secondary"}
        for row, category in zip(ab["comparisons"][0]["rows"], ("think", "no-think"), strict=True)
    ]
    card = {**safetensors_card(), "charts": True}
    return write_card_release(
        tmp_path, card=card, evaluations={"eval/matrix.json": matrix, "eval/ab.json": ab}
    )


def test_the_card_shows_a_table_and_a_chart_per_category_when_the_runs_carry_them(tmp_path: Path) -> None:
    rendered = render(_with_categories(tmp_path))
    lines = rendered.text.splitlines()
    assert "### Results per prompt category: Test serving evaluation" in lines
    assert "| DFlash2 | 1 | chinese | 20 | 20 | 96.50 | [94.63, 98.37] | 140.0 ms | n/a | n/a |" in lines
    assert "| DFlash2 | 1 | english | 20 | 20 | 131.25 | [129.38, 133.12] | 140.0 ms | n/a | n/a |" in lines
    assert "| think | 0 | 18.03 | 18.07 | +0.039 | [-0.021, 0.099] | 4 |" in lines
    assert "| no-think | 3 | 21.63 | 22.95 | +1.315 | [0.360, 2.270] | 4 |" in lines
    charts = {chart.path: chart.svg.decode() for chart in rendered.charts}
    for name in ("eval/matrix.json", "eval/ab.json"):
        path = category_chart_path(name)
        assert f"]({path})" in rendered.text
        assert path in charts
    assert "DFlash2 @1: chinese" in charts[category_chart_path("eval/matrix.json")]
    assert "no-think (n_max 3)" in charts[category_chart_path("eval/ab.json")]


def test_spec_bench_positions_are_printed_per_category() -> None:
    row = CategoryRow(
        "dflash",
        CategoryResult(
            configuration="dflash", category="chinese", prompts=2, requests=4, decode_tok_s=70.0,
            sd_decode_tok_s=1.0, accepted_length=2.5,
            acceptance_by_position=[
                PositionAcceptance(position=1, drafted=200, accepted=150, rate=0.75),
                PositionAcceptance(position=2, drafted=0, accepted=0),
            ],
        ),
    )  # fmt: skip
    assert row.positions == "1: 75.0% (150/200), 2: n/a (0/0)"
