"""The recipe a builder records: builder, source, out, options, inputs by digest, tool versions."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hubrelease.formats.gguf_header import GGUFSet
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.recipes.inputs import (
    Input,
    Screen,
    dataset_files,
    drafter_files,
    file_inputs,
    header_inputs,
    relative_name,
)
from hubrelease.recipes.tools import tool_versions

if TYPE_CHECKING:
    from hubrelease.builders.dataset_card import CardOptions, DatasetSummary
    from hubrelease.builders.evaluation import Source
    from hubrelease.evaluation.infer import SpecOptions
    from hubrelease.evaluation.ingest import ServingOptions


def make_recipe(
    builder: str,
    root: Path,
    *,
    source: Path | None,
    out: Path,
    options: dict[str, Any],
    inputs: list[Input],
    extra_tools: tuple[str, ...] = (),
) -> dict[str, Any]:
    """The recipe as the manifest stores it (paths from the release folder ``root``)."""
    recipe: dict[str, Any] = {"builder": builder}
    if source is not None:
        recipe["source"] = relative_name(source, root)
    return recipe | {
        "out": relative_name(out, root),
        "options": options,
        "inputs": inputs,
        "tools": tool_versions(builder, extra_tools),
    }


def shard_uris(model: GGUFSet, first_uri: str) -> dict[Path, str]:
    """Each shard's ``hf://REPO@COMMIT/PATH`` from the first shard's (the shards share folder and commit)."""
    first = model.shards[0].path.as_posix()
    base = first_uri[: len(first_uri) - len(first)]
    return {shard.path: base + shard.path.as_posix() for shard in model.shards}


def drafter_inputs(
    builder: str,
    source: Path,
    root: Path,
    tokenizer: GGUFSet | None = None,
    tokenizer_uri: str | None = None,
    *,
    screen: Screen | None = None,
) -> list[Input]:
    """A drafter build's inputs: its folder's files, then the tokenizer GGUF's shard headers."""
    inputs = file_inputs(drafter_files(source, modules=builder == "safetensors-drafter"), root, screen)
    if tokenizer is not None:
        uris = shard_uris(tokenizer, tokenizer_uri) if tokenizer_uri else None
        inputs += header_inputs(tokenizer, root, uris)
    return inputs


def eval_recipe(
    root: Path,
    out: Path,
    sources: Sequence[Source],
    spec: Path | None,
    prompts: Path | None,
    *,
    spec_options: SpecOptions,
    serving_options: ServingOptions,
    columns: str | None,
) -> dict[str, Any]:
    """``build eval``'s recipe: raw runs, spec and prompts by digest, every option that was given."""
    options: dict[str, Any] = {"sources": [relative_name(s.path, root) for s in sources]}
    if any(s.configuration for s in sources):
        options["configurations"] = [s.configuration or "" for s in sources]
    for name, path in (("spec", spec), ("prompts", prompts)):
        if path is not None:
            options[name] = relative_name(path, root)
    stated = dataclasses.asdict(spec_options) | dataclasses.asdict(serving_options) | {"columns": columns}
    options |= {name: value for name, value in stated.items() if value not in (None, False)}
    files = [s.path for s in sources] + [p for p in (spec, prompts) if p is not None]
    return make_recipe("eval", root, source=None, out=out, options=options, inputs=file_inputs(files, root))


def dataset_card_recipe(
    root: Path, data: Path, out: Path, tokenizer: Path | None, options: dict[str, Any]
) -> dict[str, Any]:
    """``build dataset-card``'s recipe: every shard (and the tokenizer) by digest, the options given."""
    stated = options | ({"tokenizer": relative_name(tokenizer, root)} if tokenizer is not None else {})
    return make_recipe(
        "dataset-card",
        root,
        source=data,
        out=out,
        options={name: value for name, value in stated.items() if value not in (None, [], ())},
        inputs=file_inputs(dataset_files(data, tokenizer), root),
        extra_tools=("tokenizers",) if tokenizer is not None else (),
    )


def build_dataset_card(
    data: Path,
    out: Path,
    *,
    manifest: Path | None = None,
    tokenizer: Path | None = None,
    count_column: str = "completion_tokens",
    options: CardOptions | None = None,
    progress: Progress = NULL_PROGRESS,
) -> DatasetSummary:
    """Summarise ``data`` and atomically write the card to ``out``; with ``manifest``, record it there
    with its recipe (shards by digest, options, tool versions). It lives with the recipes, not the
    builder: a builder makes the card, the recipes record how.

    The manifest is loaded and checked first (``out`` inside its release folder, not an artifact),
    so a bad ``--manifest`` costs no scan and leaves no card behind.
    """
    from hubrelease.builders.dataset_card import CardOptions, dataset_card_text, recipe_options
    from hubrelease.fsutil import atomic_write_text
    from hubrelease.manifest import load_manifest
    from hubrelease.manifest.record import CardRecorder

    options = CardOptions() if options is None else options
    loaded = load_manifest(manifest) if manifest else None
    recorder = CardRecorder.prepare(manifest, out) if manifest else None
    summary, text = dataset_card_text(
        data,
        out,
        manifest=loaded,
        tokenizer=tokenizer,
        count_column=count_column,
        options=options,
        progress=progress,
    )
    atomic_write_text(out, text)
    if recorder is not None:
        recipe = dataset_card_recipe(
            recorder.root, data, out, tokenizer, recipe_options(count_column, options)
        )
        recorder.record(text.encode("utf-8"), recipe)
    return summary
