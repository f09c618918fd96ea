"""Golden-file comparison for cards; ``HUBRELEASE_UPDATE_GOLDENS=1`` rewrites the goldens instead."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"


def _compare(path: Path, text: str) -> None:
    if os.environ.get("HUBRELEASE_UPDATE_GOLDENS"):
        path.write_text(text, encoding="utf-8", newline="\n")
    assert path.read_text(encoding="utf-8") == text, (
        f"{path} is stale; rerun with HUBRELEASE_UPDATE_GOLDENS=1"
    )


@pytest.fixture
def golden() -> Callable[[Path, str], None]:
    """``golden(path, text)``: assert ``text`` equals the file at ``path`` (or rewrite it when updating)."""
    return _compare
