"""A spec only where it adds information: configurations, arms, A/B and sweeps from the runs and a few options."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from hubrelease.builders.evaluation import Source, build_evaluation, llama_options
from hubrelease.errors import BuildError, InputError
from hubrelease.evaluation.infer import SpecOptions
from hubrelease.evaluation.ingest import ServingOptions
from hubrelease.evaluation.spec import EvaluationSpec, load_spec
from tests.factories.bench_runs import eval_spec, vllm_result, write_csv, write_json, write_spec
from tests.factories.cli import run_cli

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


SEED_MANIFEST = (
    Path(__file__).resolve().parents[2] / "manifests" / "ornith-1.0-dflash-gguf" / "hubrelease.yaml"
)
_SEED_ARMS = {
    "A": ("A, upstream", "bench/Ornith-DFLASH-rt-f16-rope1e7.gguf", "7b9f2654dfc07c0a9197da3e6414db58202a60008a24f76387a52136f302134a"),
    "B": ("B, retrained", "Ornith-DFLASH-m1-f16.gguf", "186b73dce2046b072a67361ddb8f09992761eed0171f2cfbb1d251fb8f943d6e"),
}  # fmt: skip


def _seed_spec(tmp_path: Path, *, drafters: bool = True, engine: str = "ik_llama.cpp") -> Path:
    """Seed 001's spec with its A/B arms named by file and sha256 (as the README's example names them)."""
    arms = [
        {
            "id": arm,
            "label": label,
            **({"drafter": {"name": label, "file": file, "sha256": sha}} if drafters else {}),
        }
        for arm, (label, file, sha) in _SEED_ARMS.items()
    ]
    spec = {
        "run": {
            "hardware": {"id": "gb10", "name": "NVIDIA GB10"},
            "engine": {"name": engine},
            "target": {"repo_id": "paragon-of-brah/Ornith-1.0-397B-DFLASH-GGUF"},
        },
        "comparisons": [
            {"id": "retrain-ab", "title": "Retrained", "baseline": "A", "treatment": "B", "arms": arms, "primary_setting": 3}
        ],
    }  # fmt: skip
    return write_spec(tmp_path / "spec.json", spec)


def _swapped(tmp_path: Path) -> Path:
    """Seed 001's A/B rows with every arm label swapped (A <-> B); drafter files and digests untouched."""
    with SEED_001[0].open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row["arm"] = {"A": "B", "B": "A"}[row["arm"]]
    return write_csv(tmp_path / "swapped.csv", rows, list(rows[0]))


def test_swapped_arm_labels_are_refused_against_the_arms_the_spec_names_by_file_and_digest(
    tmp_path: Path,
) -> None:
    out = tmp_path / "e.json"
    args: list[str | Path] = [
        "build",
        "eval",
        _swapped(tmp_path),
        "--spec",
        _seed_spec(tmp_path),
        "--check-digests",
        SEED_MANIFEST,
    ]
    code, _, err = run_cli(*args, "--out", out)
    assert code == 2, err  # was 0, with the primary flipped from +1.189 to -1.189
    assert "comparison 'retrain-ab': the rows of arm 'A' ran file Ornith-DFLASH-m1-f16.gguf" in err
    assert "the rows of arm 'B' match it, so the arm labels look swapped" in err
    assert "fix the rows' arm column or the spec's arms" in err
    assert len(err.splitlines()) == 1 and not out.exists()


def test_arms_given_in_a_spec_keep_the_rows_drafter_file_digest_and_boots(tmp_path: Path) -> None:
    spec = load_spec(_seed_spec(tmp_path, drafters=False))
    evaluation = build_evaluation([Source(SEED_001[0])], spec)
    arms = {arm.id: arm for arm in evaluation.comparisons[0].arms}
    assert [arms["A"].boots, arms["B"].boots] == [[1, 4], [2, 3]]
    drafters = {arm: (a.drafter.file, a.drafter.sha256_prefix) for arm, a in arms.items() if a.drafter}
    assert drafters == {
        "A": ("bench/Ornith-DFLASH-rt-f16-rope1e7.gguf", "7b9f2654dfc07c0a"),
        "B": ("Ornith-DFLASH-m1-f16.gguf", "186b73dce2046b07"),
    }
    # A stated drafter keeps its full digest; the rows add nothing it contradicts.
    stated = build_evaluation([Source(SEED_001[0])], load_spec(_seed_spec(tmp_path)))
    assert [a.drafter.sha256 for a in stated.comparisons[0].arms if a.drafter] == [
        sha for _, _, sha in _SEED_ARMS.values()
    ]


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_llama_server_rows_under_another_engine_are_refused_with_the_fix(tmp_path: Path, engine: str) -> None:
    code, _, err = run_cli(
        "build", "eval", SEED_001[0], "--spec", _seed_spec(tmp_path, engine=engine), "--out", tmp_path / "e.json"
    )  # fmt: skip
    assert code == 2
    assert (
        f"run.engine.name is {engine!r}, but this llama-server rows output was served by llama-server" in err
    )
    assert "set run.engine.name to 'llama-server' in the spec, or leave run.engine out" in err


def test_vllm_results_under_an_sglang_spec_are_refused_with_the_fix(tmp_path: Path) -> None:
    path = write_json(tmp_path / "dflash2.json", vllm_result())
    spec = eval_spec(configurations=[{"id": "dflash2", "label": "DFlash2", "method": "speculative"}])
    code, _, err = run_cli(
        "build", "eval", path, "--spec", write_spec(tmp_path / "spec.json", spec), "--out", tmp_path / "e.json"
    )  # fmt: skip
    assert code == 2, err  # was 0, and the card said "Engine sglang"
    assert (
        f"{path}:1: engine: run.engine.name is 'sglang', but this vllm bench serve output was served by vllm"
        in err
    )
    assert "set run.engine.name to 'vllm'" in err
    spec["run"]["engine"] = {"name": "vllm"}
    code, _, err = run_cli(
        "build", "eval", path, "--spec", write_spec(tmp_path / "spec.json", spec), "--out", tmp_path / "e.json"
    )  # fmt: skip
    assert code == 0, err


def test_an_engine_the_content_does_not_prove_is_taken_as_stated(tmp_path: Path) -> None:
    # Without spec_decode_* counters, vllm bench serve may have measured any OpenAI-compatible server.
    path = write_json(tmp_path / "run.json", vllm_result(spec_decode=None))
    spec = eval_spec(configurations=[{"id": "run", "label": "run", "method": "autoregressive"}])
    evaluation = build_evaluation([Source(path)], EvaluationSpec.model_validate(spec))
    assert evaluation.run.engine.name == "sglang"
