"""pydantic validation errors in the words of the file being edited: ``FILE:LINE: field: message``.

The one translator for manifests, evaluation files and evaluation specs (and the card's front
matter checks): pydantic's locations carry union members and validators ("int",
"function-after[...]") and its messages name models ("or instance of Arm"); neither means anything
to the person editing the file. A model validator that knows the exact field raises
``LocatedError`` and its location is appended. Where the line comes from is the reader's business
(ruamel or libyaml node trees, none for JSON): each passes ``line_for``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from hubrelease.errors import HubReleaseError

Loc = tuple[str | int, ...]
ErrorT = TypeVar("ErrorT", bound=HubReleaseError)

_UNION_TAGS = frozenset({"int", "float", "str", "bool", "list", "dict", "tuple", "none"})
_INSTANCE_OF = re.compile(r" or instance of \w+")


class LocatedError(ValueError):
    """A model-level validation error that knows which field (relative to the model) is wrong."""

    def __init__(self, message: str, loc: Loc) -> None:
        super().__init__(message)
        self.loc = loc


@dataclass(frozen=True)
class Problem:
    """One validation error: where in the document (``loc``) and what is wrong, in our words."""

    loc: Loc
    message: str

    @property
    def field(self) -> str:
        return format_loc(self.loc)


def format_loc(loc: Sequence[str | int]) -> str:
    """``("artifacts", 2, "sha256")`` -> ``artifacts[2].sha256``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def problems(exc: ValidationError, schema_command: str) -> list[Problem]:
    """Every error of ``exc``, once per location (a union reports once per member: the first is kept);
    an unknown key points at ``schema_command``, which lists the allowed ones."""
    seen: dict[Loc, str] = {}
    for error in exc.errors(include_url=False):
        loc = list(error["loc"])
        cause = (error.get("ctx") or {}).get("error")
        if isinstance(cause, LocatedError):
            loc.extend(cause.loc)
            message = str(cause)
        else:
            message = _INSTANCE_OF.sub("", error["msg"].removeprefix("Value error, "))
        if error["type"] == "extra_forbidden":
            message = f"unknown key (allowed keys are listed by `{schema_command}`)"
        elif error["type"] == "missing":
            message = "required field is missing"
        elif error["type"] == "literal_error":
            message = f"{message}, got {error.get('input')!r}"
        seen.setdefault(tuple(p for p in loc if not _is_tag(p)), message)
    return [Problem(loc, message) for loc, message in seen.items()]


def _is_tag(part: str | int) -> bool:
    return isinstance(part, str) and (part in _UNION_TAGS or "[" in part)


def first_error(
    exc: ValidationError,
    error: type[ErrorT],
    path: str | Path,
    schema_command: str,
    line_for: Callable[[Loc], int | None] = lambda loc: None,
) -> ErrorT:
    """The first problem of ``exc`` as one ``error`` line, with how many more there are."""
    found = problems(exc, schema_command)
    first = found[0]
    message = first.message
    if len(found) > 1:
        message += f" (and {len(found) - 1} more error{'s' if len(found) > 2 else ''})"
    return error(message, path=path, line=line_for(first.loc), field=first.field)


def every_line(
    exc: ValidationError, path: str | Path, schema_command: str, line_for: Callable[[Loc], int | None]
) -> list[str]:
    """Every problem of ``exc`` as its own ``FILE:LINE: field: message`` line (line 1 if unknown)."""
    return [f"{path}:{line_for(p.loc) or 1}: {p.field}: {p.message}" for p in problems(exc, schema_command)]
