"""`hubrelease build safetensors-drafter`, `gguf-drafter` and `speculators-drafter`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import EndpointOpt, JobsOpt, JsonOpt, hub_session

if TYPE_CHECKING:
    from hubrelease.builders.safetensors_drafter import BuiltFile, Cast

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
    from hubrelease.recipes.drafter_build import SafetensorsBuild, build_safetensors

    build = SafetensorsBuild(
        source=source, out=out, dtype=_cast(dtype), max_shard_size=max_shard_size, manifest=manifest
    )
    with output.progress(json_mode) as progress:
        files = build_safetensors(build, progress=progress, warn=output.warn_line)
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
    from hubrelease.recipes.drafter_build import GGUFBuild, build_gguf

    if flavor not in ("ik", "mainline"):
        raise typer.BadParameter("--flavor must be ik or mainline")
    if outtype not in ("f32", "f16", "bf16", "q8_0"):
        raise typer.BadParameter("--outtype must be f32, f16, bf16 or q8_0")
    build = GGUFBuild(
        source=source,
        out=out,
        flavor="ik" if flavor == "ik" else "mainline",
        outtype=outtype,  # type: ignore[arg-type]
        tokenizer_from=tokenizer_from,
        split_max_size=split_max_size,
        jobs=jobs,
        manifest=manifest,
    )
    with output.progress(json_mode) as progress:
        files = build_gguf(build, hub=lambda: hub_session(endpoint), progress=progress)
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
    from hubrelease.recipes.drafter_build import SpeculatorsBuild, build_speculators

    build = SpeculatorsBuild(
        source=source,
        out=out,
        verifier=verifier,
        verifier_config=verifier_config,
        dtype=_cast(dtype),
        max_shard_size=max_shard_size,
        manifest=manifest,
    )
    with output.progress(json_mode) as progress:
        files = build_speculators(build, hub=lambda: hub_session(endpoint), progress=progress)
    _report(files, json_mode)


def register(build_app: typer.Typer) -> None:
    build_app.command("safetensors-drafter", epilog=ST_EXAMPLES)(safetensors_drafter)
    build_app.command("gguf-drafter", epilog=GGUF_EXAMPLES)(gguf_drafter)
    build_app.command("speculators-drafter", epilog=SPEC_EXAMPLES)(speculators_drafter)
