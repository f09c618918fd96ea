"""Cards render byte-for-byte from manifest + evaluation files; bad input fails with one located line."""

from __future__ import annotations

import functools
import json
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
import pytest
import yaml

import hubrelease.card.render as render_module
from hubrelease.card import builtin_templates, check_card, render_card
from hubrelease.card.render import BUILTIN_DIR
from hubrelease.errors import CheckFailed, InputError, ManifestError
from tests.factories.bench_runs import eval_spec, sglang_line, write_jsonl, write_spec
from tests.factories.cards import (
    ab_evaluation,
    gguf_card,
    matrix_evaluation,
    release_pins,
    safetensors_card,
    write_card_release,
)
from tests.factories.cli import invoke

GOLDEN = Path(__file__).parent / "golden"


def _invoke(*args: str) -> Any:
    return invoke(["render-card", *args])


def _edit(manifest: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    change(data)
    manifest.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def _gguf_artifacts(data: dict[str, Any]) -> None:
    data["artifacts"][0].update(
        role="recommended", composition={"F32": 26, "Q8_0": 24, "IQ4_KSS": 7, "IQ3_KS": 12}
    )
    data["artifacts"][0]["lint"] = True
    data["artifacts"].append({"path": "bench/a.gguf", "reported_size": "2.59 GB", "role": "benchmark"})


def _gguf_release(root: Path, evaluations: dict[str, dict[str, Any]]) -> Path:
    manifest = write_card_release(root, card=gguf_card(), evaluations=evaluations)
    _edit(manifest, _gguf_artifacts)
    return manifest


@pytest.mark.parametrize("template", ["safetensors_drafter", "gguf_drafter", "dataset_release"])
def test_builtin_template_golden(template: str, tmp_path: Path, golden: Callable[[Path, str], None]) -> None:
    if template == "gguf_drafter":
        manifest = _gguf_release(
            tmp_path, {"eval/ab.json": ab_evaluation(), "eval/matrix.json": matrix_evaluation()}
        )
    elif template == "dataset_release":
        card = {"template": "dataset_release", "summary": "Generated conversations."}
        manifest = write_card_release(tmp_path, card=card, release={"repo_type": "dataset"}, evaluations={})
    else:
        manifest = write_card_release(tmp_path)
    golden(GOLDEN / f"{template}.md", render_card(manifest))


def test_output_is_deterministic_and_independent_of_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = write_card_release(tmp_path / "release")
    first = render_card(manifest)
    monkeypatch.chdir(tmp_path / "release")
    assert render_card("hubrelease.yaml") == first
    assert first.endswith("\n") and not first.endswith("\n\n") and "\r" not in first


def test_claims_are_computed_from_the_evaluation(tmp_path: Path) -> None:
    text = render_card(write_card_release(tmp_path))
    assert (
        "115.2 tok/s against 80.0 tok/s for Autoregressive: +44.0% over Autoregressive at concurrency 1"
        in text
    )
    assert "| DFlash2 | 1 | 115.2 | 116.5 | 101.0 ms | 8.68 ms | 4.02 |" in text


def test_ab_table_marks_the_primary_endpoint(tmp_path: Path) -> None:
    text = render_card(_gguf_release(tmp_path, {"eval/ab.json": ab_evaluation()}))
    assert "| 3 | 21.63 | 22.95 | +1.315 | 1.142 | [0.360, 2.270] | 8 | **primary** |" in text
    assert "| 0 | 18.03 | 18.07 | +0.039 | 0.072 | [-0.021, 0.099] | 8 | secondary |" in text
    assert (
        "**Primary endpoint (n_max = 3): +1.315 output tok/s, +6.1%, 95% CI [0.360, 2.270] (+1.7% to +10.5%).**"
        in text
    )
    assert "a 6.1% increase (paired difference +1.315" in text
    assert "| tok/s | 18.71 | 25.65 |" in text and "| output tokens per round | n/a | 3.06 |" in text


def test_usage_uses_pins_and_quotes_values(tmp_path: Path) -> None:
    text = render_card(write_card_release(tmp_path))
    assert "  --revision 0f0b1b59b879ccde1353e6ebd0fb10c204d4c544 \\\n" in text
    assert "  --speculative-num-draft-tokens 10 --trust-remote-code\n```" in text
    manifest = _gguf_release(tmp_path / "g", {"eval/ab.json": ab_evaluation()})
    assert "  --draft-params '-wgt 17' --parallel 1\n" in render_card(manifest)


def test_check_passes_then_fails_after_a_digest_changes(tmp_path: Path) -> None:
    manifest = write_card_release(tmp_path)
    result = _invoke(str(manifest))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == render_card(manifest)
    assert _invoke(str(manifest), "--check").exit_code == 0

    _edit(manifest, lambda d: d["artifacts"][0].update(sha256="0" * 64))
    result = _invoke(str(manifest), "--check")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1] == (
        f"error: {tmp_path / 'README.md'}: card differs from the manifest; run `hubrelease render-card`"
    )
    with pytest.raises(CheckFailed):
        check_card(manifest).raise_if_stale()


def test_diff_prints_a_unified_diff_and_writes_nothing(tmp_path: Path) -> None:
    manifest = write_card_release(tmp_path)
    _invoke(str(manifest))
    before = (tmp_path / "README.md").read_text(encoding="utf-8")
    _edit(manifest, lambda d: d["artifacts"][0].update(sha256="0" * 64))
    result = _invoke(str(manifest), "--diff")
    assert result.exit_code == 0
    assert f"+{'0' * 64}  model.safetensors" in result.output
    assert f"--- {tmp_path / 'README.md'} (on disk)" in result.output
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == before


def test_missing_card_fails_check(tmp_path: Path) -> None:
    result = _invoke(str(write_card_release(tmp_path)), "--check")
    assert result.exit_code == 1
    assert result.output.splitlines()[-1].endswith("README.md: card missing; run `hubrelease render-card`")


def test_json_output(tmp_path: Path) -> None:
    manifest = write_card_release(tmp_path)
    result = _invoke(str(manifest), "--out", str(tmp_path / "card.md"), "--json")
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["schema_version"] == 1
    assert payload["status"] == "written"
    assert payload["path"] == str(tmp_path / "card.md")
    assert payload["bytes"] == len((tmp_path / "card.md").read_bytes())
    assert re.fullmatch(r"[0-9a-f]{64}", payload["sha256"])


def test_missing_variable_names_template_line_and_variable(tmp_path: Path) -> None:
    (tmp_path / "my.md.j2").write_text(
        "# {{ title }}\n\n{{ release.repo_id }} {{ nothing_here }}\n", encoding="utf-8"
    )
    manifest = write_card_release(tmp_path, card={"template": "my.md.j2"})
    result = _invoke(str(manifest))
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"error: {tmp_path / 'my.md.j2'}:3: undefined variable 'nothing_here' ('nothing_here' is undefined)"
    ]
    assert "Traceback" not in result.output


def test_missing_attribute_in_a_partial_points_at_the_partial(tmp_path: Path) -> None:
    (tmp_path / "_bad.md.j2").write_text("ok\n{{ release.no_such_field }}\n", encoding="utf-8")
    (tmp_path / "my.md.j2").write_text("{% include '_bad.md.j2' %}\n", encoding="utf-8")
    manifest = write_card_release(tmp_path, card={"template": "my.md.j2"})
    with pytest.raises(InputError) as caught:
        render_card(manifest)
    assert (caught.value.path, caught.value.line) == (str(tmp_path / "_bad.md.j2"), 2)
    assert "'no_such_field'" in caught.value.message


def test_user_template_can_use_builtin_partials_and_filters(tmp_path: Path) -> None:
    (tmp_path / "mine.md.j2").write_text(
        '{% from "_checksums.md.j2" import checksums_block %}{{ claims.headline.relative | pct(1, True) }}\n'
        "{{ checksums_block(checksums) }}",
        encoding="utf-8",
    )
    text = render_card(write_card_release(tmp_path, card={**safetensors_card(), "template": "mine.md.j2"}))
    assert "\n+44.0%\n```text\n" in text


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        (
            lambda d: d["release"].update(license="apache2"),
            "release.license",
            "'apache2' is not a Hub licence id",
        ),
        (
            lambda d: d["pins"]["targets"][0].update(license="MIT"),
            "pins.targets[0].license",
            "'MIT' is not a Hub licence id",
        ),
        (
            lambda d: d["release"].update(base_model_relation="quantised"),
            "release.base_model_relation",
            "Input should be 'adapter', 'merge', 'quantized' or 'finetune'",
        ),
        (
            lambda d: d["release"].pop("base_model_relation"),
            "release.base_model",
            "set base_model_relation too (adapter, merge, quantized, finetune); the Hub would guess it",
        ),
        (lambda d: d["card"].update(template="nope"), "card.template", "'nope' is not a built-in template"),
        (
            lambda d: d["card"]["usage"][0].update(engine="vllm"),
            "card.usage[0].engine",
            "'vllm' is not in pins.engines ['sglang']",
        ),
        (
            lambda d: d["card"]["claims"][0].update(configuration="eagle3"),
            "card.claims[0].configuration",
            "eval/matrix.json has no cell for configuration 'eagle3' at concurrency 1",
        ),
        (
            lambda d: d["pins"]["targets"][0].update(revision=None, unpinned=True),
            "card.usage[0].flags[1].value_from",
            "target acme/target has no pinned revision to show",
        ),
    ],
)
def test_bad_manifest_names_the_field(
    tmp_path: Path, change: Callable[[dict[str, Any]], None], field: str, message: str
) -> None:
    manifest = write_card_release(tmp_path)
    _edit(manifest, change)
    with pytest.raises(ManifestError) as caught:
        render_card(manifest)
    assert caught.value.field == field
    assert message in caught.value.message
    result = _invoke(str(manifest))
    assert result.exit_code == 2
    assert len(result.output.splitlines()) == 1 and f"{field}: " in result.output


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (lambda d: d["card"]["usage"][0].update(engine="vllm"), "- engine: vllm"),
        (lambda d: d["pins"]["datasets"][0].update(license="CC-BY"), "license: CC-BY"),
    ],
)
def test_errors_carry_the_yaml_line(
    tmp_path: Path, change: Callable[[dict[str, Any]], None], line: str
) -> None:
    manifest = write_card_release(tmp_path)
    _edit(manifest, change)
    with pytest.raises(ManifestError) as caught:
        render_card(manifest)
    lines = manifest.read_text(encoding="utf-8").splitlines()
    assert caught.value.line is not None
    assert lines[caught.value.line - 1].strip() == line


def test_builtin_templates_ship_with_the_package() -> None:
    assert builtin_templates() == ["dataset_release", "gguf_drafter", "safetensors_drafter"]
    # hubrelease/templates is the repo's top-level templates/ (a symlink in the checkout, a copy in a wheel).
    assert BUILTIN_DIR.resolve() == (Path(__file__).resolve().parents[2] / "templates")


def test_comparison_claim_errors_name_the_claim_field(tmp_path: Path) -> None:
    manifest = _gguf_release(tmp_path, {"eval/ab.json": ab_evaluation()})
    _edit(manifest, lambda d: d["card"]["claims"][0].update(comparison="nope"))
    with pytest.raises(ManifestError) as caught:
        render_card(manifest)
    assert caught.value.field == "card.claims[0].comparison"
    assert caught.value.message == "eval/ab.json has no comparison 'nope' (comparisons: ['retrain-ab'])"
    _edit(manifest, lambda d: d["card"]["claims"][0].update(comparison="retrain-ab", setting=7))
    with pytest.raises(ManifestError, match=r"name a row of 'retrain-ab' by setting \(one of \[0, 3\]\)"):
        render_card(manifest)


def test_without_a_card_section_the_repo_type_picks_the_template(tmp_path: Path) -> None:
    model = write_card_release(tmp_path / "m")
    _edit(model, lambda d: d.pop("card"))
    assert "\n## Usage\n" not in render_card(model) and "\n## Targets\n" in render_card(model)
    dataset = write_card_release(tmp_path / "d", release={"repo_type": "dataset"}, evaluations={})
    _edit(dataset, lambda d: d.pop("card"))
    text = render_card(dataset)
    assert text.startswith("---\npretty_name: Tiny drafter\nlicense: apache-2.0\nsource_datasets:\n")
    assert "\n## Targets\n" not in text


def test_check_json_reports_stale(tmp_path: Path) -> None:
    manifest = write_card_release(tmp_path)
    (tmp_path / "README.md").write_text("old\n", encoding="utf-8")
    result = _invoke(str(manifest), "--check", "--json")
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["status"] == "stale"
    assert payload["diff"].startswith(f"--- {tmp_path / 'README.md'} (on disk)\n")


@pytest.mark.parametrize(
    ("template", "line", "message"),
    [
        ("# ok\n{% for x in files %}\n", 2, "template syntax: Unexpected end of template."),
        (
            "# ok\n\n{{ title | num }}\n",
            3,
            "template failed: ValueError: Unknown format code 'f' for object of type 'str'",
        ),
        ("{% include '_missing.md.j2' %}\n", 1, "template '_missing.md.j2' not found"),
        ("# ok\n{{ 1 / 0 }}\n", 2, "template failed: ZeroDivisionError: division by zero"),
        ("# ok\n{% include 'my.md.j2' %}\n", 2, "template failed: RecursionError: maximum recursion depth"),
    ],
)
def test_template_errors_point_at_file_and_line(
    tmp_path: Path, template: str, line: int, message: str
) -> None:
    (tmp_path / "my.md.j2").write_text(template, encoding="utf-8")
    manifest = write_card_release(tmp_path, card={"template": "my.md.j2"})
    with pytest.raises(InputError) as caught:
        render_card(manifest)
    assert (caught.value.path, caught.value.line) == (str(tmp_path / "my.md.j2"), line)
    assert caught.value.message.startswith(message)


def test_header_pins_are_listed_with_what_they_do_not_prove(tmp_path: Path) -> None:
    pins = release_pins()
    header = "ab" * 32
    pins["targets"][0]["files"] = [{"path": "t-00001-of-00005.gguf", "size": 10, "header_sha256": header}]
    text = render_card(write_card_release(tmp_path, extra={"pins": pins}))
    assert f"  - `t-00001-of-00005.gguf`, 10 bytes, header sha256 `{header}`\n" in text
    assert "it does not prove the tensor data, which only a full sha256 does." in text


_OTHER = "1111111111111111111111111111111111111111"
_NOTES = {
    "target.revision": "measured on the previous upload of the same weights",
    "hardware": "measured on the lab machine, not the pinned one",
    "engine.binaries": "a rebuild of the pinned commit",
    "drafter": "the drafter before its last re-export",
}


def test_declared_deviations_print_their_note_beside_the_value(tmp_path: Path) -> None:
    evaluation = matrix_evaluation()
    run = evaluation["run"]
    run["target"]["revision"] = _OTHER
    run["hardware"]["name"] = "Lab GPU"
    run["engine"]["binaries"] = ["deadbeefdeadbeef"]
    evaluation["configurations"][1]["drafter"] = {
        "name": "d",
        "file": "model.safetensors",
        "sha256_prefix": "0" * 16,
    }
    manifest = _gguf_release(tmp_path, {"eval/ab.json": ab_evaluation(), "eval/matrix.json": evaluation})
    deviations = [{"field": field, "note": note} for field, note in _NOTES.items()]
    entry = {"path": "eval/matrix.json", "deviations": deviations}
    _edit(manifest, lambda d: d.update(evaluations=["eval/ab.json", entry]))
    result = _invoke(str(manifest))
    assert result.exit_code == 0, result.stderr
    card = (tmp_path / "README.md").read_text(encoding="utf-8")
    noted = "(differs from the release's pins by design: {})".format
    assert f"target `acme/target` at `{_OTHER}` (NVFP4) {noted(_NOTES['target.revision'])};" in card
    assert f"Hardware: Lab GPU {noted(_NOTES['hardware'])}." in card
    assert f"server binary `deadbeefdeadbeef` {noted(_NOTES['engine.binaries'])};" in card
    assert f"- DFlash2: drafter d {noted(_NOTES['drafter'])}." in card


def test_a_card_built_from_absolute_paths_holds_none(tmp_path: Path) -> None:
    release = tmp_path / "release"
    manifest = _gguf_release(
        release, {"eval/ab.json": ab_evaluation(), "eval/matrix.json": matrix_evaluation()}
    )
    raw = tmp_path / "raw"
    # Without --output-details bench_serving cannot count failures: the warning names the file.
    runs = [
        sglang_line(max_concurrency=c, tag=t, details=False)
        for t in ("autoregressive", "dflash2")
        for c in (1, 4)
    ]
    source = write_jsonl(raw / "runs.jsonl", runs)
    spec = write_spec(raw / "spec.json", eval_spec())
    out = release / "eval" / "matrix.json"
    built = invoke(
        ["build", "eval", str(source), "--spec", str(spec), "--out", str(out), "--allow-incomplete"]
    )
    assert built.exit_code == 0, built.stderr
    evaluation = json.loads(out.read_text(encoding="utf-8"))
    assert evaluation["provenance"]["sources"][0]["path"] == "../../raw/runs.jsonl"
    assert evaluation["provenance"]["warnings"][0].startswith(
        "../../raw/runs.jsonl:1: failed requests cannot"
    )
    _edit(manifest, lambda d: d["card"].update(charts=True))
    rendered = _invoke(str(manifest.resolve()))
    assert rendered.exit_code == 0, rendered.stderr
    written = [p for p in release.rglob("*") if p.is_file()]
    assert {"README.md", "matrix.json"} <= {p.name for p in written} and any(
        p.suffix == ".svg" for p in written
    )
    assert "Recorded by the build: ../../raw/runs.jsonl:1:" in (release / "README.md").read_text(
        encoding="utf-8"
    )
    assert [p for p in written if str(tmp_path) in p.read_text(encoding="utf-8", errors="replace")] == []


def test_an_arm_known_by_its_rows_digest_prefix_prints_the_prefix(tmp_path: Path) -> None:
    # build eval keeps seed 001's drafter_sha16 as sha256_prefix; the arm table printed n/a for it.
    evaluation = ab_evaluation()
    drafter = evaluation["comparisons"][0]["arms"][1]["drafter"]
    drafter["sha256_prefix"] = drafter.pop("sha256")[:16]
    card_section = {**gguf_card(), "usage": []}
    manifest = write_card_release(tmp_path, card=card_section, evaluations={"eval/ab.json": evaluation})
    assert f"| retrained | `b.gguf` | {drafter['sha256_prefix']} |" in render_card(manifest)


@pytest.mark.parametrize(
    ("step_time_ms", "method"),
    [(None, "2 settings; the fit as its source states it"), (93.8, "least squares over 2 settings")],
)
def test_a_fit_says_least_squares_only_when_it_was_computed(
    step_time_ms: float | None, method: str, tmp_path: Path
) -> None:
    """A transcribed fit (no step times) prints as its source gives it, with no method the source never names."""
    evaluation = ab_evaluation()
    residuals = [
        {"setting": k, "step_time_ms": step_time_ms, "residual_ms": r, "in_range": True}
        for k, r in ((1, -2.9), (3, -1.0))
    ]
    evaluation["sweeps"][0]["step_time_fit"] = {
        "setting_min": 1,
        "setting_max": 3,
        "points": 2,
        "intercept_ms": 90.9,
        "slope_ms": 14.7,
        "residuals": residuals,
    }
    text = render_card(_gguf_release(tmp_path, {"eval/ab.json": evaluation}))
    assert f"over n_max = 1 to 3 ({method})." in text
    assert text.count("least squares") == (step_time_ms is not None)


def test_an_interval_without_a_standard_deviation_is_not_called_student_t(tmp_path: Path) -> None:
    """The source gives the interval but no sd: the card cannot say how it was computed."""
    evaluation = ab_evaluation()
    with_sd = render_card(_gguf_release(tmp_path / "sd", {"eval/ab.json": evaluation}))
    assert "95% Student-t interval of the mean paired difference." in with_sd
    for row in evaluation["comparisons"][0]["rows"]:
        row["sd_difference"] = None
    text = render_card(_gguf_release(tmp_path / "no-sd", {"eval/ab.json": evaluation}))
    assert "95% interval of the mean paired difference as its source states it." in text
    assert "Student-t" not in text


def test_a_table_dated_on_its_own_says_so_above_itself_only(tmp_path: Path) -> None:
    """A source that dates one measurement: the date stands above that table, not above the run."""
    evaluation = ab_evaluation()
    evaluation["run"]["date"] = None
    evaluation["sweeps"][0]["date"] = "2026-08-09"
    text = render_card(_gguf_release(tmp_path, {"eval/ab.json": evaluation}))
    assert text.count("Measured 2026-08-09.") == 1
    assert "Measured 2026-08-09. Drafter" in text or "Measured 2026-08-09. 1 server boot" in text


def test_templates_compiled_once_are_not_compiled_by_the_next_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh process finds the compiled templates in Jinja's bytecode cache; code of another
    identity (here: another hubrelease version) never loads them and compiles its own."""
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # Jinja's per-user folder under it
    compiled: list[str] = []
    real = render_module._CardSandbox.compile

    def counted(self: jinja2.Environment, source: Any, name: str | None = None, *args: Any) -> Any:
        compiled.append(str(name))
        return real(self, source, name, *args)

    monkeypatch.setattr(render_module._CardSandbox, "compile", counted)
    fresh = functools.lru_cache(maxsize=16)(render_module.environment.__wrapped__)
    monkeypatch.setattr(render_module, "environment", fresh)  # the process-wide cache stays untouched
    manifest = write_card_release(tmp_path / "release")
    first = render_card(manifest)
    assert compiled
    for version, compiles in (("same", False), ("other", True)):
        if version == "other":
            monkeypatch.setattr(render_module, "__version__", "0.0.0+other")
        fresh.cache_clear()  # as a new process starts
        compiled.clear()
        assert render_card(manifest) == first
        assert bool(compiled) is compiles
