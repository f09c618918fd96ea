"""Evaluation JSON built from fixed raw runs must not change unnoticed.

Refresh after an intended change with ``HUBRELEASE_UPDATE_GOLDENS=1 pytest tests/evaluation/test_golden.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hubrelease.builders.evaluation import Source, build_evaluation, evaluation_json
from hubrelease.evaluation import load_evaluation
from hubrelease.evaluation.infer import SpecOptions
from hubrelease.evaluation.ingest import ServingOptions
from hubrelease.evaluation.spec import EvaluationSpec, load_spec

GOLDEN = Path(__file__).parent / "golden"
REAL = "../../fixtures/bench_serving"
CASES = {
    "serving": ["autoregressive=autoregressive.jsonl", "tagged.jsonl"],
    "llama": ["ab.csv", "sweep.jsonl"],
    # real bench_serving output, no spec: everything but the hardware inferred
    "bench-serving-inferred": [f"{REAL}/autoregressive-sglang.jsonl", f"{REAL}/dflash-sglang.jsonl"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_evaluation(case: str, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = GOLDEN / case
    monkeypatch.chdir(folder)  # provenance records the paths as given, so give them relative
    spec = load_spec("spec.json") if Path("spec.json").exists() else EvaluationSpec()
    evaluation = build_evaluation(
        [Source.parse(s) for s in CASES[case]],
        spec,
        spec_options=SpecOptions(hardware="Test CPU"),
        serving_options=ServingOptions(flushed_cache=True),
    )
    expected = folder / "expected.json"
    if os.environ.get("HUBRELEASE_UPDATE_GOLDENS"):
        expected.write_text(evaluation_json(evaluation), encoding="utf-8")
    assert evaluation_json(evaluation) == expected.read_text(encoding="utf-8")
    assert load_evaluation(expected) == evaluation
