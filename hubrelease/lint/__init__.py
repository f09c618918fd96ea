"""Drafter lint: ``lint_file(path, config=None, composition=None) -> list[Finding]``."""

from hubrelease.lint.drafter import lint_file, lint_gguf, lint_safetensors
from hubrelease.lint.findings import Finding, Severity

__all__ = ["Finding", "Severity", "lint_file", "lint_gguf", "lint_safetensors"]
