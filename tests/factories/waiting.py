"""Waiting for a condition another process or thread makes true, instead of sleeping a guessed time.

The ceiling is not a timing assertion: a condition that never comes true fails the test that waits
for it (with its own message) after ``CEILING_S``, a bound no loaded machine gets near, rather than
hanging the suite.
"""

from __future__ import annotations

import time
from collections.abc import Callable

CEILING_S = 120.0
"""How long a wait may take before the waiting test gives up."""


def wait_until(condition: Callable[[], bool], ceiling: float = CEILING_S) -> bool:
    """Poll ``condition`` until it holds (True) or ``ceiling`` seconds pass (False)."""
    deadline = time.monotonic() + ceiling
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True
