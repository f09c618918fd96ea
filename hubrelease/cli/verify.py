"""`hubrelease verify`: check a release folder against its manifest (or a sha256sum file)."""

from __future__ import annotations

from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import (
    DirOpt,
    EndpointOpt,
    JobsOpt,
    JsonOpt,
    ManifestArg,
    QuietOpt,
    RepoTypeOpt,
    TokenOpt,
    hub_session,
    with_release,
)
from hubrelease.cli.report import render_report
from hubrelease.errors import InputError

EXAMPLES = """
Examples:

  hubrelease verify hubrelease.yaml                 # size first, then sha256; cached when unchanged

  hubrelease verify hubrelease.yaml --no-cache -j 8 # re-hash everything on 8 threads

  hubrelease verify SHA256SUMS                      # a sha256sum -c file works as input too

  hubrelease verify hubrelease.yaml --json | jq .summary

  hubrelease verify hubrelease.yaml --remote --revision v1.0   # the Hub vs the manifest, 0 bytes downloaded

Exit codes: 0 clean, 1 drift (missing, size or digest mismatch, unlisted file), 2 invalid input,
4 (--remote) the Hub could not be reached or refused us.
"""


def verify(
    manifest: ManifestArg,
    directory: DirOpt = None,
    jobs: JobsOpt = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Re-hash every file; ignore the stat cache.")
    ] = False,
    follow_symlinks: Annotated[
        bool,
        typer.Option(
            "--follow-symlinks", help="Hash the targets of symlinked artifacts instead of refusing."
        ),
    ] = False,
    json_mode: JsonOpt = False,
    remote: Annotated[
        bool,
        typer.Option("--remote", help="Check the published repo and all pins on the Hub (no downloads)."),
    ] = False,
    revision: Annotated[
        str | None,
        typer.Option("--revision", help="With --remote: branch, tag or commit (default: release.revision)."),
    ] = None,
    endpoint: EndpointOpt = None,
    token: TokenOpt = None,
    repo_type: RepoTypeOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Verify every artifact of a release: size, then SHA-256, plus files the manifest does not list."""
    from hubrelease.hashing import looks_like_sums
    from hubrelease.verify import VerifyOptions, verify_manifest_file, verify_sums_file

    output.set_quiet(quiet)
    # An option the chosen mode would ignore is refused: a silently local verify is not the check asked for.
    hub_only = {
        "--revision": revision is not None,
        "--endpoint": endpoint is not None,
        "--token": token is not None,
        "--repo-type": repo_type is not None,
    }
    local_only = {"--jobs": jobs is not None, "--no-cache": no_cache, "--follow-symlinks": follow_symlinks}
    ignored = [name for name, given in (local_only if remote else hub_only).items() if given]
    if ignored:
        one = len(ignored) == 1
        needs = (
            f"appl{'ies' if one else 'y'} to the local check, not --remote"
            if remote
            else f"need{'s' * one} --remote"
        )
        raise InputError(f"{', '.join(ignored)} {needs}")
    if remote:
        from hubrelease.hub import verify_remote
        from hubrelease.manifest import load_manifest, release_root

        release = load_manifest(manifest)
        root = release_root(release, manifest, directory)
        api = hub_session(endpoint, token, quiet)
        release = with_release(release, repo_type)
        report = verify_remote(release, api, revision, manifest_path=manifest, root=root)
        raise typer.Exit(render_report(report, str(manifest), json_mode))
    try:
        text = manifest.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("manifest not found", path=manifest) from None
    except (IsADirectoryError, UnicodeDecodeError):
        raise InputError("not a manifest or sha256sum file", path=manifest) from None
    options = VerifyOptions(jobs=jobs, use_cache=not no_cache, follow_symlinks=follow_symlinks)
    with output.progress(json_mode) as progress:
        if looks_like_sums(text):
            report = verify_sums_file(manifest, text, directory, options, progress)
        else:
            report = verify_manifest_file(manifest, text, directory, options, progress)
    raise typer.Exit(render_report(report, str(manifest), json_mode))


def register(app: typer.Typer) -> None:
    app.command("verify", epilog=EXAMPLES)(verify)
