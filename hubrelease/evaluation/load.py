"""Evaluation JSON on disk -> ``Evaluation``, or one ``InputError`` naming the file and field.

The only place that turns JSON and pydantic errors about evaluation files into hubrelease errors.
"""

from __future__ import annotations

import json
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


def error_lines(
    exc: ValidationError, schema_command: str = "hubrelease schema --eval"
) -> list[tuple[str, str]]:
    """Every error of ``exc`` as (field path, message), in our words rather than pydantic's."""
    lines = []
    for error in exc.errors(include_url=False):
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = f"unknown key (allowed keys are listed by `{schema_command}`)"
        elif error["type"] == "missing":
            message = "required field is missing"
        lines.append((_format_loc(tuple(error["loc"])), message))
    return lines


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
