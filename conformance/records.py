"""What a conformance run records: the variants it builds and one result row per consumer check.

Shared by ``run`` (local consumers) and ``hub_steps`` (consumers that fetch from the loopback Hub),
so neither imports the other's module to name a row.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Variant:
    name: str
    dflash2: bool
    folder: Path
    """The safetensors drafter (config.json + model*.safetensors), as SGLang and the converters read it."""
    ggufs: dict[tuple[str, str], Path] = field(default_factory=dict)
    """(flavor, outtype) -> hubrelease's GGUF."""
    checkpoint: Path | None = None
    """The training checkpoint the drafter was built from (the example's is in its release folder)."""


@dataclass
class Result:
    consumer: str
    variant: str
    artifact: str
    status: str
    """pass, fail, not run, n/a."""
    detail: str


def json_subprocess(argv: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """The last JSON line a consumer script printed, or a fail record with the end of its output."""
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1800)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"status": "fail", "error": f"exit {proc.returncode}: {(proc.stderr or proc.stdout)[-800:]}"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result
