"""Release-level lint of ``.eval_results`` files: whatever a file holds, a finding, never exit 3."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.factories.cli import run_cli

REPO = Path(__file__).resolve().parents[2]

HOSTILE = [
    "- 1\n",
    "- x\n",
    "- null\n",
    "- {}\n",
    "- {dataset: 5, value: 1}\n",
    "- {dataset: [], value: 1}\n",
    "- {dataset: {id: a}, value: 1}\n",
    "- {dataset: {id: a, task_id: t}, value: 1, source: 5}\n",
    "- {data: 7}\n",
    "{a: 1}\n",
    "[[[[\n",
]
"""Shapes huggingface_hub's ``parse_eval_result_entries`` meets with TypeError, AttributeError or
KeyError (on main: exit 3 from ``lint`` and from push's and preview's preflight)."""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("eval-results")
    shutil.copytree(REPO / "manifests" / "ornith-1.0-dflash-gguf", folder / "release")
    manifest = folder / "release" / "hubrelease.yaml"
    code, _, err = run_cli("build", "eval-results", manifest)
    assert code == 0, err
    return manifest


@pytest.mark.parametrize("text", HOSTILE)
def test_a_hostile_eval_results_file_is_one_finding(built: Path, tmp_path: Path, text: str) -> None:
    shutil.copytree(built.parent, tmp_path / "release")
    manifest = tmp_path / "release" / "hubrelease.yaml"
    (manifest.parent / ".eval_results" / "evaluation.yaml").write_text(text, encoding="utf-8")
    code, out, err = run_cli("lint", manifest)
    assert code == 1 and "Traceback" not in err, (code, out, err)
    lines = [line for line in out.splitlines() if ".eval_results/evaluation.yaml" in line]
    assert len(lines) == 1 and "[eval-results]" in lines[0], out


def test_a_fifo_in_place_of_an_eval_results_file_is_not_waited_on(built: Path, tmp_path: Path) -> None:
    shutil.copytree(built.parent, tmp_path / "release")
    manifest = tmp_path / "release" / "hubrelease.yaml"
    target = manifest.parent / ".eval_results" / "evaluation.yaml"
    target.unlink()
    os.mkfifo(target)
    code, out, _ = run_cli("lint", manifest)
    assert code == 1 and "evaluation.yaml: cannot be checked" in out, out
