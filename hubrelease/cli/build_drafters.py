"""`hubrelease build safetensors-drafter` and `hubrelease build gguf-drafter`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hubrelease.cli import output
from hubrelease.cli.options import EndpointOpt, JobsOpt, JsonOpt, is_hub_uri
from hubrelease.fsutil import relative_inside
from hubrelease.sizes import parse_size

if TYPE_CHECKING:
    from hubrelease.builders.safetensors_drafter import BuiltFile
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
    options: dict[str, Any],
    tokenizer: GGUFSet | None = None,
    tokenizer_uri: str | None = None,
) -> None:
    """One artifact per output in the manifest checked before the build (``manifest.record``), each
    with the recipe that re-runs the build (``recipes.record``: inputs by digest, tool versions)."""
    from hubrelease.formats.gguf_header import read_gguf
    from hubrelease.recipes.record import drafter_inputs, make_recipe

    inputs = drafter_inputs(builder, source, recorder.root, tokenizer, tokenizer_uri)
    recipe = make_recipe(builder, recorder.root, source=source, out=out, options=options, inputs=inputs)
    config = relative_inside(source / "config.json", recorder.root)
    outputs: list[tuple[Path, dict[str, Any]]] = []
    for index, built in enumerate(files):
        entry: dict[str, Any] = {"size": built.size, "sha256": built.sha256, "recipe": recipe}
        if builder == "gguf-drafter" and index == 0:
            # Lint and composition sit on the first shard; lint reads the whole split set from it.
            entry |= {"composition": read_gguf(built.path).composition(), "lint": True, "lint_config": config}
        outputs.append((built.path, entry))
    recorder.record(outputs)


def _recorder(manifest: Path | None, out: Path) -> ArtifactRecorder | None:
    """``--manifest`` checked before anything is built (parses, validates, ``out`` inside its folder)."""
    from hubrelease.manifest.record import ArtifactRecorder

    return ArtifactRecorder.prepare(manifest, out) if manifest is not None else None


def _report(files: list[BuiltFile], json_mode: bool) -> None:
    if json_mode:
        output.emit_json(
            {
                "schema_version": 1,
                "files": [{"path": str(f.path), "size": f.size, "sha256": f.sha256} for f in files],
            }
        )
        return
    for built in files:
        output.stdout.print(f"{built.sha256}  {built.path}  ({built.size} bytes)", markup=False)


def safetensors_drafter(
    source: Annotated[
        Path, typer.Argument(help="Training checkpoint folder: config.json + .safetensors files.")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output folder.")],
    dtype: Annotated[str, typer.Option("--dtype", help="bf16 (cast) or keep (source dtypes).")] = "bf16",
    max_shard_size: Annotated[
        str | None,
        typer.Option("--max-shard-size", help="Shard above this size (e.g. 2G); default one file."),
    ] = None,
    manifest: ManifestOpt = None,
    json_mode: JsonOpt = False,
) -> None:
    """Drop rotary buffers, cast, check the tensor set, write SGLang-ready safetensors + normalised config.json."""
    from hubrelease.builders.safetensors_drafter import Cast, build_safetensors_drafter

    if dtype not in ("bf16", "keep"):
        raise typer.BadParameter("--dtype must be bf16 or keep")
    cast: Cast = "bf16" if dtype == "bf16" else "keep"
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
        _record(recorder, files, "safetensors-drafter", source, out, options)
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
        from hubrelease.hub import hub_api
        from hubrelease.hub.remote_headers import read_hub_gguf

        tokenizer, recorded = read_hub_gguf(
            hub_api(endpoint), str(tokenizer_from), keep_key=lambda key: key.startswith("tokenizer.")
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
        _record(recorder, files, "gguf-drafter", source, out, options, model, recorded)
    _report(files, json_mode)


def register(build_app: typer.Typer) -> None:
    build_app.command("safetensors-drafter", epilog=ST_EXAMPLES)(safetensors_drafter)
    build_app.command("gguf-drafter", epilog=GGUF_EXAMPLES)(gguf_drafter)
