"""`build eval-results`: the Hub's .eval_results/*.yaml from evaluation JSON."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml
from huggingface_hub import eval_result_entries_to_yaml, hf_hub_download, parse_eval_result_entries

from hubrelease.evaluation.eval_results import entries
from hubrelease.evaluation.load import load_evaluation
from hubrelease.manifest import load_manifest
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import run_cli
from tests.factories.hub import api_for, unique_repo

REPO = Path(__file__).resolve().parents[2]
SEEDS = ["ornith-1.5-dflash2", "ornith-1.0-dflash-gguf"]
BENCHMARK = "acme/serving-prompts"


def _copy(tmp_path: Path, name: str) -> Path:
    shutil.copytree(REPO / "manifests" / name, tmp_path / name)
    return tmp_path / name / "hubrelease.yaml"


@pytest.mark.parametrize("seed", SEEDS)
def test_both_seeds_files_parse_with_huggingface_hub_and_round_trip(tmp_path: Path, seed: str) -> None:
    manifest_path = _copy(tmp_path, seed)
    bench = tmp_path / "bench"
    code, _, err = run_cli(
        "build", "eval-results", manifest_path, "--dataset", BENCHMARK, "--benchmark", bench
    )
    assert code == 0, err
    declared = yaml.safe_load((bench / "eval.yaml").read_text())
    tasks = {t["id"] for t in declared["tasks"]}
    assert all((t["config"], t["split"]) == ("default", "test") for t in declared["tasks"])
    manifest = load_manifest(manifest_path)
    release = manifest.release
    for pin in manifest.evaluation_files:
        written = manifest_path.parent / ".eval_results" / f"{Path(pin.path).stem}.yaml"
        parsed = parse_eval_result_entries(yaml.safe_load(written.read_text()))
        evaluation = load_evaluation(manifest_path.parent / pin.path)
        expected = len(evaluation.cells) + sum(c.accepted_length is not None for c in evaluation.cells)
        expected += sum(len(c.rows) for c in evaluation.comparisons) + sum(
            len(s.rows) for s in evaluation.sweeps
        )
        assert len(parsed) == expected > 0
        # Round trip: the file is huggingface_hub's serialisation of these entries, and parses back to them.
        assert parsed == entries(manifest, pin, evaluation, BENCHMARK)
        assert declared["name"] == evaluation.run.prompt_set.name
        assert parse_eval_result_entries(eval_result_entries_to_yaml(parsed)) == parsed
        for entry in parsed:
            assert (
                entry.source_url
                == f"https://huggingface.co/{release.repo_id}/blob/{release.revision}/{pin.path}"
            )
            assert entry.notes is not None and f"evaluation file sha256 {pin.sha256}" in entry.notes
            # The Hub shows an entry on a benchmark whose eval.yaml declares its task id.
            assert (entry.dataset_id, entry.dataset_revision) == ("acme/serving-prompts", None)
            assert entry.task_id in tasks
        # Recorded as an artifact with its pins and recipe.
        artifact = manifest.artifact(f".eval_results/{Path(pin.path).stem}.yaml")
        assert artifact is not None and artifact.sha256 == hashlib.sha256(written.read_bytes()).hexdigest()
        assert artifact.recipe is not None and (artifact.recipe.builder, artifact.recipe.source) == (
            "eval-results",
            pin.path,
        )
    assert run_cli("lint", manifest_path)[0] == 0
    code, out, _ = run_cli("rebuild", manifest_path, "--json")
    rebuilt = {
        r["path"]: r["status"] for r in json.loads(out)["results"] if r["path"].startswith(".eval_results/")
    }
    assert rebuilt and set(rebuilt.values()) == {"identical"}, out


def test_the_release_itself_is_never_the_benchmark(tmp_path: Path) -> None:
    """The Hub shows no result whose dataset is a model repo: a release naming no benchmark is refused."""
    manifest_path = _copy(tmp_path, "example")
    code, _, err = run_cli("build", "eval-results", manifest_path)
    assert code == 2 and "Traceback" not in err
    assert "no datasets are pinned with role evaluation" in err and "--dataset ORG/NAME" in err
    assert not (manifest_path.parent / ".eval_results").exists()


@pytest.mark.parametrize(
    ("seed", "benchmark"),
    [
        ("ornith-1.5-dflash2", "ornith-1.5-held-out-serving-prompts"),
        ("ornith-1.0-dflash-gguf", "ornith-1.0-coding-prompts"),
    ],
)
def test_the_seeds_ship_results_on_their_benchmark(seed: str, benchmark: str) -> None:
    """Each committed seed's .eval_results name the benchmark dataset it pins, and that dataset release's
    eval.yaml declares every task id they use; both are fresh renders of the committed evaluations."""
    folder = REPO / "manifests" / seed
    manifest = load_manifest(folder / "hubrelease.yaml")
    (pin,) = [d for d in manifest.pins.datasets if d.role == "evaluation"]
    bench = load_manifest(REPO / "manifests" / benchmark / "hubrelease.yaml")
    assert (bench.release.repo_id, bench.release.repo_type) == (pin.repo_id, "dataset")
    declared = yaml.safe_load((REPO / "manifests" / benchmark / "eval.yaml").read_text())
    tasks = {t["id"] for t in declared["tasks"]}
    used = set()
    for evaluation in manifest.evaluation_files:
        written = folder / ".eval_results" / f"{Path(evaluation.path).stem}.yaml"
        parsed = parse_eval_result_entries(yaml.safe_load(written.read_text()))
        assert parsed and {e.dataset_id for e in parsed} == {pin.repo_id}
        used |= {e.task_id for e in parsed}
    assert used == tasks
    assert run_cli("lint", folder / "hubrelease.yaml")[0] == 0  # the .eval_results are fresh renders


def test_the_benchmark_dataset_and_a_stale_file(tmp_path: Path) -> None:
    manifest_path = _copy(tmp_path, "ornith-1.0-dflash-gguf")
    code, _, err = run_cli(
        "build", "eval-results", manifest_path, "--dataset", f"acme/coding-prompts@{'c' * 40}"
    )
    assert code == 0, err
    written = manifest_path.parent / ".eval_results" / "evaluation.yaml"
    first = parse_eval_result_entries(yaml.safe_load(written.read_text()))[0]
    assert (first.dataset_id, first.dataset_revision) == ("acme/coding-prompts", "c" * 40)
    assert first.notes is not None and "not a Hub dataset" not in first.notes
    # The seed dates Measurement 2 only: its tables carry their own date, the A/B's entries none.
    assert first.task_id == "retrain-ab-n_max-0-relative-change" and first.date is None
    dates = {e.task_id: e.date for e in parse_eval_result_entries(yaml.safe_load(written.read_text()))}
    assert dates["spec-on-off-relative-change"] == dates["n-max-sweep-n_max-15-tok-s"] == "2026-08-09"
    # An edited file no longer is the evaluation's render: lint names it (verify names the digest).
    written.write_text(written.read_text().replace("0.0021630615640599", "0.5"))
    code, out, _ = run_cli("lint", manifest_path)
    assert code == 1
    assert (
        "error: [eval-results] .eval_results/evaluation.yaml: is not a fresh render of evaluation.json" in out
    )


def test_published_in_the_same_commit_as_the_evaluation_file(hub: LoopbackHub, tmp_path: Path) -> None:
    manifest_path = _copy(tmp_path, "example")
    repo, target = unique_repo("evals"), "hubrelease-example/tiny-target"  # the evaluation's own target
    api = api_for(hub)
    api.create_repo(target, exist_ok=True)
    api.upload_folder(repo_id=target, folder_path=REPO / "manifests" / "example-target")
    manifest_path.write_text(
        manifest_path.read_text().replace("hubrelease-example/tiny-dflash-drafter", repo)
    )
    for args in (
        ("build", "eval-results", manifest_path, "--dataset", BENCHMARK),
        ("render-card", manifest_path),
    ):
        code, _, err = run_cli(*args)
        assert code == 0, err
    code, out, err = run_cli("push", manifest_path, "--endpoint", hub.url, "--json")
    assert code == 0, err
    commit = json.loads(out)["result"]["commit"]
    files = set(api.list_repo_files(repo, revision=commit))
    assert {"evaluation.json", ".eval_results/evaluation.yaml"} <= files
    cache = tmp_path / "cache"
    local = hf_hub_download(repo, ".eval_results/evaluation.yaml", revision=commit, endpoint=hub.url,
                            token=hub.owner_token, cache_dir=cache)  # fmt: skip
    parsed = parse_eval_result_entries(yaml.safe_load(Path(local).read_text()))
    evaluation = hf_hub_download(repo, "evaluation.json", revision=commit, endpoint=hub.url,
                                 token=hub.owner_token, cache_dir=cache)  # fmt: skip
    digest = hashlib.sha256(Path(evaluation).read_bytes()).hexdigest()
    assert all(e.source_url == f"https://huggingface.co/{repo}/blob/main/evaluation.json" for e in parsed)
    assert all(e.notes and f"evaluation file sha256 {digest}" in e.notes for e in parsed)
