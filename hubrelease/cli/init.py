"""`hubrelease init`: write a first manifest for a folder, every size and digest computed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from hubrelease.cli import output
from hubrelease.cli.options import JobsOpt, JsonOpt

if TYPE_CHECKING:
    pass

EXAMPLES = """
Examples:

  hubrelease init ./my-drafter --repo-id acme/my-drafter --license apache-2.0

  hubrelease init . --base-model Qwen/Qwen3-8B --exclude 'checkpoints/' --exclude '*.log'

  hubrelease init ./data --repo-type dataset --out data.yaml --force --json

Files are hashed in parallel (cached for the next verify); *.gguf / *.safetensors become variants,
the largest (or --recommended) is recommended, README / docs are doc, evaluation JSON files go to
`evaluations`. .gitignore rules and --exclude leave files out; the output passes `hubrelease verify`.
"""


def init(
    directory: Annotated[Path, typer.Argument(help="Release folder to describe.", show_default=False)],
    repo_id: Annotated[
        str | None, typer.Option("--repo-id", help="Hub repo id (namespace/name) to publish to.")
    ] = None,
    repo_type: Annotated[
        Literal["model", "dataset"], typer.Option("--repo-type", help="model | dataset.")
    ] = "model",
    license_id: Annotated[
        str | None,
        typer.Option("--license", help="Hub licence id (default: the README's, else 'unknown')."),
    ] = None,
    base_model: Annotated[
        list[str] | None, typer.Option("--base-model", help="Base model repo id (repeatable).")
    ] = None,
    *,
    base_model_relation: Annotated[
        Literal["adapter", "merge", "quantized", "finetune"] | None,
        typer.Option("--base-model-relation", help="How the release relates to --base-model."),
    ] = None,
    license_name: Annotated[
        str | None, typer.Option("--license-name", help="Licence name, with --license other.")
    ] = None,
    license_link: Annotated[
        str | None, typer.Option("--license-link", help="Licence URL or file, with --license other.")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            help="Manifest to write (default: DIR/hubrelease.yaml); elsewhere, it records `root:` DIR.",
            show_default=False,
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", help="gitignore-style pattern to leave out (repeatable)."),
    ] = None,
    recommended: Annotated[
        str | None, typer.Option("--recommended", help="File to mark recommended (default: largest weights).")
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing manifest.")] = False,
    jobs: JobsOpt = None,
    json_mode: JsonOpt = False,
) -> None:
    """Describe every file in DIR in a new, commented manifest that passes `verify` as written."""
    from hubrelease.cli.written import print_written, written_payload
    from hubrelease.onboarding.init import InitOptions, init_manifest

    options = InitOptions(
        root=directory,
        out=out or directory / "hubrelease.yaml",
        repo_id=repo_id,
        repo_type=repo_type,
        license=license_id,
        base_model=tuple(base_model or ()),
        base_model_relation=base_model_relation,
        license_name=license_name,
        license_link=license_link,
        exclude=tuple(exclude or ()),
        recommended=recommended,
        force=force,
        threads=jobs,
    )
    with output.progress(json_mode) as progress:
        result = init_manifest(options, progress)
    manifest = result.manifest
    if json_mode:
        output.emit_json(
            written_payload("init", result.path, manifest, result.warnings, ignored=list(result.ignored))
        )
        return
    print_written(
        manifest,
        result.warnings,
        f"wrote {result.path}: {len(manifest.artifacts)} artifact(s), {len(manifest.evaluations)} "
        f"evaluation(s), {len(result.ignored)} ignored",
    )


def register(app: typer.Typer) -> None:
    app.command("init", epilog=EXAMPLES)(init)
