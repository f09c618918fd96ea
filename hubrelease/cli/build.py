"""`hubrelease build ...`: the builder command group, its commands built on first use (``LazyGroup``)."""

from __future__ import annotations

from typing import ClassVar

import typer

from hubrelease.cli.groups import Entry, LazyGroup


class BuildGroup(LazyGroup):
    """``build``'s commands; each builder family's module registers its own."""

    table: ClassVar[dict[str, Entry]] = {
        "eval": Entry(
            "build_data",
            "Compute an evaluation JSON (cells, paired comparisons, sweeps) from raw benchmark runs.",
        ),
        "dataset-card": Entry(
            "build_data",
            "Write a dataset card whose counts, tallies and digests are computed from the shards.",
        ),
        "safetensors-drafter": Entry(
            "build_drafters",
            "Drop rotary buffers, cast, check the tensor set, write SGLang-ready safetensors + normalised config.json.",
        ),
        "gguf-drafter": Entry(
            "build_drafters",
            "Stream a drafter into GGUF for ik_llama.cpp or mainline llama.cpp, rope base from the nested config.",
        ),
        "speculators-drafter": Entry(
            "build_drafters",
            "Write a speculators-format drafter (vLLM): speculators config.json naming the verifier, draft body tensors.",
        ),
        "eval-results": Entry(
            "build_eval_results",
            "Write each pinned evaluation file's numbers as .eval_results entries (huggingface_hub's EvalResultEntry).",
        ),
    }


build_app = typer.Typer(
    cls=BuildGroup,
    name="build",
    help="Build release artifacts: drafters, evaluation JSON, eval results, dataset cards.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(build_app, name="build")
