"""`hubrelease build safetensors-drafter`, `gguf-drafter` and `speculators-drafter`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hubrelease.cli import output
from hubrelease.cli.options import EndpointOpt, JobsOpt, JsonOpt, hub_session, is_hub_uri

if TYPE_CHECKING:
    from hubrelease.builders.safetensors_drafter import BuiltFile, Cast
    from hubrelease.formats.gguf_header import GGUFSet
    from hubrelease.manifest.record import ArtifactRecorder

ST_EXAMPLES = """
Examples:

  hubrelease build safetensors-drafter runs/step-3228 --out release/

  hubrelease build safetensors-drafter runs/step-3228 --out release/ --max-shard-size 2G \\
      --manifest release/hubrelease.yaml
"""
GGUF_EXAMPLES = """
Examples:

  hubrelease build gguf-drafter release/ --flavor ik --outtype q8_0 \\
      --tokenizer-from Ornith-1.0-397B-A17B-IQ2_KS-00001-of-00005.gguf --out gguf/drafter-q8_0.gguf

  hubrelease build gguf-drafter release/ --flavor mainline --outtype bf16 --out gguf/drafter-bf16.gguf \\
      --split-max-size 2G --manifest gguf/hubrelease.yaml
"""

SPEC_EXAMPLES = """
Examples:

  hubrelease build speculators-drafter runs/step-3228 --out release/speculators \\
      --verifier Qwen/Qwen3-8B@0f0b1b59b879ccde1353e6ebd0fb10c204d4c544 --manifest release/hubrelease.yaml

  hubrelease build speculators-drafter checkpoint --out speculators --verifier-config ../target/config.json \\
      --verifier acme/tiny-target@4f1c...e2 --endpoint local

The verifier's config.json is read from the Hub at that commit (hf://REPO@COMMIT/config.json) unless
--verifier-config gives it. With --manifest the verifier must be pinned in pins.targets at that commit.
"""

DtypeOpt = Annotated[str, typer.Option("--dtype", help="bf16 (cast) or keep (source dtypes).")]
MaxShardOpt = Annotated[
    str | None, typer.Option("--max-shard-size", help="Shard above this size (e.g. 2G); default one file.")
]
ManifestOpt = Annotated[
    Path | None,
    typer.Option("--manifest", help="Record each output (path, size, sha256, recipe) as an artifact here."),
]


def _record(
    recorder: ArtifactRecorder,
    files: list[BuiltFile],
    builder: str,
    source: Path,
    out: Path,
    *,
    options: dict[str, Any],
    tokenizer: GGUFSet | None = None,
    tokenizer_uri: str | None = None,
    extra_inputs: tuple[Path, ...] = (),
) -> None:
    """One artifact per output in the manifest checked before the build (``manifest.record``), each
    with the recipe that re-runs the build (``recipes.record``: inputs by digest, tool versions)."""
    from hubrelease.formats.gguf_header import read_gguf
    from hubrelease.fsutil import relative_inside
    from hubrelease.recipes.inputs import file_inputs
    from hubrelease.recipes.record import drafter_inputs, make_recipe

    inputs = drafter_inputs(builder, source, recorder.root, tokenizer, tokenizer_uri)
    inputs += file_inputs(extra_inputs, recorder.root)
    recipe = make_recipe(builder, recorder.root, source=source, out=out, options=options, inputs=inputs)
    config = relative_inside(source / "config.json", recorder.root)
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


def _recorder(manifest: Path | None, out: Path) -> ArtifactRecorder | None:
    """``--manifest`` checked before anything is built (parses, validates, ``out`` inside its folder)."""
    from hubrelease.manifest.record import ArtifactRecorder

    return ArtifactRecorder.prepare(manifest, out) if manifest is not None else None


def _cast(dtype: str) -> Cast:
    if dtype not in ("bf16", "keep"):
        raise typer.BadParameter("--dtype must be bf16 or keep")
    return "bf16" if dtype == "bf16" else "keep"


def _report(files: list[BuiltFile], json_mode: bool) -> None:
    if json_mode:
        output.emit_document(
            None, files=[{"path": str(f.path), "size": f.size, "sha256": f.sha256} for f in files]
        )
        return
    for built in files:
        output.stdout.print(f"{built.sha256}  {built.path}  ({built.size} bytes)", markup=False)


def safetensors_drafter(
    source: Annotated[
        Path, typer.Argument(help="Training checkpoint folder: config.json + .safetensors files.")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder.")],
    dtype: DtypeOpt = "bf16",
    max_shard_size: MaxShardOpt = None,
    manifest: ManifestOpt = None,
    *,
    json_mode: JsonOpt = False,
) -> None:
    """Drop rotary buffers, cast, check the tensor set, write SGLang-ready safetensors + normalised config.json."""
    from hubrelease.builders.safetensors_drafter import build_safetensors_drafter
    from hubrelease.sizes import parse_size

    cast = _cast(dtype)
    shard = parse_size(max_shard_size)
    recorder = _recorder(manifest, out)
    with output.progress(json_mode) as progress:
        files = build_safetensors_drafter(
            source, out, cast=cast, max_shard_size=shard or None, progress=progress, warn=output.warn_line
        )
    if recorder is not None:
        options: dict[str, Any] = {"dtype": dtype} | (
            {"max_shard_size": max_shard_size} if max_shard_size else {}
        )
        _record(recorder, files, "safetensors-drafter", source, out, options=options)
    _report(files, json_mode)


def gguf_drafter(
    source: Annotated[
        Path, typer.Argument(help="Drafter folder: config.json + .safetensors (HF/SGLang layout).")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output .gguf (shards get -0000N-of-0000M).")],
    flavor: Annotated[
        str, typer.Option("--flavor", help="ik (ik_llama.cpp dflash-draft) or mainline (dflash).")
    ],
    outtype: Annotated[str, typer.Option("--outtype", help="f32, f16, bf16 or q8_0 (1-D tensors stay F32).")],
    tokenizer_from: Annotated[
        str | None,
        typer.Option(
            "--tokenizer-from",
            help="Target GGUF whose tokenizer.ggml.* keys are copied (a path, or hf://REPO[@REV]/FILE: header only).",
        ),
    ] = None,
    *,
    split_max_size: Annotated[
        str | None, typer.Option("--split-max-size", help="Split into shards of at most this size (e.g. 2G).")
    ] = None,
    jobs: JobsOpt = None,
    manifest: ManifestOpt = None,
    endpoint: EndpointOpt = None,
    json_mode: JsonOpt = False,
) -> None:
    """Stream a drafter into GGUF for ik_llama.cpp or mainline llama.cpp, rope base from the nested config."""
    from hubrelease.builders.gguf_drafter import OutType, build_gguf_drafter
    from hubrelease.formats.dflash import Flavor
    from hubrelease.formats.gguf_header import GGUFSet, read_gguf
    from hubrelease.sizes import parse_size

    if flavor not in ("ik", "mainline"):
        raise typer.BadParameter("--flavor must be ik or mainline")
    if outtype not in ("f32", "f16", "bf16", "q8_0"):
        raise typer.BadParameter("--outtype must be f32, f16, bf16 or q8_0")
    chosen: Flavor = "ik" if flavor == "ik" else "mainline"
    kind: OutType = outtype  # type: ignore[assignment]
    tokenizer: Path | GGUFSet | None = Path(tokenizer_from) if tokenizer_from else None
    recorded = None
    recorder = _recorder(manifest, out)
    if is_hub_uri(tokenizer_from):
        from hubrelease.hub.remote_headers import read_hub_gguf

        tokenizer, recorded = read_hub_gguf(
            hub_session(endpoint),
            str(tokenizer_from),
            keep_key=lambda key: key.startswith("tokenizer."),
        )
    with output.progress(json_mode) as progress:
        files = build_gguf_drafter(
            source,
            out,
            flavor=chosen,
            outtype=kind,
            tokenizer_from=tokenizer,
            split_max_size=parse_size(split_max_size),
            jobs=jobs,
            progress=progress,
        )
    if recorder is not None:
        options: dict[str, Any] = {"flavor": flavor, "outtype": outtype}
        if split_max_size:
            options["split_max_size"] = split_max_size
        if recorded is not None:  # the hf:// location at the commit that was read
            options["tokenizer_from"] = recorded
        elif tokenizer_from is not None:
            # Relative to the release folder, like ``source``, so the recipe reads the same on any machine.
            options["tokenizer_from"] = recorder.relative(Path(tokenizer_from))
            tokenizer = read_gguf(Path(tokenizer_from), keep_key=lambda key: key.startswith("tokenizer."))
        model = tokenizer if isinstance(tokenizer, GGUFSet) else None
        _record(
            recorder,
            files,
            "gguf-drafter",
            source,
            out,
            options=options,
            tokenizer=model,
            tokenizer_uri=recorded,
        )
    _report(files, json_mode)


def speculators_drafter(
    source: Annotated[
        Path, typer.Argument(help="DFlash / DFlash2 checkpoint folder: config.json + .safetensors files.")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Output folder (config.json + model.safetensors).")
    ],
    verifier: Annotated[
        str, typer.Option("--verifier", help="The target it drafts for: ORG/NAME@<40-hex commit>.")
    ],
    verifier_config: Annotated[
        str | None,
        typer.Option(
            "--verifier-config",
            help="The verifier's config.json (a path or hf://...); default: read from the Hub.",
        ),
    ] = None,
    dtype: DtypeOpt = "bf16",
    *,
    max_shard_size: MaxShardOpt = None,
    manifest: ManifestOpt = None,
    endpoint: EndpointOpt = None,
    json_mode: JsonOpt = False,
) -> None:
    """Write a speculators-format drafter (vLLM): speculators config.json naming the verifier, draft body tensors."""
    from hubrelease.builders.speculators_drafter import Verifier, build_speculators_drafter
    from hubrelease.sizes import parse_size

    cast = _cast(dtype)
    recorder = _recorder(manifest, out)
    repo_id, _, commit = verifier.partition("@")
    location = verifier_config or f"hf://{repo_id}@{commit}/config.json"
    pinned = Verifier.from_config(verifier, _verifier_json(location, endpoint), location)
    if recorder is not None:
        _check_verifier_pin(recorder, pinned.repo_id, pinned.commit, manifest)
    with output.progress(json_mode) as progress:
        files = build_speculators_drafter(
            source, out, pinned, cast=cast,
            max_shard_size=parse_size(max_shard_size) or None, progress=progress,
        )  # fmt: skip
    if recorder is not None:
        options: dict[str, Any] = {"dtype": dtype, "verifier": f"{pinned.repo_id}@{pinned.commit}"}
        local = verifier_config is not None and not is_hub_uri(verifier_config)
        # Where the verifier's config.json was read: relative to the release folder, or its hf:// location.
        options["verifier_config"] = recorder.relative(Path(location)) if local else location
        if max_shard_size:
            options["max_shard_size"] = max_shard_size
        extra = (Path(location),) if local else ()
        _record(recorder, files, "speculators-drafter", source, out, options=options, extra_inputs=extra)
    _report(files, json_mode)


def _verifier_json(location: str, endpoint: str | None) -> dict[str, Any]:
    if is_hub_uri(location):
        from hubrelease.hub.remote_headers import RemoteRepo, parse_location

        where = parse_location(location)
        return RemoteRepo(hub_session(endpoint), where.repo_id, where.revision, where.repo_type).read_json(
            where.path
        )
    from hubrelease.formats.safetensors_header import read_json_object

    return read_json_object(Path(location))


def _check_verifier_pin(recorder: ArtifactRecorder, repo_id: str, commit: str, manifest: Path | None) -> None:
    """A speculator's verifier is pinned by repo and commit in the manifest it is recorded in."""
    from hubrelease.errors import InputError

    pins = {p.repo_id: p.revision for p in recorder.target.manifest.pins.targets}
    if pins.get(repo_id) != commit:
        found = f"at {pins[repo_id]}" if repo_id in pins else "not pinned"
        raise InputError(
            f"the verifier {repo_id}@{commit} must be pinned in pins.targets at that commit ({found}; "
            "`hubrelease lock` pins a branch)",
            path=manifest,
            field="pins.targets",
        )


def register(build_app: typer.Typer) -> None:
    build_app.command("safetensors-drafter", epilog=ST_EXAMPLES)(safetensors_drafter)
    build_app.command("gguf-drafter", epilog=GGUF_EXAMPLES)(gguf_drafter)
    build_app.command("speculators-drafter", epilog=SPEC_EXAMPLES)(speculators_drafter)
