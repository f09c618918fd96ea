"""JSON Schema of the evaluation file, for editors, CI and other tools reading it."""

from __future__ import annotations

from typing import Any

from hubrelease.evaluation.models import Evaluation


def evaluation_json_schema() -> dict[str, Any]:
    """The evaluation file's JSON Schema (draft 2020-12), with field docs as descriptions."""
    schema = Evaluation.model_json_schema(mode="validation")
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://hubrelease.dev/schema/evaluation-v1.json"
    return schema
