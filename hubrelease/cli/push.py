"""`hubrelease push`: preflight, plan, one atomic commit, optional tag, then a remote verify."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import (
    DirOpt,
    EndpointOpt,
    JsonOpt,
    ManifestArg,
    QuietOpt,
    RepoTypeOpt,
    TokenOpt,
    hub_session,
)

if TYPE_CHECKING:
    from hubrelease.hub.plan import PushPlan
    from hubrelease.hub.push import PushResult

EXAMPLES = """
Examples:

  hubrelease push hubrelease.yaml --dry-run            # what would be added / changed / deleted

  hubrelease push hubrelease.yaml --tag v1.0 --message "DFlash drafter v1.0"

  hubrelease push hubrelease.yaml --create-pr --json

  hubrelease push manifests/example/hubrelease.yaml --endpoint local   # the embedded loopback Hub

  hubrelease push hubrelease.yaml --private --revision rc --token "$HF_TOKEN" -q

Exit codes: 0 pushed and verified, 1 preflight failed (local verify, lint, a stale card, a pinned
repo, revision or file not on the Hub as pinned: nothing is written), a file changed since verify, someone else
pushed (412) or remote drift after the push, 2 invalid input, 4 the Hub could not be reached or
refused us (network, token, rate limit, 5xx, Xet). The token comes from HF_TOKEN / `hf auth login`.
"""


def print_plan(plan: PushPlan) -> None:
    from hubrelease.cli.report import counted
    from hubrelease.sizes import human_bytes

    rows: list[tuple[str, str, str]] = [(f.status, f.path, human_bytes(f.size)) for f in plan.files]
    rows += [("deleted", f.path, human_bytes(f.size)) for f in plan.deleted]
    style = {"added": "green", "changed": "yellow", "unchanged": "dim", "deleted": "red"}
    output.print_rows(("status", "path", "size"), rows, styles=style, right={2}, what="files")
    where = f"{plan.repo_id}@{plan.revision}"
    base = plan.parent_commit[:12] if plan.parent_commit else "a new repo"
    if plan.create_branch:
        base += f" (new branch {plan.revision!r} from it)"
    files = counted([f.path for f in plan.files], str(plan.manifest_path))
    output.info_line(f"plan: {files}; {human_bytes(plan.upload_bytes)} to upload to {where} on {base}")


def push(
    manifest: ManifestArg,
    directory: DirOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Preflight and plan only; upload nothing.")
    ] = False,
    create_pr: Annotated[
        bool, typer.Option("--create-pr", help="Open a pull request instead of committing.")
    ] = False,
    tag: Annotated[str | None, typer.Option("--tag", help="Tag the pushed commit (e.g. v1.0).")] = None,
    *,
    message: Annotated[str | None, typer.Option("--message", "-m", help="Commit message.")] = None,
    private: Annotated[
        bool | None,
        typer.Option(
            "--private/--public",
            help="Visibility of a new repo (default: release.private); an existing repo is never flipped.",
            show_default=False,
        ),
    ] = None,
    revision: Annotated[
        str | None,
        typer.Option(
            "--revision",
            help="Branch to push to (default: release.revision); created from main if missing.",
            show_default=False,
        ),
    ] = None,
    batch_size: Annotated[
        str | None,
        typer.Option(
            "--batch-size",
            help="Upload batch size (e.g. 512MiB, the default; or $HUBRELEASE_PUSH_BATCH_SIZE): a re-run "
            "after an interruption sends again at most the batches in flight.",
            show_default=False,
        ),
    ] = None,
    repo_type: RepoTypeOpt = None,
    endpoint: EndpointOpt = None,
    token: TokenOpt = None,
    quiet: QuietOpt = False,
    json_mode: JsonOpt = False,
) -> None:
    """Publish the release as one commit guarded by the head it was planned on, then verify the Hub."""
    from hubrelease.cli.report import render_report
    from hubrelease.errors import HubError
    from hubrelease.hub.batches import batch_size as parse_batch_size
    from hubrelease.hub.publish import PublishOptions, publish
    from hubrelease.manifest import load_manifest, release_root
    from hubrelease.manifest.load import with_release

    release = load_manifest(manifest)
    root = release_root(release, manifest, directory)
    release = with_release(release, repo_type, revision)
    options = PublishOptions(
        message=message,
        create_pr=create_pr,
        tag=tag,
        private=private,
        dry_run=dry_run,
        batch_bytes=parse_batch_size(batch_size),
    )
    api = hub_session(endpoint, token, quiet, writes=True)
    payload = output.document("push", dry_run=dry_run)

    def on_plan(plan: PushPlan, warnings: list[str]) -> None:
        payload.update(plan=plan.to_dict(), warnings=warnings)
        for warning in warnings:
            output.warn_line(warning)
        if not json_mode:
            print_plan(plan)

    notify = output.info_line if not json_mode else (lambda _: None)
    try:
        with output.progress(json_mode) as progress:
            done = publish(
                api, release, manifest, root, options, progress=progress, notify=notify, on_plan=on_plan
            )
    except HubError as exc:
        if json_mode and exc.outcome is not None:
            payload.update(error=exc.to_dict())
            output.emit_json(payload)
        raise
    result = done.push
    if result is None:
        if json_mode:
            output.emit_json(payload)
        return
    assert result.report is not None
    if json_mode:
        payload.update(
            result=result.to_dict(), verify=output.document("verify", **result.report.to_dict(str(manifest)))
        )
        output.emit_json(payload)
        raise typer.Exit(1 if result.report.has_drift else 0)
    _print_result(done.plan, result)
    raise typer.Exit(render_report(result.report, str(manifest), json_mode=False))


def _print_result(plan: PushPlan, result: PushResult) -> None:
    if result.created:
        output.info_line(f"created {result.created} repo {plan.repo_id}")
    outcome = result.outcome
    if outcome.landed:
        where = f"{plan.repo_id}@{outcome.ref}" + (f" ({result.pr_url})" if result.pr_url else "")
        output.info_line(f"pushed {result.commit} to {where}")
    else:
        output.info_line(
            f"nothing to push: {plan.repo_id}@{plan.revision} already matches at {result.commit[:12]}"
        )
    if result.tag:
        output.info_line(f"tagged {result.commit[:12]} as {result.tag}")


def register(app: typer.Typer) -> None:
    app.command("push", epilog=EXAMPLES)(push)
