"""A dataset release's eval.yaml on its card: the benchmark and the task ids it declares."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import yaml

from tests.factories.cli import run_cli

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = ["ornith-1.5-held-out-serving-prompts", "ornith-1.0-coding-prompts"]


def test_the_committed_benchmark_cards_list_every_declared_task() -> None:
    for name in BENCHMARKS:
        folder = REPO / "manifests" / name
        code, out, err = run_cli("render-card", folder / "hubrelease.yaml", "--check")
        assert code == 0, out + err
        card = (folder / "README.md").read_text()
        tasks = yaml.safe_load((folder / "eval.yaml").read_text())["tasks"]
        assert f"one of its {len(tasks)} task ids" in card
        assert all(f"| `{t['id']}` | default | test |" in card for t in tasks)


def test_an_eval_yaml_without_tasks_is_refused_naming_its_artifact(tmp_path: Path) -> None:
    folder = tmp_path / "bench"
    shutil.copytree(REPO / "manifests" / BENCHMARKS[1], folder)
    data = b"name: x\ndescription: y\n"
    (folder / "eval.yaml").write_bytes(data)
    manifest = folder / "hubrelease.yaml"
    text = manifest.read_text()
    tree = yaml.safe_load(text)
    old = tree["artifacts"][0]
    text = text.replace(str(old["size"]), str(len(data))).replace(
        old["sha256"], hashlib.sha256(data).hexdigest()
    )
    manifest.write_text(text)
    code, _, err = run_cli("render-card", manifest)
    assert code == 2 and "Traceback" not in err
    assert "artifacts[0].path: eval.yaml needs a name and a list of tasks" in err
