"""Front-matter values against the Hub's known keys (pinned from huggingface.js)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hubrelease.lint.hub_keys import LIBRARY_KEYS, PIPELINE_TAGS, closest
from tests.factories.cli import run_cli

REPO = Path(__file__).resolve().parents[2]


def test_the_pinned_lists_hold_the_hubs_keys() -> None:
    assert {"transformers", "llama-cpp-python", "sentence-transformers", "diffusers"} <= LIBRARY_KEYS
    assert {"text-generation", "feature-extraction"} <= PIPELINE_TAGS
    # An engine or a file format is not a library the Hub knows.
    assert not {"sglang", "vllm", "gguf", "safetensors"} & LIBRARY_KEYS
    assert closest("Transformers", LIBRARY_KEYS) == "transformers"
    assert closest("text-gen", PIPELINE_TAGS) == "text-generation"


@pytest.mark.parametrize(
    ("line", "warned"),
    [
        ("  library_name: sglang", "library_name: 'sglang' is not a library_name the Hub knows"),
        ("  library_name: Transformers", "the closest key it knows is 'transformers'"),
        ("  pipeline_tag: text-gen", "the closest key it knows is 'text-generation'"),
        ("  library_name: transformers", None),
    ],
)
def test_lint_warns_of_a_front_matter_value_the_hub_does_not_know(
    tmp_path: Path, line: str, warned: str | None
) -> None:
    shutil.copytree(REPO / "manifests" / "ornith-1.5-dflash2", tmp_path / "r")
    manifest = tmp_path / "r" / "hubrelease.yaml"
    text = manifest.read_text()
    key = line.split(":")[0]
    kept = [row for row in text.splitlines() if not row.startswith(f"{key}:")]
    at = kept.index("  inference: false")
    manifest.write_text("\n".join([*kept[:at], line, *kept[at:]]) + "\n")
    code, out, _ = run_cli("lint", manifest)
    hub_keys = [row for row in out.splitlines() if "[hub-keys]" in row]
    if warned is None:
        assert hub_keys == []
    else:
        assert len(hub_keys) == 1 and hub_keys[0].startswith("warning: [hub-keys] release: ")
        assert warned in hub_keys[0]
    assert code == 0  # a warning: the Hub accepts the card, it only files the model under no library
