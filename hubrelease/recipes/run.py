"""Re-run one recipe: the inputs it would read now (by digest), then the builder into a work folder.

Every path in a recipe is relative to the release folder and is checked before it is read or
written (``recipes.confine``); outputs go under the work folder at the same relative paths, never
into the release. Paths a builder records inside its output (evaluation
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
from hubrelease.recipes.confine import Confinement
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
    inputs: tuple[Path, ...] = ()
    """Folders outside the release that recipes may read from (``rebuild --inputs``), resolved."""


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


def _tokenizer(recipe: Recipe, release: Release, confinement: Confinement) -> tuple[GGUFSet, str | None]:
    from hubrelease.formats.gguf_header import read_gguf

    location = _str(recipe.options, "tokenizer_from")
    if location is None:
        raise InputError("the gguf-drafter recipe names no tokenizer_from")
    keep = lambda key: key.startswith("tokenizer.")  # noqa: E731
    if not location.startswith("hf://"):
        path = confinement.file(release.root / location, "options.tokenizer_from", location)
        confinement.folder(path.parent, "options.tokenizer_from", location)  # the shards of a split set
        return read_gguf(path, keep_key=keep), None
    if release.hub is None:
        raise InputError(f"{location} is on the Hub: give --endpoint (or run where the Hub is reachable)")
    from hubrelease.hub.remote_headers import read_hub_gguf

    return read_hub_gguf(release.hub(), location, keep_key=keep)


def _named(options: dict[str, Any], keys: tuple[str, ...]) -> list[tuple[str, str]]:
    """(field, path) of each path option among ``keys``, a list option item by item."""
    named: list[tuple[str, str]] = []
    for key in keys:
        value = options.get(key)
        if isinstance(value, list):
            named += [(f"options.{key}[{n}]", str(v)) for n, v in enumerate(value)]
        elif value is not None:
            named.append((f"options.{key}", str(value)))
    return named


def prepare(recipe: Recipe, release: Release, confinement: Confinement) -> Prepared:
    """The inputs the recipe's builder would read now, computed as ``build`` computed them, each path
    checked by ``confinement`` before a byte of it is read."""
    options, root, screen = recipe.options, release.root, confinement.input
    if recipe.builder == "eval":
        files = [confinement.file(root / p, where, p) for where, p in _named(options, _EVAL_PATHS)]
        return Prepared(file_inputs(files, root))
    source = _source(recipe, release)
    confinement.folder(source, "source", str(recipe.source))
    if recipe.builder == "safetensors-drafter":
        return Prepared(drafter_inputs(recipe.builder, source, root, screen=screen))
    if recipe.builder == "gguf-drafter":
        model, uri = _tokenizer(recipe, release, confinement)
        return Prepared(drafter_inputs(recipe.builder, source, root, model, uri, screen=screen), model)
    if recipe.builder == "speculators-drafter":
        location = _str(options, "verifier_config", "") or ""
        local = [] if location.startswith("hf://") or not location else [root / location]
        return Prepared(
            drafter_inputs(recipe.builder, source, root, screen=screen)
            + file_inputs(
                local, root, lambda path, name: confinement.file(path, "options.verifier_config", name)
            )
        )
    if recipe.builder == "eval-results":
        return Prepared(file_inputs([source], root, screen))
    if recipe.builder == "dataset-card":
        tokenizer = _str(options, "tokenizer")
        if tokenizer:
            confinement.file(root / tokenizer, "options.tokenizer", tokenizer)
        files = dataset_files(source, root / tokenizer if tokenizer else None)
        return Prepared(file_inputs(files, root, screen))
    raise InputError(f"{recipe.builder!r} is not a hubrelease builder")


_EVAL_PATHS = ("sources", "spec", "prompts")


def run(recipe: Recipe, out: str, release: Release, prepared: Prepared, target: Path) -> list[Path]:
    """Run the builder writing to ``target`` (``out`` in the work folder, already confined there);
    the files written."""
    options = recipe.options
    if recipe.builder == "safetensors-drafter":
        from hubrelease.builders.safetensors_drafter import build_safetensors_drafter

        files = build_safetensors_drafter(
            _source(recipe, release),
            target,
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
            target,
            flavor=cast(Flavor, flavor),
            outtype=cast(OutType, outtype),
            tokenizer_from=prepared.tokenizer,
            split_max_size=parse_size(_str(options, "split_max_size")),
            jobs=release.jobs,
        )
        return [f.path for f in files]
    if recipe.builder == "eval":
        return [_run_eval(recipe, out, release, target)]
    if recipe.builder == "speculators-drafter":
        return _run_speculators(recipe, release, target)
    if recipe.builder == "eval-results":
        return [_run_eval_results(recipe, release, target)]
    return [_run_dataset_card(recipe, out, release, target)]


def _run_speculators(recipe: Recipe, release: Release, target: Path) -> list[Path]:
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
        target,
        Verifier.from_config(verifier, config, location),
        cast="keep" if options.get("dtype") == "keep" else "bf16",
        max_shard_size=parse_size(_str(options, "max_shard_size")) or None,
    )
    return [f.path for f in files]


def _run_eval_results(recipe: Recipe, release: Release, target: Path) -> Path:
    from hubrelease.evaluation.eval_results import render
    from hubrelease.fsutil import atomic_write_bytes

    source = recipe.source or ""
    pin = next((e for e in release.manifest.evaluation_files if e.path == source), None)
    if pin is None:
        raise InputError(f"the eval-results recipe's evaluation file {source!r} is not in evaluations")
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, render(release.manifest, pin, release.root, _str(recipe.options, "dataset")))
    return target


def _run_eval(recipe: Recipe, out: str, release: Release, target: Path) -> Path:
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
            **{
                k: _str(options, k)
                for k in ("hardware", "target", "title", "baseline", "treatment", "primary", "fit_range")
            }
        ),
        prompts=root / prompts if prompts else None,
        relative_to=(root / out).parent,
        serving_options=ServingOptions(
            concurrency_if_unset=concurrency if isinstance(concurrency, int) else None,
            flushed_cache=options.get("flushed_cache") is True,
            allow_incomplete=allow_incomplete,
        ),
        llama_options=llama_options(_str(options, "columns"), allow_incomplete, release.manifest_path),
    )
    target.parent.mkdir(parents=True, exist_ok=True)
    write_evaluation(evaluation, target)
    return target


def _run_dataset_card(recipe: Recipe, out: str, release: Release, target: Path) -> Path:
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
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target, text)
    return target
