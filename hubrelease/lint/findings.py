"""A lint result: a ``RuleFinding`` (rule id, severity, message). Frozen and ordered so reports sort stably.

Named for what it holds, a rule's verdict on a file, and apart from verify's ``Finding`` (what verify
noticed about one path: kind, expected, actual); verify reports a lint error as a ``Finding`` of kind
``lint``. Both take their ``Severity`` from ``hubrelease.severity``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from hubrelease.severity import Severity


@dataclass(frozen=True, order=True)
class RuleFinding:
    """One lint result: a stable rule id, its severity and a one-line message."""

    rule_id: str
    severity: Severity
    message: str
    field: str | None = field(default=None, compare=False)
    """The config key at fault, when there is one (builders put it in their error)."""


def error(rule: str, message: str, field: str | None = None) -> RuleFinding:
    return RuleFinding(rule, "error", message, field)


def warning(rule: str, message: str) -> RuleFinding:
    return RuleFinding(rule, "warning", message)


class FileFinding(NamedTuple):
    """A lint finding and the release file (or manifest section) it is about."""

    file: str
    finding: RuleFinding
