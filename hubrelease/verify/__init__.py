"""Verify a release: observed file facts vs what the manifest pins. Drift is returned, not raised."""

from hubrelease.verify.findings import FileCheck, Finding, VerifyReport
from hubrelease.verify.local import (
    Expected,
    VerifyOptions,
    expected_from_manifest,
    verify_manifest,
    verify_sums_file,
    verify_tree,
)
from hubrelease.verify.plan_cache import verify_manifest_file

__all__ = [
    "Expected",
    "FileCheck",
    "Finding",
    "VerifyOptions",
    "VerifyReport",
    "expected_from_manifest",
    "verify_manifest",
    "verify_manifest_file",
    "verify_sums_file",
    "verify_tree",
]
