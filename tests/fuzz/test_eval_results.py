"""``.eval_results/*.yaml`` files a hostile release holds: any YAML value in place of the file, and
any value in any field of one of its entries. ``lint`` (whose release rules push's and preview's
preflight run) meets the contract (tests/fuzz/harness.py): a finding, never exit 3.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.factories.cli import run_cli
from tests.fuzz.harness import fuzz, run_case
from tests.fuzz.values import set_path, values

REPO = Path(__file__).resolve().parents[2]
FIELDS = (
    (0,),
    (0, "dataset"),
    (0, "dataset", "id"),
    (0, "dataset", "task_id"),
    (0, "dataset", "revision"),
    (0, "value"),
    (0, "source"),
    (0, "source", "url"),
    (0, "date"),
    (0, "notes"),
    (0, "data"),
    (0, "error"),
)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A release with an ``.eval_results`` artifact, built from its evaluation file."""
    folder = tmp_path_factory.mktemp("fuzz-eval-results") / "release"
    shutil.copytree(REPO / "manifests" / "ornith-1.0-dflash-gguf", folder)
    code, _, err = run_cli("build", "eval-results", folder / "hubrelease.yaml")
    assert code == 0, err
    return folder


def _lint(built: Path, text: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "release"
        shutil.copytree(built, folder)
        (folder / ".eval_results" / "evaluation.yaml").write_bytes(text)
        run_case(["lint", folder / "hubrelease.yaml"], folder)


@fuzz(25)
@given(field=st.sampled_from(FIELDS), value=values, as_json=st.booleans())
def test_any_entry_value(built: Path, field: tuple[str | int, ...], value: Any, as_json: bool) -> None:
    entries = yaml.safe_load((built / ".eval_results" / "evaluation.yaml").read_text(encoding="utf-8"))
    set_path(entries, field, value)
    if as_json:  # JSON is YAML: huge integers and NaN survive as literals
        text = json.dumps(entries, allow_nan=True)
    else:
        text = yaml.safe_dump(entries, sort_keys=False, allow_unicode=True)
    _lint(built, text.encode("utf-8", errors="surrogatepass"))


@fuzz(10)
@given(value=values)
def test_any_file_value(built: Path, value: Any) -> None:
    text = yaml.safe_dump(value, allow_unicode=True)
    _lint(built, text.encode("utf-8", errors="surrogatepass"))
