"""The JSON line each consumer script prints: its check's result, or where in the consumer it failed.

Imported by path-run siblings (sglang_load.py, zlab_load.py), each in its own consumer's venv.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from typing import Any


def report(check: Callable[[str, str], dict[str, Any]], marker: str, limit: int | None = None) -> None:
    """Print ``check(argv[1], argv[2])``; a failure names the innermost frame whose file holds ``marker``."""
    try:
        result = check(sys.argv[1], sys.argv[2])
    except Exception as exc:
        frames = traceback.extract_tb(exc.__traceback__)
        where = next((f for f in reversed(frames) if marker in f.filename), frames[-1] if frames else None)
        result = {
            "status": "fail",
            "error": f"{type(exc).__name__}: {exc}"[:limit],
            "where": f"{where.filename.split('site-packages/')[-1]}:{where.lineno}" if where else "",
        }
    print(json.dumps(result))
