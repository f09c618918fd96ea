"""Drift is data: findings and the report that carries them, shared by local and remote verify.

Records on verify's warm path are ``NamedTuple``s, not frozen dataclasses: a dataclass costs ~1 ms
to define (it ``exec()``s its methods), ten of them a sixth of a warm verify's own time
(bench/startup_bench.py). A ``Finding``'s tuple order is the order the dataclass had.

A ``Finding`` is what verify noticed about one path (its ``kind``, what was expected and seen); lint's
rule verdicts are ``hubrelease.lint.findings.RuleFinding``. ``Severity`` is shared (``hubrelease.severity``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal, NamedTuple

from hubrelease.severity import Severity

FindingKind = Literal[
    "missing",
    "size_mismatch",
    "digest_mismatch",
    "header_mismatch",
    "unlisted",
    "size_only",
    "unpinned",
    "symlink",
    "unreadable",
    "lint",
    "provenance",
    "revision_missing",
    "cache_rebuilt",
    "temp_leftover",
    "not_checked",
    "signature",
]

# Severity of each kind; one table so local, remote and JSON output agree.
SEVERITY: dict[FindingKind, Severity] = {
    "missing": "error",
    "size_mismatch": "error",
    "digest_mismatch": "error",
    "header_mismatch": "error",
    "unlisted": "error",
    "size_only": "info",
    "unpinned": "error",
    "symlink": "error",
    "unreadable": "error",
    "lint": "error",
    "provenance": "error",
    "revision_missing": "error",
    "cache_rebuilt": "warning",
    "temp_leftover": "info",
    "not_checked": "info",
    "signature": "error",
}


class Finding(NamedTuple):
    """One thing verify noticed about one path (sorted by path, then kind, then message)."""

    path: str
    kind: FindingKind
    message: str
    expected: str | None = None
    actual: str | None = None
    severity: Severity = "error"

    @classmethod
    def make(
        cls,
        kind: FindingKind,
        path: str,
        message: str,
        expected: str | None = None,
        actual: str | None = None,
        *,
        severity: Severity | None = None,
    ) -> Finding:
        return cls(path, kind, message, expected, actual, severity or SEVERITY[kind])

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "path": self.path,
            "message": self.message,
            "expected": self.expected,
            "actual": self.actual,
        }


FileStatus = Literal["ok", "missing", "size_mismatch", "digest_mismatch", "unpinned", "symlink", "unreadable"]
FileSource = Literal["hashed", "cache", "remote", "none"]


class FileCheck(NamedTuple):
    """The observed state of one listed file."""

    path: str
    status: FileStatus
    size: int | None = None
    sha256: str | None = None
    source: FileSource = "none"

    def to_dict(self) -> dict[str, object]:
        return self._asdict()


class VerifyReport(NamedTuple):
    """Everything one verify run found, in a stable order."""

    mode: Literal["local", "remote"]
    root: str
    files: tuple[FileCheck, ...]
    findings: tuple[Finding, ...]
    hashed_bytes: int = 0
    revision: str | None = None
    extra: Mapping[str, object] = MappingProxyType({})  # read-only: one default shared by all

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def has_drift(self) -> bool:
        return bool(self.errors)

    def to_dict(self, manifest: str) -> dict[str, object]:
        """The body of the documented ``verify --json`` document (docs/manual/verify.md, "verify --json")."""
        return {
            "mode": self.mode,
            "manifest": manifest,
            "root": self.root,
            "revision": self.revision,
            "ok": not self.has_drift,
            "summary": {
                "files": len(self.files),
                "ok": sum(1 for f in self.files if f.status == "ok"),
                "bytes": sum(f.size or 0 for f in self.files),
                "hashed_bytes": self.hashed_bytes,
                "from_cache": sum(1 for f in self.files if f.source == "cache"),
                "errors": len(self.errors),
                "warnings": sum(1 for f in self.findings if f.severity == "warning"),
            },
            "findings": [f.to_dict() for f in self.findings],
            "files": [f.to_dict() for f in self.files],
            **self.extra,
        }
