"""Loading evaluation files: one InputError line naming the file and field, and the exported schema."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hubrelease.errors import InputError
from hubrelease.evaluation import evaluation_json_schema, load_evaluation
from tests.factories.cli import invoke

SPARK = Path(__file__).resolve().parents[2] / "manifests" / "ornith-1.5-dflash2" / "spark-evaluation.json"


def _broken(tmp_path: Path, edit: Callable[[dict[str, Any]], object]) -> Path:
    data = json.loads(SPARK.read_text(encoding="utf-8"))
    edit(data)
    path = tmp_path / "evaluation.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["cells"][3].pop("median_ttft_ms"), "cells[3].median_ttft_ms: required field is missing"),
        (
            lambda d: d["run"]["engine"].update(commit="main"),
            "run.engine.commit: 'main' is not a 40-hex commit",
        ),
        (
            lambda d: d.update(extra=1),
            "extra: unknown key (allowed keys are listed by `hubrelease schema --eval`)",
        ),
        (
            lambda d: d["cells"][0].update(configuration="eagle"),
            "(top level): cell names configuration 'eagle', not one of "
            "['autoregressive', 'nextn', 'dflash-warm-start', 'dflash2']",
        ),
        (
            lambda d: d["cells"][0].update(overall_tok_s=-1),
            "cells[0].overall_tok_s: Input should be greater than or equal to 0",
        ),
        (
            lambda d: d["run"]["prompt_set"]["categories"].update(chat=9),
            "run.prompt_set: categories sum to 39, total is 40",
        ),
    ],
)
def test_invalid_files_name_file_and_field(
    tmp_path: Path, edit: Callable[[dict[str, Any]], object], message: str
) -> None:
    path = _broken(tmp_path, edit)
    with pytest.raises(InputError) as info:
        load_evaluation(path)
    assert str(info.value) == f"{path}: {message}"


def test_unreadable_files(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"schema_version": 1,\n  oops}', encoding="utf-8")
    cases = {
        tmp_path / "missing.json": "file not found",
        tmp_path: "is a folder, expected an evaluation JSON file",
    }
    for path, message in cases.items():
        with pytest.raises(InputError) as info:
            load_evaluation(path)
        assert str(info.value) == f"{path}: {message}"
    with pytest.raises(InputError) as info:
        load_evaluation(tmp_path / "bad.json")
    assert (
        str(info.value)
        == f"{tmp_path / 'bad.json'}:2: invalid JSON: Expecting property name enclosed in double quotes"
    )


def test_deeply_nested_json_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_evaluation(path)
    assert str(info.value) == f"{path}: invalid JSON: nested more than 64 levels deep"


def test_schema_eval_prints_the_evaluation_schema() -> None:
    result = invoke(["schema", "--eval"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema == evaluation_json_schema()
    assert schema["$id"].endswith("evaluation-v1.json")
    cell = schema["$defs"]["Cell"]["properties"]
    assert cell["per_user_tok_s"]["description"].startswith("1000 / median_tpot_ms")
    assert schema["$defs"]["Cell"]["additionalProperties"] is False
