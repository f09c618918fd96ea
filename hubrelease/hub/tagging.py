"""Tagging a release: a tag is checked before uploading, so a taken name stops the push early."""

from __future__ import annotations

from huggingface_hub import HfApi

from hubrelease.errors import HubError
from hubrelease.hub.client import metadata
from hubrelease.hub.plan import PushPlan
from hubrelease.outcome import Outcome


def tag_is_free(api: HfApi, plan: PushPlan, tag: str, parent: str) -> bool:
    """Before uploading: True if ``tag`` must be created, False if it already names the unchanged head.

    A tag that exists elsewhere stops the push here; finding it only after the commit landed
    would leave a pushed release without its tag and a failed job.
    """
    refs = metadata(plan.repo_id, None, lambda: api.list_repo_refs(plan.repo_id, repo_type=plan.repo_type))
    existing = {r.name: r.target_commit for r in refs.tags}.get(tag)
    if existing is None:
        return True
    if existing == parent and not plan.has_changes:
        return False
    raise HubError(
        f"{plan.repo_id}: tag {tag!r} already exists on {existing[:12]}; nothing was pushed; "
        "choose another tag or delete that one",
        repo_id=plan.repo_id,
        status=409,
        outcome=Outcome("unchanged", plan.repo_id, plan.revision, parent),
    )
