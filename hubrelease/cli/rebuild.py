"""`hubrelease rebuild`: re-run every recipe into a temporary folder and compare with the manifest."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import DirOpt, EndpointOpt, InputsOpt, JsonOpt, ManifestArg, TokenOpt, hub_session

if TYPE_CHECKING:
    from hubrelease.recipes.rebuild import OutputResult, RebuildReport

EXAMPLES = """
Examples:

  hubrelease rebuild hubrelease.yaml --check        # the CI gate: every recipe, every figure

  hubrelease rebuild hubrelease.yaml --json | jq '.results[] | select(.status != "identical")'

  hubrelease rebuild hubrelease.yaml --check -j 4 --endpoint local   # hf:// inputs from the local Hub

  hubrelease rebuild hubrelease.yaml --check --inputs ../example-target  # a tokenizer GGUF beside it

Statuses: identical; differs (with the first differing GGUF key or tensor, safetensors tensor, JSON
path or line); input-changed (which input, recorded and current digest); input-missing; tool-differs
(the bytes differ and a recorded library version differs from the one here); skipped (a recipe of an
external tool). Identical bytes under other library versions are identical, with a note.

Exit codes: 0 every rebuilt file identical (or without --check: the report was printed), 1 (--check)
a difference, 2 an input is missing, a recipe names a path it may not read or write, or the manifest
is invalid, 4 the Hub could not be reached.
"""


def _reason(result: OutputResult) -> str:
    if result.inputs:
        first = result.inputs[0]
        more = f" (and {len(result.inputs) - 1} more)" if len(result.inputs) > 1 else ""
        said = {
            "missing": "missing",
            "changed": "changed",
            "not-read": "no longer read",
            "new": "read but not recorded",
        }[first.problem]
        digests = ", ".join(
            part
            for part in (
                f"recorded {first.recorded}" if first.recorded else "",
                f"now {first.now}" if first.now else "",
            )
            if part
        )
        text = f"input {first.input} {said}" + (f": {digests}" if digests else "") + more
        if first.detail:
            text += f": {first.detail}"
        if result.detail:
            text += f"; {result.detail}"
        return text
    parts = [result.detail] if result.detail else []
    if result.tools:
        parts.append(
            "tool versions differ: "
            + ", ".join(f"{t.name} {t.recorded} recorded, {t.here} here" for t in result.tools)
        )
    if result.figures is not None:
        parts.append(f"{result.figures.matched} of {result.figures.compared} figures match")
        parts += [
            f"figure {d.path}: published {d.published}, rebuilt {d.rebuilt}"
            for d in result.figures.differing[:3]
        ]
    parts += result.notes
    return "; ".join(parts)


def _print(report: RebuildReport) -> None:
    from hubrelease.recipes.rebuild import STATUSES

    rows = [(r.status, r.output.path, r.builder, _reason(r)) for r in report.results]
    styles = {"identical": "green", "skipped": "dim"} | {
        s: "red" for s in ("differs", "input-changed", "input-missing", "tool-differs")
    }
    output.print_rows(("status", "file", "builder", "detail"), rows, styles=styles, what="files")
    counts = ", ".join(f"{report.count(s)} {s}" for s in STATUSES if report.count(s))
    output.info_line(f"{len(report.results)} files rebuilt from recipes: {counts or 'none has a recipe'}")


def rebuild(
    manifest: ManifestArg,
    check: Annotated[
        bool, typer.Option("--check", help="Exit 1 when any rebuilt file differs (the CI gate).")
    ] = False,
    directory: DirOpt = None,
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", min=1, help="Recipes run at once (default: all cores).")
    ] = None,
    inputs: InputsOpt = None,
    *,
    endpoint: EndpointOpt = None,
    token: TokenOpt = None,
    json_mode: JsonOpt = False,
) -> None:
    """Re-run every recipe (artifacts, evaluations, a built card) in a temporary folder and compare the
    bytes with the manifest: sizes, sha256 and, for evaluations, every figure."""
    from hubrelease.manifest import load_manifest, release_root
    from hubrelease.recipes.rebuild import rebuild as run_rebuild

    release = load_manifest(manifest)
    root = release_root(release, manifest, directory)
    with output.progress(json_mode) as progress:
        report = run_rebuild(
            release,
            manifest,
            root,
            jobs=jobs,
            hub=lambda: hub_session(endpoint, token),
            progress=progress,
            inputs=inputs or (),
        )
    if json_mode:
        output.emit_document(None, **report.to_dict())
    else:
        _print(report)
    code = report.exit_code
    raise typer.Exit(code if check or code == 2 else 0)


def register(app: typer.Typer) -> None:
    app.command("rebuild", epilog=EXAMPLES)(rebuild)
