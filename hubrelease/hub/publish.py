"""``publish()``: preflight, plan, upload and commit, as one library call whose result is data.

The CLI (``cli/push.py``) parses options, calls this and renders what it returns or raises, as
twine's ``upload(settings, dists)`` does the work and its ``main(args)`` only parses. Every error
raised once the Hub is involved carries an ``Outcome`` (``errors.HubError.outcome``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub import HfApi

from hubrelease.errors import HubError, with_outcome
from hubrelease.hub.batches import DEFAULT_BATCH_BYTES
from hubrelease.hub.plan import CommitLimits, PushPlan, build_plan, check_limits, read_remote
from hubrelease.hub.push import Notify, PushResult, push_release
from hubrelease.hub.remote_verify import check_pins
from hubrelease.hub.replaced import replaced_architectures
from hubrelease.manifest.models import Manifest
from hubrelease.outcome import Outcome
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.verify.preflight import preflight


@dataclass(frozen=True, kw_only=True)
class PublishOptions:
    """How to publish: everything ``hubrelease push`` takes besides the manifest and the Hub."""

    message: str | None = None
    create_pr: bool = False
    tag: str | None = None
    private: bool | None = None
    """The visibility asked for (None: the manifest's ``release.private``, else the Hub's default)."""
    dry_run: bool = False
    batch_bytes: int = DEFAULT_BATCH_BYTES
    max_attempts: int = 3
    limits: CommitLimits = field(default_factory=CommitLimits)
    """Above these the release is staged on a pull request and merged (``stage.py``)."""


@dataclass(frozen=True)
class PublishResult:
    """The plan, the Hub-limit warnings, and the push's result (None for a dry run)."""

    plan: PushPlan
    warnings: list[str]
    push: PushResult | None


def publish(
    api: HfApi,
    manifest: Manifest,
    manifest_path: Path,
    root: Path,
    options: PublishOptions = PublishOptions(),
    *,
    progress: Progress = NULL_PROGRESS,
    notify: Notify = lambda _: None,
    on_plan: Callable[[PushPlan, list[str]], None] = lambda plan, warnings: None,
    sleep: Callable[[float], None] | None = None,
) -> PublishResult:
    """Preflight (local, then the pins on the Hub), plan, then upload and one commit (``push_release``).

    ``on_plan`` sees the plan and warnings before anything is written (the CLI lists them there).
    """
    preflight(manifest, manifest_path, root, progress)
    release = manifest.release
    try:
        check_pins(api, manifest)  # before anything is written: the repo, a branch, the commit
        remote = read_remote(api, manifest)
    except HubError as exc:
        untouched = Outcome("unchanged", release.repo_id, release.revision, None)
        raise with_outcome(exc, f"{exc.message}; nothing was pushed", untouched) from None
    plan = build_plan(manifest, manifest_path, root, remote)
    warnings = check_limits(plan, options.limits, merge=not options.create_pr) + replaced_architectures(
        api, plan
    )
    on_plan(plan, warnings)
    if options.dry_run:
        return PublishResult(plan, warnings, None)
    private = options.private if options.private is not None else release.private
    result = push_release(
        api,
        plan,
        message=options.message or f"Release {plan.repo_id} (hubrelease)",
        create_pr=options.create_pr,
        tag=options.tag,
        private=private,
        notify=notify,
        sleep=sleep,
        max_attempts=options.max_attempts,
        batch_bytes=options.batch_bytes,
        limits=options.limits,
    )
    return PublishResult(plan, warnings, result)
