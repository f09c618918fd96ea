"""The committed seed evaluations reproduce the published tables and their intervals."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from hubrelease.evaluation import load_evaluation

MANIFESTS = Path(__file__).resolve().parents[2] / "manifests"


@pytest.mark.parametrize(
    ("name", "first", "last"),
    [
        ("spark-evaluation.json", (79.3, 80.7, 118.0, 12.39, None), (236.5, 37.2, 539.0, 26.92, 4.18)),
        ("h200-evaluation.json", (253.6, 267.2, 92.0, 3.74, None), (1351.6, 244.3, 237.0, 4.09, 3.97)),
    ],
)
def test_seed_000_matrices_have_every_cell(
    name: str, first: tuple[float, ...], last: tuple[float, ...]
) -> None:
    evaluation = load_evaluation(MANIFESTS / "ornith-1.5-dflash2" / name)
    assert [(c.configuration, c.concurrency) for c in evaluation.cells] == [
        (config, concurrency)
        for config in ("autoregressive", "nextn", "dflash-warm-start", "dflash2")
        for concurrency in (1, 4, 8)
    ]
    for cell, expected in ((evaluation.cells[0], first), (evaluation.cells[-1], last)):
        values = (cell.overall_tok_s, cell.per_user_tok_s, cell.median_ttft_ms, cell.median_tpot_ms)
        assert (*values, cell.accepted_length) == expected
    assert evaluation.run.engine.commit == "710267dc4c817b38d9965346390cd56b59b54eda"
    assert evaluation.run.target.revision == "0f0b1b59b879ccde1353e6ebd0fb10c204d4c544"
    assert evaluation.run.prompt_set.categories == {"chat": 10, "code": 10, "math": 10, "stem": 10}
    assert evaluation.provenance.transcribed_from


def test_seed_001_ab_intervals_round_to_the_published_ones() -> None:
    evaluation = load_evaluation(MANIFESTS / "ornith-1.0-dflash-gguf" / "evaluation.json")
    ab = evaluation.comparison("retrain-ab")
    assert ab is not None
    published = {0: (-0.021, 0.099), 2: (-0.032, 1.460), 3: (0.360, 2.270), 4: (0.391, 2.981)}
    assert {row.setting: (round(row.ci95.low, 3), round(row.ci95.high, 3)) for row in ab.rows} == published
    primary = ab.primary
    assert primary is not None and primary.setting == 3 and primary.relative_ci95 is not None
    assert (f"{primary.relative_ci95.low:.1%}", f"{primary.relative_ci95.high:.1%}") == ("1.7%", "10.5%")
    assert [s.last_minus_first for s in ab.between_boot_spread] == [-0.093, 0.403]
    (sweep,) = evaluation.sweeps
    assert [row.setting for row in sweep.rows] == [0, 1, 2, 3, 4, 6, 8, 12, 15]
    assert [row.tokens_per_round for row in sweep.rows][:2] == [None, 1.87]
    fit = sweep.step_time_fit  # "about 90.9 + 14.7 x (n_max - 1) ms over K=1 to K=12", residuals per K
    assert fit is not None and (fit.intercept_ms, fit.slope_ms, fit.setting_min, fit.setting_max) == (
        90.9,
        14.7,
        1,
        12,
    )
    assert [(r.setting, r.residual_ms) for r in fit.residuals] == [
        (1, -2.9),
        (2, -1.7),
        (3, -1.0),
        (4, -0.7),
        (6, -1.1),
        (8, 16.3),
        (12, -9.9),
        (15, -36.6),
    ]


SEED_DOCUMENTS = MANIFESTS.parent.parent / "shared" / "seeds"


@pytest.mark.parametrize(
    "path",
    [
        "ornith-1.5-dflash2/spark-evaluation.json",
        "ornith-1.5-dflash2/h200-evaluation.json",
        "ornith-1.0-dflash-gguf/evaluation.json",
    ],
)
def test_each_seed_evaluation_pins_the_lines_it_was_transcribed_from(path: str) -> None:
    """The document's digest is the seed text's, and every figure the file holds stands in the pinned lines."""
    evaluation = load_evaluation(MANIFESTS / path)
    (document,) = evaluation.provenance.documents
    assert document.path is not None and not Path(document.path).is_absolute()
    local = (MANIFESTS / path).parent / document.path
    if not SEED_DOCUMENTS.is_dir():
        pytest.skip("the seed texts are not beside this checkout")
    assert local.resolve().parent == SEED_DOCUMENTS.resolve()
    assert hashlib.sha256(local.read_bytes()).hexdigest() == document.sha256
    lines = local.read_text().splitlines()
    pinned = "\n".join(line for t in document.tables for line in lines[t.lines[0] - 1 : t.lines[1]])
    figures = [f"{c.overall_tok_s:.1f}" for c in evaluation.cells]
    figures += [f"{r.mean_tok_s:.2f}" for s in evaluation.sweeps for r in s.rows]
    figures += [
        f"{r.mean_difference:+.3f}" for c in evaluation.comparisons for r in c.rows if c.id == "retrain-ab"
    ]
    assert figures and all(figure in pinned for figure in figures), [f for f in figures if f not in pinned]
