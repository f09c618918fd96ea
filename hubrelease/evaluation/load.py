"""Evaluation JSON on disk -> ``Evaluation``, or one ``InputError`` naming the file and field.

The only place that turns JSON and pydantic errors about evaluation files into hubrelease errors.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from hubrelease.errors import InputError
from hubrelease.evaluation.models import Evaluation
from hubrelease.evaluation.records import read_text

ModelT = TypeVar("ModelT", bound=BaseModel)


def _format_loc(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


# pydantic names union members and validators in error locations ("int", "function-after[...]") and
# models in messages ("or instance of Arm"): neither means anything to the person editing the file.
_UNION_TAGS = frozenset({"int", "float", "str", "bool", "list", "dict", "tuple", "none"})
_INSTANCE_OF = re.compile(r" or instance of \w+")


def error_locs(exc: ValidationError) -> list[tuple[tuple[int | str, ...], str]]:
    """Every error of ``exc`` as (location, message) in our words, not pydantic's; union duplicates folded."""
    seen: dict[tuple[int | str, ...], str] = {}
    for error in exc.errors(include_url=False):
        message = _INSTANCE_OF.sub("", error["msg"].removeprefix("Value error, "))
        if error["type"] == "extra_forbidden":
            message = "unknown key"
        elif error["type"] == "missing":
            message = "required field is missing"
        loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and (p in _UNION_TAGS or "[" in p)))
        seen.setdefault(loc, message)  # a union reports once per member: keep the first
    return list(seen.items())


def error_lines(
    exc: ValidationError, schema_command: str = "hubrelease schema --eval"
) -> list[tuple[str, str]]:
    """Every error of ``exc`` as (field path, message); unknown keys point at ``schema_command``."""
    return [
        (
            _format_loc(loc),
            f"unknown key (allowed keys are listed by `{schema_command}`)"
            if message == "unknown key"
            else message,
        )
        for loc, message in error_locs(exc)
    ]


def validate_model(model: type[ModelT], data: Any, path: str | Path) -> ModelT:
    """Validate parsed JSON/YAML; the first error becomes one line with the field path."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        lines = error_lines(exc)
        where, message = lines[0]
        if len(lines) > 1:
            message += f" (and {len(lines) - 1} more error{'s' if len(lines) > 2 else ''})"
        raise InputError(message, path=path, field=where) from None


def load_evaluation(path: str | Path) -> Evaluation:
    """Read and validate an evaluation JSON file."""
    file = Path(path)
    text = read_text(file, "an evaluation JSON file")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", path=file, line=exc.lineno) from None
    except RecursionError:
        raise InputError("invalid JSON: nested too deeply", path=file) from None
    return validate_model(Evaluation, data, file)
