"""Evaluation JSON on disk -> ``Evaluation``, or one ``InputError`` naming the file and field.

JSON errors become located hubrelease errors here; pydantic's through ``hubrelease.validation``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from hubrelease.errors import InputError
from hubrelease.evaluation.models import Evaluation
from hubrelease.evaluation.records import read_text
from hubrelease.safe_parse import load_json
from hubrelease.validation import first_error

ModelT = TypeVar("ModelT", bound=BaseModel)
SCHEMA_COMMAND = "hubrelease schema --eval"
"""The command that lists an evaluation file's keys, named by an unknown-key error."""


def validate_model(model: type[ModelT], data: Any, path: str | Path) -> ModelT:
    """Validate parsed JSON/YAML; the first error becomes one line with the field path."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise first_error(exc, InputError, path, SCHEMA_COMMAND) from None


def load_evaluation(path: str | Path) -> Evaluation:
    """Read and validate an evaluation JSON file."""
    file = Path(path)
    text = read_text(file, "an evaluation JSON file")
    return validate_model(Evaluation, load_json(text, file), file)
