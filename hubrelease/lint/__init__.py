"""Drafter lint: ``lint_file(path, config=None, composition=None) -> list[RuleFinding]``."""

from hubrelease.lint.drafter import lint_file, lint_gguf, lint_safetensors
from hubrelease.lint.findings import RuleFinding

__all__ = ["RuleFinding", "lint_file", "lint_gguf", "lint_safetensors"]
