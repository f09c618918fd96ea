"""An evaluation's run metadata is bound to the manifest's pins and artifacts.

render-card, verify and push refuse a disagreement (exit 1) naming both values; a difference the
manifest states (``evaluations[].deviations``) is printed on the card with its note instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from hubrelease.evaluation import load_evaluation
from hubrelease.evaluation.provenance import disagreements
from hubrelease.manifest import load_manifest
from tests.factories.bench_runs import eval_spec, sglang_line, write_jsonl, write_spec
from tests.factories.cards import (
    COMMIT,
    SHA_A,
    TARGET_REV,
    matrix_evaluation,
    write_card_release,
)
from tests.factories.cli import run_cli
from tests.factories.hub import api_for, unique_repo

OTHER = "1111111111111111111111111111111111111111"


def _edit(manifest: Path, change: Callable[[dict[str, Any]], None]) -> None:
    data = yaml.safe_load(manifest.read_text())
    change(data)
    manifest.write_text(yaml.safe_dump(data, sort_keys=False))


def _release(
    tmp_path: Path,
    change: Callable[[dict[str, Any]], None] | None = None,
    evaluation: dict[str, Any] | None = None,
) -> Path:
    data = evaluation or matrix_evaluation()
    if change is not None:
        change(data)
    return write_card_release(tmp_path, evaluations={"eval/matrix.json": data})


CASES = [
    # (what changes in the evaluation, the evaluation's value, the pinned value named in the refusal)
    (
        lambda e: e["run"]["target"].update(repo_id="ornith-ai/Ornith-1.5-35B-A3B-NVFP4"),
        "run.target.repo_id is ornith-ai/Ornith-1.5-35B-A3B-NVFP4",
        "pins acme/target",
    ),
    (
        lambda e: e["run"]["target"].update(revision=OTHER),
        f"run.target.revision is {OTHER}",
        f"pins acme/target@{TARGET_REV}",
    ),
    (lambda e: e["run"]["engine"].update(name="vllm"), "run.engine.name is vllm", "pins sglang"),
    (
        lambda e: e["run"]["engine"].update(commit=OTHER),
        f"run.engine.commit is {OTHER}",
        f"pins sglang at {COMMIT}",
    ),
    (
        lambda e: e["run"]["engine"].update(binaries=["deadbeefdeadbeef"]),
        "run.engine.binaries is deadbeefdeadbeef",
        "pins sglang with no binaries",
    ),
    (lambda e: e["run"]["hardware"].update(id="h200"), "run.hardware.id is h200", "pins test-gpu"),
    (
        lambda e: e["run"]["hardware"].update(name="NVIDIA H100"),
        "run.hardware.name is 'NVIDIA H100'",
        "pins test-gpu with name 'Test GPU'",
    ),
    (
        lambda e: e["configurations"][1].update(drafter={"name": "d", "repo_id": "someone/else"}),
        "configurations[dflash2].drafter.repo_id is 'someone/else'",
        "pins the release or a pinned repo",
    ),
    (
        lambda e: e["configurations"][1].update(
            drafter={"name": "d", "file": "model.safetensors", "sha256": SHA_A}
        ),
        f"configurations[dflash2].drafter.sha256 is {SHA_A}",
        "pins model.safetensors at ",
    ),
    (
        lambda e: e["configurations"][1].update(drafter={"name": "d", "file": "gone.gguf"}),
        "configurations[dflash2].drafter.file is 'gone.gguf'",
        "no artifact, pinned file or external file of that name",
    ),
    (
        lambda e: e["configurations"][1].update(drafter={"name": "Qwen3.5 DFlash"}),
        "configurations[dflash2].drafter.name is 'Qwen3.5 DFlash'",
        "name a file of the release (config.json, model.safetensors) by file and sha256",
    ),
]


@pytest.mark.parametrize(("change", "evaluated", "pinned"), CASES)
def test_render_card_and_verify_refuse_a_disagreement_naming_both_values(
    tmp_path: Path, change: Callable[[dict[str, Any]], None], evaluated: str, pinned: str
) -> None:
    manifest = _release(tmp_path, change)
    code, _, err = run_cli("render-card", manifest)
    assert code == 1
    assert evaluated in err and pinned in err and "eval/matrix.json" in err
    assert not (tmp_path / "README.md").exists()
    code, out, _ = run_cli("verify", manifest, "--json")
    findings = [f for f in json.loads(out)["findings"] if f["kind"] == "provenance"]
    assert code == 1
    assert [f["path"] for f in findings] == ["eval/matrix.json"]
    assert evaluated in findings[0]["message"] and pinned in findings[0]["message"]


def test_the_bound_release_renders_and_verifies(tmp_path: Path) -> None:
    manifest = _release(tmp_path)
    assert run_cli("render-card", manifest)[0] == 0
    assert run_cli("verify", manifest)[0] == 0


def test_a_drafter_digest_prefix_of_the_artifact_is_bound(tmp_path: Path) -> None:
    """Seed 001's rows carry 16-character prefixes (drafter_sha16, server_sha16)."""
    manifest = _release(tmp_path)
    release = load_manifest(manifest)
    pinned = release.artifact("model.safetensors")
    assert pinned is not None and pinned.sha256 is not None
    data = matrix_evaluation()
    data["configurations"][1]["drafter"] = {
        "name": "d",
        "file": "model.safetensors",
        "sha256_prefix": pinned.sha256[:16],
    }
    (tmp_path / "eval/matrix.json").write_text(json.dumps(data))
    assert disagreements("eval/matrix.json", load_evaluation(tmp_path / "eval/matrix.json"), release) == []
    data["configurations"][1]["drafter"]["sha256_prefix"] = "0" * 16
    (tmp_path / "eval/matrix.json").write_text(json.dumps(data))
    [found] = disagreements("eval/matrix.json", load_evaluation(tmp_path / "eval/matrix.json"), release)
    assert (found.field, found.evaluated) == ("drafter", "0" * 16)


def test_server_binary_prefixes_must_be_pinned_binaries(tmp_path: Path) -> None:
    llama = "7b7ff16cd57264905bf3b37334a29856189eb004f0cbb0b3c3cc4d04c951a576"
    manifest = _release(tmp_path, lambda e: e["run"]["engine"].update(binaries=[llama[:16]]))
    _edit(
        manifest,
        lambda d: d["pins"]["engines"][0].update(binaries=[{"name": "llama-server", "sha256": llama}]),
    )
    assert run_cli("render-card", manifest)[0] == 0
    _edit(
        manifest,
        lambda d: d["pins"]["engines"][0].update(binaries=[{"name": "llama-server", "sha256": "f" * 64}]),
    )
    code, _, err = run_cli("render-card", manifest)
    assert (
        code == 1 and f"run.engine.binaries is {llama[:16]}" in err and "llama-server ffffffffffffffff" in err
    )


def test_a_stated_deviation_is_printed_with_its_note_and_a_stale_one_refused(tmp_path: Path) -> None:
    """The GGUF card's "measured with" comes from the evaluation, not the pin."""
    evaluation = matrix_evaluation()
    evaluation["run"]["engine"]["commit"] = OTHER
    manifest = write_card_release(tmp_path, evaluations={"eval/matrix.json": evaluation})
    code, _, err = run_cli("render-card", manifest)
    assert code == 1 and f"run.engine.commit is {OTHER}" in err
    note = "measured on the build before the flag rename; same kernels"
    _edit(
        manifest,
        lambda d: d.update(
            evaluations=[
                {"path": "eval/matrix.json", "deviations": [{"field": "engine.commit", "note": note}]}
            ]
        ),
    )
    code, _, err = run_cli("render-card", manifest)
    assert code == 0, err
    card = (tmp_path / "README.md").read_text()
    assert (
        f"Measured with sglang at commit `{OTHER}`. The pinned build is commit `{COMMIT}`; note: {note}"
        in card
    )
    assert f"Measured with sglang at commit `{COMMIT}`" not in card
    assert run_cli("verify", manifest)[0] == 0
    evaluation["run"]["engine"]["commit"] = COMMIT
    (tmp_path / "eval/matrix.json").write_text(json.dumps(evaluation))
    code, _, err = run_cli("render-card", manifest)
    assert code == 1 and "deviations names engine.commit, but the evaluation agrees with the pins" in err


def test_measured_with_says_when_the_evaluation_does_not_record_the_commit(tmp_path: Path) -> None:
    manifest = _release(tmp_path, lambda e: e["run"]["engine"].update(commit=None))
    assert run_cli("render-card", manifest)[0] == 0
    card = (tmp_path / "README.md").read_text()
    assert (
        f"Measured with sglang (the evaluation does not record the commit; the pinned build is `{COMMIT}`)."
        in card
    )


def test_push_refuses_a_disagreement_before_anything_is_written(tmp_path: Path, loopback_hub: Any) -> None:
    manifest = _release(tmp_path, lambda e: e["run"]["target"].update(revision=OTHER))
    repo = unique_repo("provenance")
    _edit(manifest, lambda d: d["release"].update(repo_id=repo))
    for args in ((), ("--dry-run",)):
        code, _, err = run_cli("push", manifest, "--endpoint", loopback_hub.url, *args)
        assert code == 1 and f"run.target.revision is {OTHER}" in err
    assert not api_for(loopback_hub).repo_exists(repo)


def test_build_eval_refuses_a_drafter_named_only_by_a_foreign_name(tmp_path: Path) -> None:
    manifest = _release(tmp_path)
    spec = eval_spec()
    spec["configurations"][1]["drafter"] = {"name": "Qwen3.5 DFlash"}  # another model's name, no digest
    runs = write_jsonl(
        tmp_path / "runs.jsonl",
        [sglang_line(max_concurrency=c, tag=t) for t in ("autoregressive", "dflash2") for c in (1, 4)],
    )
    spec_path = write_spec(tmp_path / "spec.json", spec)
    args: list[str | Path] = ["build", "eval", runs, "--spec", spec_path, "--out", tmp_path / "e.json"]
    code, _, err = run_cli(*args, "--check-digests", manifest)
    assert code == 2, err
    assert "configurations[dflash2].drafter is named only 'Qwen3.5 DFlash': name a file of the release" in err
    assert run_cli(*args)[0] == 0  # without a release there is nothing it should have named
    spec["configurations"][1]["drafter"] = {"name": "Tiny drafter"}  # the release's own title
    write_spec(tmp_path / "spec.json", spec)
    assert run_cli(*args, "--check-digests", manifest)[0] == 0


def _transcribed(tmp_path: Path, sha256: str, lines: list[int]) -> Path:
    document = {"name": "the published table", "path": "config.json", "sha256": sha256,
                "tables": [{"title": "Serving", "lines": lines}]}  # fmt: skip
    return _release(tmp_path, lambda e: e["provenance"].update(documents=[document]))


def test_a_source_document_the_release_pins_with_other_bytes_is_refused(tmp_path: Path) -> None:
    manifest = _transcribed(tmp_path, SHA_A, [1, 1])
    pinned = load_manifest(manifest).artifact("config.json")
    assert pinned is not None and pinned.sha256 not in (None, SHA_A)
    code, _, err = run_cli("render-card", manifest)
    assert code == 1
    assert f"provenance.documents[0] (the published table) has sha256 {SHA_A}" in err
    assert f"pins config.json as {pinned.sha256}" in err
    code, out, _ = run_cli("verify", manifest, "--json")
    assert code == 1
    assert [f["path"] for f in json.loads(out)["findings"] if f["kind"] == "provenance"] == [
        "eval/matrix.json"
    ]


def test_a_pinned_document_is_checked_and_printed_with_its_lines(tmp_path: Path) -> None:
    first = _transcribed(tmp_path / "a", SHA_A, [1, 1])
    digest = load_manifest(first).artifact("config.json")
    assert digest is not None and digest.sha256 is not None
    lines = len((tmp_path / "a" / "config.json").read_bytes().splitlines())
    manifest = _transcribed(tmp_path / "b", digest.sha256, [1, lines])
    assert run_cli("render-card", manifest)[0] == 0
    card = (tmp_path / "b" / "README.md").read_text()
    assert (
        f"Transcribed from the published table, sha256 `{digest.sha256}`: Serving, lines 1-{lines}." in card
    )
    assert run_cli("verify", manifest)[0] == 0
    # A table past the document's end names the document and its length.
    past = _transcribed(tmp_path / "c", digest.sha256, [1, lines + 1])
    assert run_cli("render-card", past)[0] == 0
    code, out, _ = run_cli("verify", past, "--json")
    messages = [f["message"] for f in json.loads(out)["findings"] if f["kind"] == "provenance"]
    assert code == 1
    assert messages == [
        f"provenance.documents[0].tables['Serving'] ends at line {lines + 1}, but config.json has {lines} lines"
    ]


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        ({"name": "n", "sha256": SHA_A}, "needs a path (relative to the release) or a url"),
        ({"name": "n", "path": "/abs/card.md", "sha256": SHA_A}, "is absolute"),
        ({"name": "n", "url": "https://x", "sha256": SHA_A, "tables": [{"title": "t", "lines": [5, 3]}]}, "first <= last"),
    ],
)  # fmt: skip
def test_a_source_document_without_a_place_or_with_a_bad_range_is_invalid(
    tmp_path: Path, document: dict[str, Any], problem: str
) -> None:
    manifest = _release(tmp_path, lambda e: e["provenance"].update(documents=[document]))
    code, _, err = run_cli("render-card", manifest)
    assert code == 2 and problem in err and "Traceback" not in err
