"""Renderers for a ``VerifyReport``: a listing of findings, ``--json``, and GitHub Actions annotations."""

from __future__ import annotations

from pathlib import PurePath
from typing import TYPE_CHECKING

from hubrelease.cli import output
from hubrelease.release_files import SIGNATURE_NAME
from hubrelease.sizes import human_bytes

if TYPE_CHECKING:
    from collections.abc import Collection

    from hubrelease.findings import VerifyReport

_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}


def counted(paths: Collection[str], manifest: str) -> str:
    """``paths`` counted by what they are, so verify (the files the manifest pins), sign (and the
    manifest), push's plan (and ``model.sig``) and ``verify --remote`` say why their counts differ."""
    name = PurePath(manifest).name
    with_manifest = name in paths
    with_signature = SIGNATURE_NAME in paths
    pinned = len(paths) - with_manifest - with_signature
    if with_manifest and with_signature:
        return f"{len(paths)} files: {name}, the {pinned} it pins and {SIGNATURE_NAME}"
    if with_manifest:
        return f"{len(paths)} files: {name} and the {pinned} it pins"
    if with_signature:
        return f"{len(paths)} files: the {pinned} {name} pins and {SIGNATURE_NAME}"
    return f"{len(paths)} files pinned by {name}"


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
