"""JSON Schema of the manifest, for editors (yaml-language-server) and CI."""

from __future__ import annotations

from typing import Any

from hubrelease.manifest import models
from hubrelease.manifest.models import Manifest
from hubrelease.schema_docs import describe_fields


def manifest_json_schema() -> dict[str, Any]:
    """The manifest's JSON Schema (draft 2020-12), with field docs as descriptions."""
    schema = describe_fields(Manifest.model_json_schema(mode="validation"), models)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://hubrelease.dev/schema/manifest-v1.json"
    return schema
