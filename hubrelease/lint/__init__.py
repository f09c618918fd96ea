"""Drafter lint: ``lint_file(path, config=None, composition=None) -> list[RuleFinding]``.

Exports load lazily (``hubrelease.lazy``): ``lint.findings`` or ``lint.target`` alone (verify, push's
preflight) do not load the format readers behind ``lint_file``.
"""

from typing import TYPE_CHECKING

from hubrelease.lazy import exports

if TYPE_CHECKING:
    from hubrelease.lint.drafter import lint_file, lint_gguf, lint_safetensors
    from hubrelease.lint.findings import RuleFinding

__all__ = [
    "RuleFinding",
    "lint_file",
    "lint_gguf",
    "lint_safetensors",
]

__getattr__ = exports(
    __name__,
    {
        "RuleFinding": "findings",
        "lint_file": "drafter",
        "lint_gguf": "drafter",
        "lint_safetensors": "drafter",
    },
)
