"""``build safetensors-drafter``, ``gguf-drafter`` and ``speculators-drafter`` as one library call
each: the build, and with a manifest, each output recorded there with the recipe that re-runs it.

A manifest is loaded and checked before anything is built (``manifest.record``: it parses, ``out``
lands inside its release folder), so a wrong one costs no build.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hubrelease.builders.safetensors_drafter import BuiltFile, Cast
from hubrelease.errors import InputError
from hubrelease.formats.gguf_header import GGUFSet, read_gguf
from hubrelease.fsutil import relative_inside
from hubrelease.manifest.record import ArtifactRecorder
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.recipes.inputs import file_inputs
from hubrelease.recipes.record import drafter_inputs, make_recipe
from hubrelease.sizes import parse_size

if TYPE_CHECKING:
    from huggingface_hub import HfApi

    from hubrelease.builders.gguf_drafter import OutType
    from hubrelease.formats.dflash import Flavor

Hub = Callable[[], "HfApi"]
"""Makes the Hub client, called only when an input is an ``hf://`` location."""


@dataclass(frozen=True, kw_only=True)
class SafetensorsBuild:
    """``build safetensors-drafter``: a training checkpoint to SGLang-ready safetensors."""

    source: Path
    out: Path
    dtype: Cast = "bf16"
    max_shard_size: str | None = None
    """As typed (``2G``): the recipe records the text."""
    manifest: Path | None = None
    """Record each output there as an artifact, with its recipe."""


@dataclass(frozen=True, kw_only=True)
class GGUFBuild:
    """``build gguf-drafter``: a drafter folder streamed into GGUF."""

    source: Path
    out: Path
    flavor: Flavor
    outtype: OutType
    tokenizer_from: str | None = None
    """A target GGUF whose tokenizer keys are copied: a path, or ``hf://`` (header only)."""
    split_max_size: str | None = None
    jobs: int | None = None
    manifest: Path | None = None


@dataclass(frozen=True, kw_only=True)
class SpeculatorsBuild:
    """``build speculators-drafter``: a checkpoint in the speculators format, naming its verifier."""

    source: Path
    out: Path
    verifier: str
    """``ORG/NAME@<40-hex commit>``."""
    verifier_config: str | None = None
    """The verifier's config.json, a path or ``hf://`` (default: read from the Hub at that commit)."""
    dtype: Cast = "bf16"
    max_shard_size: str | None = None
    manifest: Path | None = None


def build_safetensors(
    build: SafetensorsBuild,
    *,
    progress: Progress = NULL_PROGRESS,
    warn: Callable[[str], None] = lambda _: None,
) -> list[BuiltFile]:
    """Build the safetensors drafter (``warn`` hears of dropped ``auto_map`` entries) and record it."""
    from hubrelease.builders.safetensors_drafter import build_safetensors_drafter

    recorder = _recorder(build.manifest, build.out)
    files = build_safetensors_drafter(
        build.source,
        build.out,
        cast=build.dtype,
        max_shard_size=parse_size(build.max_shard_size) or None,
        progress=progress,
        warn=warn,
    )
    if recorder is not None:
        options: dict[str, Any] = {"dtype": build.dtype}
        if build.max_shard_size:
            options["max_shard_size"] = build.max_shard_size
        _record(recorder, files, "safetensors-drafter", build, options=options)
    return files


def build_gguf(build: GGUFBuild, *, hub: Hub, progress: Progress = NULL_PROGRESS) -> list[BuiltFile]:
    """Build the GGUF drafter (the tokenizer keys read from the Hub when ``hf://``) and record it."""
    from hubrelease.builders.gguf_drafter import build_gguf_drafter

    tokenizer: Path | GGUFSet | None = Path(build.tokenizer_from) if build.tokenizer_from else None
    recorded = None
    recorder = _recorder(build.manifest, build.out)
    if build.tokenizer_from is not None and build.tokenizer_from.startswith("hf://"):
        from hubrelease.hub.remote_headers import read_hub_gguf

        tokenizer, recorded = read_hub_gguf(hub(), build.tokenizer_from, keep_key=_tokenizer_key)
    files = build_gguf_drafter(
        build.source,
        build.out,
        flavor=build.flavor,
        outtype=build.outtype,
        tokenizer_from=tokenizer,
        split_max_size=parse_size(build.split_max_size),
        jobs=build.jobs,
        progress=progress,
    )
    if recorder is None:
        return files
    options: dict[str, Any] = {"flavor": build.flavor, "outtype": build.outtype}
    if build.split_max_size:
        options["split_max_size"] = build.split_max_size
    if recorded is not None:  # the hf:// location at the commit that was read
        options["tokenizer_from"] = recorded
    elif build.tokenizer_from is not None:
        # Relative to the release folder, like ``source``, so the recipe reads the same on any machine.
        options["tokenizer_from"] = recorder.relative(Path(build.tokenizer_from))
        tokenizer = read_gguf(Path(build.tokenizer_from), keep_key=_tokenizer_key)
    model = tokenizer if isinstance(tokenizer, GGUFSet) else None
    _record(recorder, files, "gguf-drafter", build, options=options, tokenizer=model, tokenizer_uri=recorded)
    return files


def build_speculators(
    build: SpeculatorsBuild, *, hub: Hub, progress: Progress = NULL_PROGRESS
) -> list[BuiltFile]:
    """Build the speculators drafter against its verifier's config.json and record it; a recorded
    verifier must be pinned in the manifest's ``pins.targets`` at that commit."""
    from hubrelease.builders.speculators_drafter import Verifier, build_speculators_drafter

    recorder = _recorder(build.manifest, build.out)
    repo_id, _, commit = build.verifier.partition("@")
    location = build.verifier_config or f"hf://{repo_id}@{commit}/config.json"
    pinned = Verifier.from_config(build.verifier, _verifier_json(location, hub), location)
    if recorder is not None:
        _check_verifier_pin(recorder, pinned.repo_id, pinned.commit, build.manifest)
    files = build_speculators_drafter(
        build.source,
        build.out,
        pinned,
        cast=build.dtype,
        max_shard_size=parse_size(build.max_shard_size) or None,
        progress=progress,
    )
    if recorder is None:
        return files
    options: dict[str, Any] = {"dtype": build.dtype, "verifier": f"{pinned.repo_id}@{pinned.commit}"}
    local = build.verifier_config is not None and not location.startswith("hf://")
    # Where the verifier's config.json was read: relative to the release folder, or its hf:// location.
    options["verifier_config"] = recorder.relative(Path(location)) if local else location
    if build.max_shard_size:
        options["max_shard_size"] = build.max_shard_size
    extra = (Path(location),) if local else ()
    _record(recorder, files, "speculators-drafter", build, options=options, extra_inputs=extra)
    return files


def _tokenizer_key(key: str) -> bool:
    return key.startswith("tokenizer.")


def _recorder(manifest: Path | None, out: Path) -> ArtifactRecorder | None:
    """The manifest checked before anything is built (parses, validates, ``out`` inside its folder)."""
    return ArtifactRecorder.prepare(manifest, out) if manifest is not None else None


def _record(
    recorder: ArtifactRecorder,
    files: list[BuiltFile],
    builder: str,
    build: SafetensorsBuild | GGUFBuild | SpeculatorsBuild,
    *,
    options: dict[str, Any],
    tokenizer: GGUFSet | None = None,
    tokenizer_uri: str | None = None,
    extra_inputs: tuple[Path, ...] = (),
) -> None:
    """One artifact per output in the manifest, each with the recipe that re-runs the build
    (``recipes.record``: inputs by digest, tool versions)."""
    inputs = drafter_inputs(builder, build.source, recorder.root, tokenizer, tokenizer_uri)
    inputs += file_inputs(extra_inputs, recorder.root)
    recipe = make_recipe(
        builder, recorder.root, source=build.source, out=build.out, options=options, inputs=inputs
    )
    config = relative_inside(build.source / "config.json", recorder.root)
    outputs: list[tuple[Path, dict[str, Any]]] = []
    for index, built in enumerate(files):
        entry: dict[str, Any] = {"size": built.size, "sha256": built.sha256, "recipe": recipe}
        if builder == "gguf-drafter" and index == 0:
            # Lint and composition sit on the first shard; lint reads the whole split set from it.
            entry |= {"composition": read_gguf(built.path).composition(), "lint": True, "lint_config": config}
        elif builder == "speculators-drafter" and index == 0:
            # The weights against their own (speculators) config.json, and its verifier against the pins.
            entry |= {"lint": True, "lint_config": recorder.relative(built.path.parent / "config.json")}
        outputs.append((built.path, entry))
    recorder.record(outputs)


def _verifier_json(location: str, hub: Hub) -> dict[str, Any]:
    if location.startswith("hf://"):
        from hubrelease.hub.remote_headers import RemoteRepo, parse_location

        where = parse_location(location)
        return RemoteRepo(hub(), where.repo_id, where.revision, where.repo_type).read_json(where.path)
    from hubrelease.formats.safetensors_header import read_json_object

    return read_json_object(Path(location))


def _check_verifier_pin(recorder: ArtifactRecorder, repo_id: str, commit: str, manifest: Path | None) -> None:
    """A speculator's verifier is pinned by repo and commit in the manifest it is recorded in."""
    pins = {p.repo_id: p.revision for p in recorder.target.manifest.pins.targets}
    if pins.get(repo_id) != commit:
        found = f"at {pins[repo_id]}" if repo_id in pins else "not pinned"
        raise InputError(
            f"the verifier {repo_id}@{commit} must be pinned in pins.targets at that commit ({found}; "
            "`hubrelease lock` pins a branch)",
            path=manifest,
            field="pins.targets",
        )
