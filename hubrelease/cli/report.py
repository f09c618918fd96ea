"""Renderers for a ``VerifyReport``: a listing of findings, ``--json``, and GitHub Actions annotations."""

from __future__ import annotations

from pathlib import PurePath
from typing import TYPE_CHECKING

from hubrelease.cli import output
from hubrelease.release_files import SIGNATURE_NAME, count_files
from hubrelease.sizes import human_bytes

if TYPE_CHECKING:
    from collections.abc import Collection

    from hubrelease.findings import VerifyReport

_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}


def counted(paths: Collection[str], manifest: str) -> str:
    """``paths`` said as the one count of the release (``count_files``), ``model.sig`` apart."""
    count = count_files(paths, manifest)
    said = f"{count.files} files: {PurePath(manifest).name} and the {count.pinned} it pins"
    return f"{said}, plus {SIGNATURE_NAME}" if count.signature else said


def render_report(report: VerifyReport, manifest: str, json_mode: bool) -> int:
    """Print the report the way the user asked and return the exit code (0 clean, 1 drift)."""
    for finding in report.findings:
        if finding.severity in ("error", "warning"):
            output.github_annotation(finding.severity, f"{finding.path}: {finding.message}", finding.path)
    if json_mode:
        output.emit_document("verify", **report.to_dict(manifest))
        return 1 if report.has_drift else 0
    output.print_rows(
        ("severity", "kind", "path", "detail"),
        [(f.severity, f.kind, f.path, f.message) for f in report.findings],
        styles=_STYLE,
        what="findings",
    )
    total = sum(f.size or 0 for f in report.files)
    cached = sum(1 for f in report.files if f.source == "cache")
    where = f" at {report.revision}" if report.revision else ""
    detail = f"{counted([f.path for f in report.files], manifest)}, {human_bytes(total)}"
    if report.mode == "local":
        detail += f"; {human_bytes(report.hashed_bytes)} hashed, {cached} from cache"
    if report.has_drift:
        output.styled_line(
            "DRIFT", "bold red", f"({report.mode}{where}): {len(report.errors)} problem(s); {detail}"
        )
        return 1
    output.styled_line("OK", "bold green", f"({report.mode}{where}): {detail}")
    return 0
