"""Git commit ids as the Hub writes them: the one test of "is this revision pinned" every module shares."""

from __future__ import annotations

import re

_COMMIT = re.compile(r"[0-9a-f]{40}")


def is_commit(value: object) -> bool:
    """Whether ``value`` is a full commit id (40 lowercase hex digits), not a branch, tag or short id."""
    return isinstance(value, str) and _COMMIT.fullmatch(value) is not None
