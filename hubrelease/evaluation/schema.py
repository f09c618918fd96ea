"""JSON Schema of the evaluation file, for editors, CI and other tools reading it."""

from __future__ import annotations

from typing import Any, Literal

from hubrelease.evaluation import models
from hubrelease.evaluation.models import Evaluation
from hubrelease.manifest import models as manifest_models
from hubrelease.schema_docs import describe_fields


def evaluation_json_schema() -> dict[str, Any]:
    """The evaluation file's JSON Schema (draft 2020-12), with field docs as descriptions."""
    schema = describe_fields(Evaluation.model_json_schema(mode="validation"), manifest_models, models)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://hubrelease.dev/schema/evaluation-v1.json"
    return schema


def evaluation_spec_json_schema() -> dict[str, Any]:
    """The JSON Schema of ``build eval --spec`` files, with field docs as descriptions."""
    from hubrelease.evaluation import spec

    schema = describe_fields(
        spec.EvaluationSpec.model_json_schema(mode="validation"), manifest_models, models, spec
    )
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://hubrelease.dev/schema/evaluation-spec-v1.json"
    return schema


def json_schema(kind: Literal["manifest", "evaluation", "eval-spec"]) -> dict[str, Any]:
    """The JSON Schema ``hubrelease schema`` prints: the manifest's, the evaluation file's, or the
    ``build eval --spec`` file's."""
    if kind == "eval-spec":
        return evaluation_spec_json_schema()
    if kind == "evaluation":
        return evaluation_json_schema()
    from hubrelease.manifest import manifest_json_schema

    return manifest_json_schema()
