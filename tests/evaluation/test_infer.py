"""A spec only where it adds information: configurations, arms, A/B and sweeps from the runs and a few options."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubrelease.builders.evaluation import Source, build_evaluation, llama_options
from hubrelease.errors import BuildError, InputError
from hubrelease.evaluation.infer import SpecOptions
from hubrelease.evaluation.ingest import ServingOptions
from hubrelease.evaluation.spec import EvaluationSpec, load_spec

FIXTURES = Path(__file__).parent / "fixtures"
SEED_001 = [FIXTURES / "seed001" / f"results-{name}-20260809.csv" for name in ("retrain-ab", "m1q4")]
OPTIONS = SpecOptions(
    hardware="NVIDIA GB10",
    target="paragon-of-brah/Ornith-1.0-397B-DFLASH-GGUF",
    baseline="A",
    treatment="B",
    primary="n_max=3",
    fit_range="1:12",
)


def test_seed_001_layout_needs_only_options_for_the_same_numbers_as_a_spec() -> None:
    inferred = build_evaluation([Source(p) for p in SEED_001], spec_options=OPTIONS)
    spelled = build_evaluation([Source(p) for p in SEED_001], load_spec(FIXTURES / "seed001" / "spec.yaml"))
    (ab, on_off), (ab_spec, on_off_spec) = inferred.comparisons, spelled.comparisons
    assert ab.rows == ab_spec.rows
    assert ab.between_boot_spread == ab_spec.between_boot_spread
    assert ab.primary is not None and ab.primary.setting == 3
    assert ab.design is not None and ab.design.boot_order == ["A", "B", "B", "A"]
    assert (ab.design.prompts, ab.design.repetitions) == (8, 2)
    assert [arm.boots for arm in ab.arms] == [[1, 4], [2, 3]]
    assert on_off.rows == on_off_spec.rows
    (sweep,) = inferred.sweeps
    assert (sweep.id, sweep.rows, sweep.step_time_fit) == (
        "m1-q4-sweep",
        spelled.sweeps[0].rows,
        spelled.sweeps[0].step_time_fit,
    )
    assert inferred.run.hardware.name == "NVIDIA GB10"
    assert inferred.run.target.repo_id == "paragon-of-brah/Ornith-1.0-397B-DFLASH-GGUF"
    assert (inferred.run.engine.name, inferred.run.prompt_set.total) == ("llama-server", 8)


def test_two_arms_make_an_ab_without_options() -> None:
    evaluation = build_evaluation(
        [Source(SEED_001[0])], spec_options=SpecOptions(hardware="GB10", target="acme/t")
    )
    (ab,) = evaluation.comparisons
    assert (ab.baseline, ab.treatment, ab.primary) == ("A", "B", None)
    assert evaluation.sweeps == []


def test_bench_serving_output_needs_only_the_hardware() -> None:
    files = [FIXTURES / "bench_serving" / f"{n}-sglang-oai.jsonl" for n in ("autoregressive", "dflash")]
    evaluation = build_evaluation(
        [Source(p) for p in files],
        spec_options=SpecOptions(hardware="Test CPU"),
        serving_options=ServingOptions(flushed_cache=True),
    )
    assert [(c.id, c.method) for c in evaluation.configurations] == [
        ("autoregressive", "autoregressive"),
        ("dflash", "dflash"),
    ]
    drafter = evaluation.configurations[1].drafter
    assert drafter is not None and drafter.repo_id == "acme/drafter"
    assert evaluation.run.target.repo_id == "acme/target"  # server_info's model_path
    assert (evaluation.run.engine.name, evaluation.run.engine.version) == ("sglang", "0.5.23")
    assert (evaluation.run.prompt_set.name, evaluation.run.prompt_set.total) == ("bench_serving custom", 16)
    assert evaluation.title == "Serving evaluation on Test CPU"
    assert len(evaluation.cells) == 4 and evaluation.provenance.warnings == []


def test_a_spec_value_wins_over_an_inferred_one(tmp_path: Path) -> None:
    spec = EvaluationSpec.model_validate(
        {"title": "Mine", "run": {"hardware": {"id": "h", "name": "Spec machine"}}}
    )
    evaluation = build_evaluation(
        [Source(SEED_001[0])], spec, spec_options=SpecOptions(hardware="Option", target="a/b")
    )
    assert (evaluation.title, evaluation.run.hardware.name) == ("Mine", "Spec machine")


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        (
            SpecOptions(target="a/b"),
            BuildError,
            "no hardware: pass --hardware NAME (or run.hardware in a --spec file)",
        ),
        (
            SpecOptions(hardware="h"),
            BuildError,
            "no target: pass --target REPO[@COMMIT] (or run.target in a --spec file)",
        ),
        (
            SpecOptions(hardware="h", target="a/b@main"),
            InputError,
            "--target: expected REPO or REPO@COMMIT (40 hex), got 'a/b@main'",
        ),
        (
            SpecOptions(hardware="h", target="a/b", primary="k=3"),
            InputError,
            "--primary: expected n_max=VALUE, got 'k=3'",
        ),
        (
            SpecOptions(hardware="h", target="a/b", primary="n_max=x"),
            InputError,
            "--primary: expected a number, got 'x'",
        ),
        (
            SpecOptions(hardware="h", target="a/b", fit_range="12:1"),
            InputError,
            "--fit-range: expected MIN:MAX with MIN < MAX, got '12:1'",
        ),
        (
            SpecOptions(hardware="h", target="a/b", baseline="A"),
            InputError,
            "--baseline and --treatment go together",
        ),
        (
            SpecOptions(hardware="h", target="a/b", baseline="A", treatment="C"),
            BuildError,
            "no llama-server rows for arm 'C' (arms: A, B, m1-q4)",
        ),
    ],
)
def test_missing_or_malformed_options_are_one_line(
    options: SpecOptions, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as info:
        build_evaluation(
            [Source(p) for p in SEED_001],
            spec_options=options,
            llama_options=llama_options(None, False, None),
        )
    assert str(info.value) == message
