"""Releases with evaluation files and a ``card:`` section: raw material for the card tests.

Evaluation files are plain dicts valid against ``hubrelease.evaluation.Evaluation`` (run metadata
reused from ``bench_runs.eval_spec``); manifests go through ``releases.write_release``.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from tests.factories.bench_runs import eval_spec
from tests.factories.releases import write_release

SHA_A = "7b9f2654dfc07c0a9197da3e6414db58202a60008a24f76387a52136f302134a"
SHA_B = "186b73dce2046b072a67361ddb8f09992761eed0171f2cfbb1d251fb8f943d6e"
COMMIT = "710267dc4c817b38d9965346390cd56b59b54eda"
TARGET_REV = "0f0b1b59b879ccde1353e6ebd0fb10c204d4c544"


def _provenance() -> dict[str, Any]:
    """A fresh provenance each time: a test that edits one evaluation's must not edit the next one's."""
    return {"generator": "tests", "transcribed_from": "tests/factories/cards.py"}


def _cell(config: str, concurrency: int, tok_s: float, accepted: float | None) -> dict[str, Any]:
    return {
        "configuration": config,
        "concurrency": concurrency,
        "overall_tok_s": tok_s,
        "per_user_tok_s": tok_s / concurrency + 1.25,
        "median_ttft_ms": 100.0 + concurrency,
        "median_tpot_ms": 1000 / tok_s,
        "accepted_length": accepted,
    }


def matrix_evaluation() -> dict[str, Any]:
    """Two configurations x concurrency 1 and 4 (autoregressive 80 tok/s, DFlash2 115.2 at c=1: +44.0%)."""
    spec = eval_spec()
    return {
        "schema_version": 1,
        "title": "Test serving evaluation",
        "run": spec["run"],
        "configurations": spec["configurations"],
        "cells": [
            _cell("autoregressive", 1, 80.0, None),
            _cell("autoregressive", 4, 160.0, None),
            _cell("dflash2", 1, 115.2, 4.0213),
            _cell("dflash2", 4, 190.04, 4.16),
        ],
        "notes": ["Greedy sampling; numbers are specific to this setup."],
        "provenance": _provenance(),
    }


def _row(
    setting: int, base: float, diff: float, sd: float, low: float, high: float, role: str
) -> dict[str, Any]:
    return {
        "setting": setting,
        "baseline_mean": base,
        "treatment_mean": base + diff,
        "mean_difference": diff,
        "sd_difference": sd,
        "n": 8,
        "ci95": {"low": low, "high": high},
        "relative_change": diff / base,
        "relative_ci95": {"low": low / base, "high": high / base},
        "role": role,
    }


def ab_evaluation() -> dict[str, Any]:
    """A preregistered A/B (primary n_max 3: +1.315, [0.360, 2.270]) and an n_max sweep."""
    spec = eval_spec()
    arms = [
        {"id": "A", "label": "upstream", "drafter": {"name": "upstream", "file": "a.gguf", "sha256": SHA_A}},
        {
            "id": "B",
            "label": "retrained",
            "drafter": {"name": "retrained", "file": "b.gguf", "sha256": SHA_B},
        },
    ]
    sweep_rows = [
        {"setting": 0, "mean_tok_s": 18.71, "sd_tok_s": 0.23, "runs": 16, "tokens_per_round": None},
        {"setting": 3, "mean_tok_s": 25.65, "sd_tok_s": 1.61, "runs": 16, "tokens_per_round": 3.06},
    ]
    return {
        "schema_version": 1,
        "title": "Retrain A/B",
        "run": spec["run"],
        "comparisons": [
            {
                "id": "retrain-ab",
                "title": "Retrained vs upstream",
                "setting_name": "n_max",
                "baseline": "A",
                "treatment": "B",
                "arms": arms,
                "design": {"boot_order": ["A", "B", "B", "A"], "prompts": 8, "repetitions": 2},
                "rows": [
                    _row(0, 18.03, 0.039, 0.072, -0.021, 0.099, "secondary"),
                    _row(3, 21.63, 1.315, 1.142, 0.360, 2.270, "primary"),
                ],
                "between_boot_spread": [{"arm": "A", "setting": 3, "last_minus_first": -0.093}],
            }
        ],
        "sweeps": [
            {
                "id": "n-max-sweep",
                "title": "Shipped file across n_max",
                "setting_name": "n_max",
                "rows": sweep_rows,
            }
        ],
        "provenance": _provenance(),
    }


def _usage(executable: str, flags: list[dict[str, Any]]) -> dict[str, Any]:
    return {"engine": "sglang", "executable": executable, "flags": flags}


def safetensors_card() -> dict[str, Any]:
    """A ``card:`` section with an SGLang command built from the pins and one speedup claim."""
    flags: list[dict[str, Any]] = [
        {"flag": "--model-path", "value_from": "target.repo_id"},
        {"flag": "--revision", "value_from": "target.revision"},
        {"flag": "--speculative-draft-model-path", "value_from": "release.repo_id"},
        {"flag": "--speculative-num-draft-tokens", "value": 10},
        {"flag": "--trust-remote-code", "same_line": True},
    ]
    claim = {"kind": "speedup", "id": "headline", "evaluation": "eval/matrix.json"}
    return {
        "template": "safetensors_drafter",
        "summary": "A tiny drafter for tests.",
        "usage": [_usage("sglang serve", flags)],
        "claims": [{**claim, "configuration": "dflash2", "baseline": "autoregressive"}],
        "sections": [{"title": "Training", "body": "Trained for tests."}],
    }


def gguf_card() -> dict[str, Any]:
    """A ``card:`` section for the GGUF template: a quoted flag, same-line flags, a comparison claim."""
    flags: list[dict[str, Any]] = [
        {"flag": "--model-draft", "value_from": "recommended.path"},
        {"flag": "--draft-params", "value": "-wgt 17"},
        {"flag": "--parallel", "value": 1, "same_line": True},
    ]
    claim = {"kind": "comparison", "id": "ab", "evaluation": "eval/ab.json", "comparison": "retrain-ab"}
    return {"template": "gguf_drafter", "usage": [_usage("llama-server", flags)], "claims": [claim]}


def release_pins() -> dict[str, Any]:
    """Pins for a drafter release: a pinned target, a warm start, a CC-BY dataset, an engine, the machine."""
    return {
        "targets": [
            {
                "repo_id": "acme/target",
                "revision": TARGET_REV,
                "license": "mit",
                "derived_from": ["acme/base"],
            }
        ],
        "base_drafters": [{"repo_id": "acme/warm-start", "unpinned": True, "license": "apache-2.0"}],
        "datasets": [
            {
                "repo_id": "acme/conversations",
                "unpinned": True,
                "license": "cc-by-4.0",
                "attribution": "Conversations from acme/conversations, CC-BY-4.0.",
            }
        ],
        "engines": [{"name": "sglang", "repository": "sgl-project/sglang", "commit": COMMIT}],
        "hardware": [{"id": "test-gpu", "name": "Test GPU"}],
        # The A/B arms' drafter files (ab_evaluation), pinned so the evaluation is bound to the release.
        "external_files": [
            {"name": "a.gguf", "source": "acme/warm-start", "sha256": SHA_A},
            {"name": "b.gguf", "source": "acme/retrained", "sha256": SHA_B},
        ],
    }


def write_card_release(
    root: Path,
    *,
    card: dict[str, Any] | None = None,
    release: dict[str, Any] | None = None,
    evaluations: dict[str, dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """A release folder with evaluation files and a manifest carrying ``card``; returns the manifest path."""
    evals = {"eval/matrix.json": matrix_evaluation()} if evaluations is None else evaluations
    for rel, data in evals.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    manifest: dict[str, Any] = {
        "release": {
            "repo_id": "acme/tiny-drafter",
            "title": "Tiny drafter",
            "license": "apache-2.0",
            "base_model": ["acme/warm-start"],
            "base_model_relation": "finetune",
            "pipeline_tag": "text-generation",
            "library_name": "sglang",
            "tags": ["dflash", "speculative-decoding"],
            "inference": False,
            **(release or {}),
        },
        "pins": release_pins(),
        "evaluations": list(evals),
        "card": copy.deepcopy(safetensors_card() if card is None else card),
        "notices": {"not_affiliated_with": ["Acme Labs", "Example Org"], "references": ["A paper"]},
        **(extra or {}),
    }
    files = {"model.safetensors": b"\x00" * 1500 + b"weights", "config.json": b"{}\n"}
    return write_release(root, files, extra_manifest=manifest)


def alias_bomb(width: int = 10, levels: int = 7) -> str:
    """A README whose front matter is a few hundred bytes that YAML aliases expand to ``width ** levels``
    values (10 ** 7 by default: past the input screen's 1,000,000)."""
    lines = ["---", "l0: &l0 [" + ", ".join(["x"] * width) + "]"]
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * width) + "]")
    return "\n".join([*lines, "---", "# card", ""])


HOSTILE_FRONT_MATTER = {
    "alias_bomb": alias_bomb(),
    "deep_flow": "---\na: " + "[" * 100_000 + "]" * 100_000 + "\n---\n",
    "deep_block": "---\n" + "".join(" " * i + "a:\n" for i in range(2_000)) + "---\n",
    "eval_results_false": "---\neval_results: false\n---\n",
    "model_index_scalar": "---\nmodel-index: [1]\n---\n",
    "model_index_string": "---\nmodel-index: [{name: x, results: oops}]\n---\n",
    "not_a_mapping": "---\njust a string\n---\n",
    "a_date": "---\nlicense: mit\ndate: 2024-01-01\n---\n",
    "long_integer": "---\nx: " + "9" * 5_000 + "\n---\n",
    "self_alias": "---\na: &a [*a]\n---\n",
}
"""README texts whose front matter breaks a naive reader: each must be a 4xx or a card without cardData."""
