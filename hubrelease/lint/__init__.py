"""Drafter lint: ``lint_file(path, config=None, composition=None) -> list[Finding]``."""

from hubrelease.lint.drafter import Finding, Severity, lint_file, lint_gguf, lint_safetensors

__all__ = ["Finding", "Severity", "lint_file", "lint_gguf", "lint_safetensors"]
