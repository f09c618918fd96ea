"""Role guessing and the recommended pick."""

from __future__ import annotations

import pytest

from hubrelease.onboarding.facts import FileFacts
from hubrelease.onboarding.roles import artifact_entries, artifact_entry, guess_role

SHA = "0" * 64


@pytest.mark.parametrize(
    ("name", "role"),
    [
        ("model.safetensors", "variant"),
        ("gguf/Drafter-Q4_K_M.GGUF", "variant"),
        ("pytorch_model.bin", "variant"),
        ("data/train-00000.parquet", "data"),
        ("rows.jsonl", "data"),
        ("bench/run1/results.csv", "benchmark"),
        ("eval/notes.md", "benchmark"),
        ("README.md", "doc"),
        ("config.json", "doc"),
        ("tokenizer.json", "doc"),
        ("LICENSE", "doc"),
    ],
)
def test_guess_role(name: str, role: str) -> None:
    assert guess_role(name) == role


def test_largest_weights_file_is_recommended_and_evaluations_split_out() -> None:
    facts = [
        FileFacts("a.gguf", 10, SHA),
        FileFacts("b.safetensors", 30, SHA),
        FileFacts("huge.parquet", 999, SHA),
        FileFacts("results/eval.json", 5, SHA, evaluation=True),
    ]
    artifacts, evaluations = artifact_entries(facts)
    assert [(a["path"], a["role"]) for a in artifacts] == [
        ("a.gguf", "variant"),
        ("b.safetensors", "recommended"),
        ("huge.parquet", "data"),
    ]
    assert [e["path"] for e in evaluations] == ["results/eval.json"]


def test_no_weights_means_no_recommended() -> None:
    artifacts, _ = artifact_entries([FileFacts("README.md", 3, SHA)])
    assert artifacts[0]["role"] == "doc"


def test_entry_with_a_different_repo_path_records_local() -> None:
    entry = artifact_entry(FileFacts("build/out.gguf", 1, SHA, {"F32": 1}), "variant", "drafter.gguf")
    assert entry == {
        "path": "drafter.gguf",
        "local": "build/out.gguf",
        "size": 1,
        "sha256": SHA,
        "role": "variant",
        "composition": {"F32": 1},
    }
