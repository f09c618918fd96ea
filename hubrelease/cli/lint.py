"""`hubrelease lint FILE|MANIFEST`: drafter lint findings (or a whole release's); exit 1 when any is an error."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import EndpointOpt, JsonOpt, hub_session, is_hub_uri

if TYPE_CHECKING:
    from hubrelease.lint.findings import FileFinding
    from hubrelease.lint.target import TargetFacts

EXAMPLES = """
Examples:

  hubrelease lint drafter-q8_0.gguf --config drafter/config.json --target target-Q4_K_M.gguf

  hubrelease lint drafter/ --target hf://Qwen/Qwen3-8B@0f0b1b59b879ccde1353e6ebd0fb10c204d4c544/config.json

  hubrelease lint hf://acme/Ornith-DFlash/gguf/drafter-q8_0.gguf --config hf://acme/Ornith-DFlash/config.json

  hubrelease lint hubrelease.yaml --endpoint local     # the release: its lint: true artifacts against the
                                                       # pinned target, -hf tags, splits, licences

Exit codes: 0 no error, 1 an error finding, 2 invalid input, 4 the Hub could not be reached or refused us.
"""


def lint(
    file: Annotated[
        str,
        typer.Argument(
            help=".gguf (or a shard of a split set), .safetensors, index json or folder; hf://REPO[@REV]/PATH; "
            "or a release manifest (.yaml)."
        ),
    ],
    config: Annotated[
        str | None,
        typer.Option(
            "--config", help="The drafter's HF config.json to check against (hf:// for a remote FILE)."
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            help="The target it serves, for its depth, hidden size and vocabulary: a .gguf, a config.json "
            "or hf://REPO@REV/FILE (a manifest's pinned target by default).",
        ),
    ] = None,
    endpoint: EndpointOpt = None,
    json_mode: JsonOpt = False,
) -> None:
    """Check a DFlash drafter for silent conversion bugs: rope base, flavour, target layers, tensor set."""
    traffic: dict[str, int] = {}
    facts = _target(target, endpoint)
    if file.endswith((".yaml", ".yml")) and not is_hub_uri(file):
        results = _release(Path(file), facts, endpoint)
    elif is_hub_uri(file):
        from hubrelease.hub.remote_lint import lint_hub_file
        from hubrelease.lint.findings import FileFinding

        findings, cost = lint_hub_file(hub_session(endpoint), file, config, facts)
        results = [FileFinding(file, f) for f in findings]
        traffic = {"requests": cost.requests, "fetched_bytes": cost.fetched_bytes}
    else:
        from hubrelease.lint import lint_file
        from hubrelease.lint.findings import FileFinding

        results = [
            FileFinding(file, f) for f in lint_file(Path(file), Path(config) if config else None, None, facts)
        ]
    _report(file, results, traffic, json_mode)


def _target(spec: str | None, endpoint: str | None) -> TargetFacts | None:
    if spec is None:
        return None
    if is_hub_uri(spec):
        from hubrelease.hub.target_facts import read_hub_target

        return read_hub_target(hub_session(endpoint), spec)
    from hubrelease.lint.target import read_local_target

    return read_local_target(spec)


def _release(manifest_path: Path, facts: TargetFacts | None, endpoint: str | None) -> list[FileFinding]:
    from hubrelease.lint.release import lint_release
    from hubrelease.manifest import load_manifest
    from hubrelease.manifest.root import release_root

    manifest = load_manifest(manifest_path)
    root = release_root(manifest, manifest_path)
    if facts is None and manifest.pins.targets and any(a.lint for a in manifest.artifacts):
        from hubrelease.errors import HubUnavailable
        from hubrelease.hub.target_facts import fetch_target

        try:
            facts = fetch_target(hub_session(endpoint), manifest, root)
        except HubUnavailable as exc:  # the local files are still linted; the target rules wait for the Hub
            output.warn_line(f"the pinned target was not read ({exc}): linted without its depth and width")
            return lint_release(manifest, root, None)
        if facts is None:
            pin = manifest.pins.targets[0]
            output.warn_line(
                f"{pin.repo_id}@{pin.revision}: nothing pins the target's bytes (no commit, no header pin): "
                "linted without its depth and width (`hubrelease lock` pins it, or give --target)"
            )
    return lint_release(manifest, root, facts)


def _report(file: str, results: list[FileFinding], traffic: dict[str, int], json_mode: bool) -> None:
    errors = sum(r.finding.severity == "error" for r in results)
    if json_mode:
        output.emit_document(
            None,
            path=str(file),
            ok=errors == 0,
            findings=[
                {
                    "rule_id": r.finding.rule_id,
                    "severity": r.finding.severity,
                    "message": r.finding.message,
                    "file": r.file,
                }
                for r in results
            ],
            **traffic,
        )
    else:
        for r in results:
            where = "" if r.file == file else f"{r.file}: "
            text = f"[{r.finding.rule_id}] {where}{r.finding.message}"
            output.value_line(f"{r.finding.severity}: {text}")
            output.github_annotation(r.finding.severity, text, r.file)
        output.info_line(f"{file}: {errors} error(s), {len(results) - errors} warning(s)")
        if traffic:
            output.info_line(
                f"read {traffic['fetched_bytes']} bytes of headers in {traffic['requests']} request(s)"
            )
    if errors:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("lint", epilog=EXAMPLES)(lint)
