"""`hubrelease add` and `hubrelease rm`: edit a manifest's artifact list in place, comments kept."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from hubrelease.cli import output
from hubrelease.cli.options import DirOpt, JobsOpt, JsonOpt, ManifestArg

ADD_EXAMPLES = """
Examples:

  hubrelease add hubrelease.yaml model-Q4_K_M.gguf --role variant

  hubrelease add hubrelease.yaml build/out.gguf --path-in-repo drafter.gguf

  hubrelease add hubrelease.yaml *.gguf            # after a rebuild: old -> new size and digest

A file already listed keeps its role, description and comments; only size, sha256 and
composition are refreshed. A valid evaluation JSON file is added to `evaluations`.
"""

# The manifest's ArtifactRole, spelled out so `hubrelease --help` need not import pydantic models
# (tests/cli/test_init_add_import.py checks that the two agree).
RoleChoice = Literal["recommended", "variant", "benchmark", "data", "doc"]

RM_EXAMPLES = """
Examples:

  hubrelease rm hubrelease.yaml old-Q8_0.gguf

  hubrelease rm hubrelease.yaml results/h200.json   # evaluation files are removed too

PATH is the path in the repo (the manifest's `path`). Nothing is written if one is not listed.
"""


def add(
    manifest: ManifestArg,
    files: Annotated[list[Path], typer.Argument(help="Files to add or refresh.", show_default=False)],
    role: Annotated[
        RoleChoice | None,
        typer.Option("--role", help="Role (default: guessed for new entries, kept otherwise)."),
    ] = None,
    path_in_repo: Annotated[
        str | None, typer.Option("--path-in-repo", help="Path on the Hub when it differs (one FILE only).")
    ] = None,
    directory: DirOpt = None,
    *,
    jobs: JobsOpt = None,
    json_mode: JsonOpt = False,
) -> None:
    """Add files to a manifest, or refresh their size, sha256 and composition after they changed."""
    from hubrelease.onboarding.edit import add_files

    with output.progress(json_mode) as progress:
        result = add_files(
            manifest,
            files,
            role=role,
            path_in_repo=path_in_repo,
            root=directory,
            threads=jobs,
            progress=progress,
        )
    if json_mode:
        output.emit_document(
            "add",
            manifest=str(manifest),
            files=[c.to_dict() for c in result.changes],
            warnings=list(result.warnings),
        )
        return
    for warning in result.warnings:
        output.warn_line(warning)
    for change in result.changes:
        if change.status == "changed" and {"size", "sha256"} & set(change.changed_keys):
            output.value_line(
                f"changed {change.path}: size {change.old_size} -> {change.size}, "
                f"sha256 {change.old_sha256} -> {change.sha256}"
            )
        elif change.status == "changed":
            output.value_line(f"changed {change.path}: {', '.join(change.changed_keys)}")
        else:
            output.value_line(f"{change.status} {change.path} ({change.size} bytes)")


def rm(
    manifest: ManifestArg,
    paths: Annotated[list[str], typer.Argument(help="Repo paths to remove.", show_default=False)],
    json_mode: JsonOpt = False,
) -> None:
    """Remove artifacts or evaluation files from a manifest (the files themselves are not touched)."""
    from hubrelease.onboarding.edit import remove_paths

    removed = remove_paths(manifest, paths)
    if json_mode:
        output.emit_document("rm", manifest=str(manifest), removed=removed)
        return
    for path in removed:
        output.value_line(f"removed {path}")


def register(app: typer.Typer) -> None:
    app.command("add", epilog=ADD_EXAMPLES)(add)
    app.command("rm", epilog=RM_EXAMPLES)(rm)
