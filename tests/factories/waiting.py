"""Waiting for a condition another process or thread makes true, instead of sleeping a guessed time.

The ceiling is not a timing assertion: a condition that never comes true fails the test that waits
for it (with its own message) after ``CEILING_S``, a bound no loaded machine gets near, rather than
hanging the suite.
"""

from __future__ import annotations

import time
from collections.abc import Callable

CEILING_S = 120.0
"""How long a wait may take before the waiting test gives up (a condition, a socket read, a thread)."""
PROCESS_CEILING_S = 600.0
"""How long a child process may run before its test kills it and fails: a guard against a hang, not a
time limit on the work (the slowest child, a push that retries its batch, takes seconds)."""


def wait_until(condition: Callable[[], bool], ceiling: float = CEILING_S) -> bool:
    """Poll ``condition`` until it holds (True) or ``ceiling`` seconds pass (False)."""
    deadline = time.monotonic() + ceiling
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True
