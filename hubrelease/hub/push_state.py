"""One push's fixed context, threaded through upload, commit and recovery as one typed object."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from huggingface_hub import HfApi

from hubrelease.hub.plan import PushPlan
from hubrelease.hub.safe_open import Opened
from hubrelease.outcome import Outcome

Notify = Callable[[str], None]


@dataclass(frozen=True, kw_only=True)
class PushState:
    """What every step of one commit's upload and attempts reads; built by keyword, never changed.

    One object instead of a long positional list, where two same-typed values could swap silently.
    """

    api: HfApi
    plan: PushPlan
    opened: Opened
    unchanged: Outcome
    """The remote before this commit: the parent every attempt is guarded by."""
    message: str
    create_pr: bool
    prs_before: dict[str, str] | None
    """The open pull requests before the first attempt (with ``create_pr``), to find a lost one's."""
    notify: Notify
    wait: Callable[[float], None]
    max_attempts: int
    batch_bytes: int
