"""A lint result: rule id, severity, message. Frozen and ordered so reports sort stably."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, NamedTuple

Severity = Literal["error", "warning"]


@dataclass(frozen=True, order=True)
class Finding:
    """One lint result: a stable rule id, its severity and a one-line message."""

    rule_id: str
    severity: Severity
    message: str
    field: str | None = field(default=None, compare=False)
    """The config key at fault, when there is one (builders put it in their error)."""


def error(rule: str, message: str, field: str | None = None) -> Finding:
    return Finding(rule, "error", message, field)


def warning(rule: str, message: str) -> Finding:
    return Finding(rule, "warning", message)


class FileFinding(NamedTuple):
    """A lint finding and the release file (or manifest section) it is about."""

    file: str
    finding: Finding
