"""Re-run one recipe: the inputs it would read now (by digest), then the builder into a work folder.

Every path in a recipe is relative to the release folder; outputs go under ``work`` at the same
relative paths, never into the release. Paths a builder records inside its output (evaluation
sources, a card's shard links) are taken relative to where the output lives in the release, so the
rebuilt bytes are the bytes ``build`` wrote there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from hubrelease.errors import InputError
from hubrelease.formats.gguf_header import GGUFSet
from hubrelease.manifest.models import Manifest, Recipe
from hubrelease.recipes.inputs import Input, dataset_files, file_inputs
from hubrelease.recipes.record import drafter_inputs
from hubrelease.sizes import parse_size

if TYPE_CHECKING:
    from huggingface_hub import HfApi


@dataclass(frozen=True)
class Release:
    """What every recipe of one release is run against."""

    root: Path
    manifest_path: Path
    manifest: Manifest
    hub: Callable[[], HfApi] | None = None
    """The Hub client for ``hf://`` inputs (None: such a recipe's input is reported missing)."""
    jobs: int = 1


@dataclass(frozen=True)
class Prepared:
    """A recipe's inputs as they are now, and what its builder reads that is not a path."""

    inputs: list[Input]
    tokenizer: GGUFSet | None = None


def _str(options: dict[str, Any], key: str, default: str | None = None) -> str | None:
    value = options.get(key, default)
    return None if value is None else str(value)


def _list(options: dict[str, Any], key: str) -> list[str]:
    value = options.get(key, [])
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _source(recipe: Recipe, release: Release) -> Path:
    if recipe.source is None:
        raise InputError(f"the {recipe.builder} recipe names no source")
    return release.root / recipe.source


def _tokenizer(recipe: Recipe, release: Release) -> tuple[GGUFSet, str | None]:
    from hubrelease.formats.gguf_header import read_gguf

    location = _str(recipe.options, "tokenizer_from")
    if location is None:
        raise InputError("the gguf-drafter recipe names no tokenizer_from")
    keep = lambda key: key.startswith("tokenizer.")  # noqa: E731
    if not location.startswith("hf://"):
        return read_gguf(release.root / location, keep_key=keep), None
    if release.hub is None:
        raise InputError(f"{location} is on the Hub: give --endpoint (or run where the Hub is reachable)")
    from hubrelease.hub.remote_headers import read_hub_gguf

    return read_hub_gguf(release.hub(), location, keep_key=keep)


def prepare(recipe: Recipe, release: Release) -> Prepared:
    """The inputs the recipe's builder would read now, computed as ``build`` computed them."""
    options, root = recipe.options, release.root
    if recipe.builder == "safetensors-drafter":
        return Prepared(drafter_inputs(recipe.builder, _source(recipe, release), root))
    if recipe.builder == "gguf-drafter":
        model, uri = _tokenizer(recipe, release)
        return Prepared(drafter_inputs(recipe.builder, _source(recipe, release), root, model, uri), model)
    if recipe.builder == "eval":
        files = [root / p for p in _list(options, "sources")]
        files += [root / str(options[k]) for k in ("spec", "prompts") if k in options]
        return Prepared(file_inputs(files, root))
    if recipe.builder == "speculators-drafter":
        location = _str(options, "verifier_config", "") or ""
        local = [] if location.startswith("hf://") or not location else [root / location]
        return Prepared(
            drafter_inputs(recipe.builder, _source(recipe, release), root) + file_inputs(local, root)
        )
    if recipe.builder == "eval-results":
        return Prepared(file_inputs([_source(recipe, release)], root))
    if recipe.builder == "dataset-card":
        tokenizer = _str(options, "tokenizer")
        data = _source(recipe, release)
        return Prepared(file_inputs(dataset_files(data, root / tokenizer if tokenizer else None), root))
    raise InputError(f"{recipe.builder!r} is not a hubrelease builder")


def run(recipe: Recipe, out: str, release: Release, prepared: Prepared, work: Path) -> list[Path]:
    """Run the builder with ``out`` under ``work``; the files written (paths under ``work``)."""
    options = recipe.options
    if recipe.builder == "safetensors-drafter":
        from hubrelease.builders.safetensors_drafter import build_safetensors_drafter

        files = build_safetensors_drafter(
            _source(recipe, release),
            work / out,
            cast="keep" if options.get("dtype") == "keep" else "bf16",
            max_shard_size=parse_size(_str(options, "max_shard_size")) or None,
        )
        return [f.path for f in files]
    if recipe.builder == "gguf-drafter":
        from hubrelease.builders.gguf_drafter import OutType, build_gguf_drafter
        from hubrelease.formats.dflash import Flavor

        flavor = _str(options, "flavor")
        outtype = _str(options, "outtype")
        if flavor not in ("ik", "mainline") or outtype not in ("f32", "f16", "bf16", "q8_0"):
            raise InputError(f"the gguf-drafter recipe has flavor {flavor!r}, outtype {outtype!r}")
        files = build_gguf_drafter(
            _source(recipe, release),
            work / out,
            flavor=cast(Flavor, flavor),
            outtype=cast(OutType, outtype),
            tokenizer_from=prepared.tokenizer,
            split_max_size=parse_size(_str(options, "split_max_size")),
            jobs=release.jobs,
        )
        return [f.path for f in files]
    if recipe.builder == "eval":
        return [_run_eval(recipe, out, release, work)]
    if recipe.builder == "speculators-drafter":
        return _run_speculators(recipe, out, release, work)
    if recipe.builder == "eval-results":
        return [_run_eval_results(recipe, out, release, work)]
    return [_run_dataset_card(recipe, out, release, work)]


def _run_speculators(recipe: Recipe, out: str, release: Release, work: Path) -> list[Path]:
    from hubrelease.builders.speculators_drafter import Verifier, build_speculators_drafter
    from hubrelease.formats.safetensors_header import read_json_object

    options = recipe.options
    verifier, location = _str(options, "verifier") or "", _str(options, "verifier_config") or ""
    if location.startswith("hf://"):
        if release.hub is None:
            raise InputError(f"{location} is on the Hub: give --endpoint (or run where the Hub is reachable)")
        from hubrelease.hub.remote_headers import RemoteRepo, parse_location

        where = parse_location(location)
        config = RemoteRepo(release.hub(), where.repo_id, where.revision, where.repo_type).read_json(
            where.path
        )
    else:
        config = read_json_object(release.root / location)
    files = build_speculators_drafter(
        _source(recipe, release),
        work / out,
        Verifier.from_config(verifier, config, location),
        cast="keep" if options.get("dtype") == "keep" else "bf16",
        max_shard_size=parse_size(_str(options, "max_shard_size")) or None,
    )
    return [f.path for f in files]


def _run_eval_results(recipe: Recipe, out: str, release: Release, work: Path) -> Path:
    from hubrelease.builders.eval_results import render
    from hubrelease.fsutil import atomic_write_bytes

    source = recipe.source or ""
    pin = next((e for e in release.manifest.evaluation_files if e.path == source), None)
    if pin is None:
        raise InputError(f"the eval-results recipe's evaluation file {source!r} is not in evaluations")
    target = work / out
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, render(release.manifest, pin, release.root, _str(recipe.options, "dataset")))
    return target


def _run_eval(recipe: Recipe, out: str, release: Release, work: Path) -> Path:
    from hubrelease.builders.evaluation import Source, build_evaluation, llama_options, write_evaluation
    from hubrelease.evaluation.infer import SpecOptions
    from hubrelease.evaluation.ingest import ServingOptions
    from hubrelease.evaluation.spec import EvaluationSpec, load_spec

    options, root = recipe.options, release.root
    paths = _list(options, "sources")
    configurations = _list(options, "configurations") or [""] * len(paths)
    sources = [Source(root / p, c or None) for p, c in zip(paths, configurations, strict=False)]
    spec = _str(options, "spec")
    prompts = _str(options, "prompts")
    concurrency = options.get("concurrency_if_unset")
    allow_incomplete = options.get("allow_incomplete") is True
    evaluation = build_evaluation(
        sources,
        load_spec(root / spec) if spec else EvaluationSpec(),
        spec_options=SpecOptions(
            *(
                _str(options, k)
                for k in ("hardware", "target", "title", "baseline", "treatment", "primary", "fit_range")
            )
        ),
        prompts=root / prompts if prompts else None,
        relative_to=(root / out).parent,
        serving_options=ServingOptions(
            concurrency if isinstance(concurrency, int) else None,
            options.get("flushed_cache") is True,
            allow_incomplete,
        ),
        llama_options=llama_options(_str(options, "columns"), allow_incomplete, release.manifest_path),
    )
    target = work / out
    target.parent.mkdir(parents=True, exist_ok=True)
    write_evaluation(evaluation, target)
    return target


def _run_dataset_card(recipe: Recipe, out: str, release: Release, work: Path) -> Path:
    from hubrelease.builders.dataset_card import CardOptions, dataset_card_text
    from hubrelease.fsutil import atomic_write_text

    options, root = recipe.options, release.root
    tokenizer = _str(options, "tokenizer")
    _, text = dataset_card_text(
        _source(recipe, release),
        root / out,
        manifest=release.manifest,
        tokenizer=root / tokenizer if tokenizer else None,
        count_column=_str(options, "count_column", "completion_tokens") or "completion_tokens",
        options=CardOptions(
            license=_str(options, "license"),
            source_datasets=tuple(_list(options, "source_datasets")),
            languages=tuple(_list(options, "languages")),
            attribution=tuple(_list(options, "attribution")),
        ),
    )
    target = work / out
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, text)
    return target
