"""`hubrelease build eval` end to end: output, provenance, and one-line refusals that write nothing."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hubrelease.builders.evaluation import Source, build_evaluation
from hubrelease.errors import BuildError
from hubrelease.evaluation import load_evaluation
from hubrelease.evaluation.spec import load_spec
from tests.factories.bench_runs import (
    ab_rows,
    ab_spec_parts,
    eval_spec,
    llama_rows,
    sglang_line,
    write_csv,
    write_jsonl,
    write_spec,
)
from tests.factories.cli import invoke


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    write_jsonl(Path("ar.jsonl"), [sglang_line(max_concurrency=c) for c in (1, 4)])
    write_jsonl(
        Path("df.jsonl"), [sglang_line(max_concurrency=c, tag="dflash2", accept_length=4.0) for c in (1, 4)]
    )
    write_csv(Path("ab.csv"), ab_rows())
    write_jsonl(Path("sweep.jsonl"), llama_rows(arms={"S": [1]}, n_max_values=(0, 3)))
    write_spec(Path("spec.json"), eval_spec(**ab_spec_parts()))
    Path("prompts.jsonl").write_text('{"prompt": "hi"}\n', encoding="utf-8")
    return tmp_path


def _build(*extra: str) -> tuple[int, str, str]:
    args = ["build", "eval", "autoregressive=ar.jsonl", "df.jsonl", "ab.csv", "sweep.jsonl"]
    result = invoke([*args, "--spec", "spec.json", "--out", "out.json", *extra])
    return result.exit_code, result.stdout, result.stderr


def test_build_eval_writes_a_valid_evaluation_with_provenance(workdir: Path) -> None:
    code, stdout, stderr = _build("--prompts", "prompts.jsonl", "--json")
    assert code == 0, stderr
    evaluation = load_evaluation("out.json")
    assert [(c.configuration, c.concurrency) for c in evaluation.cells] == [
        ("autoregressive", 1),
        ("autoregressive", 4),
        ("dflash2", 1),
        ("dflash2", 4),
    ]
    assert [c.id for c in evaluation.comparisons] == ["retrain-ab", "spec-on-off"]
    assert evaluation.comparisons[0].primary is not None
    assert evaluation.comparisons[0].primary.setting == 3
    assert evaluation.run.prompt_set.sha256 == hashlib.sha256(b'{"prompt": "hi"}\n').hexdigest()
    sources = evaluation.provenance.sources
    assert [(s.path, s.records) for s in sources] == [
        ("ar.jsonl", 2),
        ("df.jsonl", 2),
        ("ab.csv", 64),
        ("sweep.jsonl", 16),
    ]
    assert sources[2].sha256 == hashlib.sha256(Path("ab.csv").read_bytes()).hexdigest()
    report = json.loads(stdout)
    assert report["schema_version"] == 1
    assert (report["cells"], report["sweeps"]) == (4, ["n-max-sweep"])


def test_human_output_is_one_line_on_stderr(workdir: Path) -> None:
    code, stdout, stderr = _build()
    assert code == 0
    assert stdout == ""
    assert stderr.splitlines() == [
        "warning: 4 runs carry no server_info (bench_serving could not read /server_info): their configuration"
        " is not checked against the server",
        "warning: accept_length of 2 runs is the server's lifetime average (warmup and earlier runs included)"
        " unless bench_serving ran with --flush-cache; pass --flushed-cache if it did",
        "wrote out.json: 4 cells, 2 comparisons, 1 sweeps from 4 files",
    ]
    code, stdout, stderr = _build("--flushed-cache")
    assert stderr.splitlines()[1:] == ["wrote out.json: 4 cells, 2 comparisons, 1 sweeps from 4 files"]


def _spec_with(where: tuple[str | int, ...], value: object) -> dict[str, Any]:
    """The workdir's spec with one value replaced (``where`` is the key path)."""
    spec = eval_spec(**ab_spec_parts())
    node: Any = spec
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    return spec


@pytest.mark.parametrize(
    ("break_it", "line"),
    [
        (
            lambda: Path("df.jsonl").write_text("{oops\n"),
            "error: df.jsonl:1: malformed JSON line: Expecting property name enclosed in double quotes",
        ),
        (
            lambda: write_jsonl(Path("ar.jsonl"), [sglang_line(duration=0.0)]),
            "error: ar.jsonl:1: duration: zero-duration run (0 s)",
        ),
        (
            lambda: Path("ab.csv").write_text("prompt_id,arm\n" + "x" * 131_073 + ",A\n"),
            "error: ab.csv:2: malformed CSV: field larger than field limit (131072)",
        ),
        (
            lambda: write_jsonl(Path("ar.jsonl"), [{**sglang_line(), "median_tpot_ms": 1e-310}]),
            "error: ar.jsonl:1: median_tpot_ms: throughput is not a finite number",
        ),
        (
            lambda: write_spec(
                Path("spec.json"),
                _spec_with(("configurations", 1), {"id": "autoregressive", "label": "x", "method": "x"}),
            ),
            "error: spec.json:1: (top level): configuration ids repeat: ['autoregressive', 'autoregressive']",
        ),
        (lambda: Path("sweep.jsonl").write_text(""), "error: sweep.jsonl: no benchmark records in file"),
        (
            lambda: Path("spec.json").write_text('{"schema_version": 1}'),
            "error: no hardware: pass --hardware NAME (or run.hardware in a --spec file)",
        ),
        (
            lambda: write_csv(
                Path("ab.csv"),
                [
                    r
                    for r in llama_rows(arms={"A": [1], "B": [2]}, n_max_values=(3,))
                    if r["prompt_id"] != "p2" or r["arm"] != "B"
                ],
            ),
            "error: ab.csv:4: prompt_id: prompt 'p2' at n_max 3 has rows in arm A only, none in arm B",
        ),
        (
            lambda: write_spec(Path("spec.json"), _spec_with(("comparisons", 0, "treatment"), "A")),
            "error: spec.json:44: comparisons[0]: baseline and treatment are the same arm 'A'",
        ),
        (
            lambda: write_spec(
                Path("spec.json"), _spec_with(("comparisons", 0, "arms", 1), {"id": "A", "label": "again"})
            ),
            "error: spec.json:44: comparisons[0]: arm ids repeat: ['A', 'A']",
        ),
        (
            lambda: write_spec(Path("spec.json"), _spec_with(("sweeps", 0, "pairs", 0, "treatment"), 0)),
            "error: spec.json:78: sweeps[0].pairs[0]: baseline and treatment are the same setting 0",
        ),
        (
            lambda: write_spec(Path("spec.json"), _spec_with(("comparisons", 0, "primary_setting"), 4)),
            "error: comparison 'retrain-ab': no rows at the primary n_max 4 (measured: 0, 3)",
        ),
        (
            lambda: write_csv(
                Path("ab.csv"), [*llama_rows(arms={"A": [1], "B": [2]}), llama_rows(arms={"A": [1]})[0]]
            ),
            "error: ab.csv:34: repetition: repeats prompt 'p1', arm 'A', boot 1, repetition 1, n_max 0 (first at ab.csv:2)",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2_and_nothing_written(
    workdir: Path, break_it: Callable[[], object], line: str
) -> None:
    Path("out.json").write_text("previous\n", encoding="utf-8")
    break_it()
    code, _, stderr = _build()
    assert (code, stderr) == (2, line + "\n")
    assert Path("out.json").read_text(encoding="utf-8") == "previous\n"
    assert sorted(p.name for p in workdir.iterdir() if p.name.startswith(".")) == []


def test_help_shows_an_example() -> None:
    result = invoke(["build", "eval", "--help"])
    assert result.exit_code == 0
    assert "hubrelease build eval autoregressive=runs/ar.jsonl" in result.stdout


def test_a_computed_value_the_schema_refuses_is_a_build_error_not_a_traceback(workdir: Path) -> None:
    spec = load_spec("spec.json")
    twice = spec.model_construct(**{**dict(spec), "configurations": [spec.configurations[0]] * 2})
    with pytest.raises(BuildError) as info:
        build_evaluation(
            [Source.parse("autoregressive=ar.jsonl"), Source.parse("ab.csv"), Source.parse("sweep.jsonl")],
            twice,
        )
    assert str(info.value) == (
        "computed an invalid evaluation: (top level): configuration ids repeat: ['autoregressive', 'autoregressive']"
    )


def test_spec_errors_come_all_at_once_with_lines_and_no_pydantic_names(workdir: Path) -> None:
    Path("spec.yaml").write_text(
        "schema_version: 1\n"
        "run:\n"
        "  hardware: {id: h, name: H}\n"
        "  target: {repo_id: acme/t, revision: main}\n"
        "comparisons:\n"
        "  - id: ab\n"
        "    title: AB\n"
        "    baseline: A\n"
        "    treatment: B\n"
        "    arms: [x]\n"
        "    primary_setting: [3]\n"
        "colour: blue\n",
        encoding="utf-8",
    )
    result = invoke(["build", "eval", "ab.csv", "--spec", "spec.yaml", "--out", "out.json"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: spec.yaml:4: run.target.revision: 'main' is not a 40-hex commit",
        "error: spec.yaml:10: comparisons[0].arms[0]: Input should be a valid dictionary",
        "error: spec.yaml:11: comparisons[0].primary_setting: Input should be a valid integer",
        "error: spec.yaml:12: colour: unknown key (allowed keys are listed by `hubrelease schema --eval-spec`)",
    ]


def test_schema_eval_spec_prints_the_spec_schema() -> None:
    result = invoke(["schema", "--eval-spec"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["$id"] == "https://hubrelease.dev/schema/evaluation-spec-v1.json"
    assert set(schema["properties"]) == {
        "schema_version",
        "title",
        "run",
        "configurations",
        "notes",
        "comparisons",
        "sweeps",
        "prompt_categories",
    }
    assert schema["$defs"]["SweepSpec"]["properties"]["fit_range"]["description"].startswith(
        "[min, max] settings"
    )


def test_a_hostile_spec_is_one_line(workdir: Path) -> None:
    levels = ["a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    levels += [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 10)}]" for i in range(6)]
    Path("spec.yaml").write_text("\n".join(levels) + "\n", encoding="utf-8")
    result = invoke(["build", "eval", "ab.csv", "--spec", "spec.yaml", "--out", "out.json"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: spec.yaml:6: f: YAML aliases expand to more than")
    assert len(result.stderr.splitlines()) == 1


FIXTURES = Path(__file__).resolve().parents[1] / "evaluation" / "fixtures"


def test_seed_001_layout_end_to_end_with_one_line_of_input(tmp_path: Path) -> None:
    seed = FIXTURES / "seed001"
    manifest = (
        Path(__file__).resolve().parents[2] / "manifests" / "ornith-1.0-dflash-gguf" / "hubrelease.yaml"
    )
    out = tmp_path / "evaluation.json"
    args = [
        "build", "eval", str(seed / "results-retrain-ab-20260809.csv"), str(seed / "results-m1q4-20260809.csv"),
        "--hardware", "NVIDIA GB10", "--target", "paragon-of-brah/Ornith-1.0-397B-DFLASH-GGUF",
        "--baseline", "A", "--treatment", "B", "--primary", "n_max=3", "--fit-range", "1:12",
        "--check-digests", str(manifest), "--out", str(out), "--json",
    ]  # fmt: skip
    result = invoke(args)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["comparisons"] == ["B-vs-A", "m1-q4-on-off"]
    evaluation = load_evaluation(out)
    primary = evaluation.comparisons[0].primary
    assert primary is not None
    assert (primary.setting, f"[{primary.ci95.low:.3f}, {primary.ci95.high:.3f}]") == (3, "[0.360, 2.270]")
    fit = evaluation.sweeps[0].step_time_fit
    assert fit is not None and (fit.setting_min, fit.setting_max, fit.points) == (1, 12, 7)
