"""A lint result: rule id, severity, message. Frozen and ordered so reports sort stably."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, order=True)
class Finding:
    """One lint result: a stable rule id, its severity and a one-line message."""

    rule_id: str
    severity: Severity
    message: str


def error(rule: str, message: str) -> Finding:
    return Finding(rule, "error", message)


def warning(rule: str, message: str) -> Finding:
    return Finding(rule, "warning", message)
