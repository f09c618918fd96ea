"""A push that would replace a published model file in place, under the same name, with another architecture.

Consumers pinned to the branch (or to the file's name) get the new file silently: a drafter retrained
with other layers or other target taps loads and drafts badly. The plan's changed GGUF, safetensors and
config.json files are compared header to header (``formats.architecture``; the published one read with
range requests at the commit the plan was made against) and each difference is a warning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hubrelease.errors import FormatError, InputError, NotFoundError
from hubrelease.formats.architecture import (
    architecture_changes,
    describe_changes,
    is_model_file,
    local_architecture,
)
from hubrelease.hub.remote_headers import RemoteRepo, remote_architecture

if TYPE_CHECKING:
    from huggingface_hub import HfApi

    from hubrelease.hub.plan import PushPlan


def replaced_architectures(api: HfApi, plan: PushPlan) -> list[str]:
    """One warning per changed file whose architecture differs from the published one."""
    if plan.parent_commit is None:
        return []
    repo = RemoteRepo(api, plan.repo_id, plan.parent_commit, plan.repo_type)
    warnings = []
    for planned in plan.with_status("changed"):
        if not is_model_file(planned.path):
            continue
        try:
            changes = architecture_changes(
                remote_architecture(repo, planned.path), local_architecture(planned.local)
            )
        except (FormatError, InputError, NotFoundError):
            continue  # not readable as a model file on one side: nothing to compare
        if changes:
            warnings.append(
                f"{planned.path}: replaces the published file in place with another architecture "
                f"({describe_changes(changes)}); consumers of the branch get it under the same name: "
                "publish it under a new name, branch or repo"
            )
    return warnings
