"""Field docstrings reach the JSON Schema without pydantic's per-class source lookups."""

from __future__ import annotations

from hubrelease.evaluation import evaluation_json_schema
from hubrelease.manifest import manifest_json_schema


def test_every_manifest_field_has_a_description() -> None:
    schema = manifest_json_schema()
    assert schema["properties"]["schema_version"]["description"] == "Manifest schema version; always 1."
    missing = [
        f"{name}.{field}"
        for name, definition in schema["$defs"].items()
        for field, prop in definition.get("properties", {}).items()
        if not prop.get("description")
    ]
    assert missing == []


def test_evaluation_schema_describes_fields_from_both_model_modules() -> None:
    schema = evaluation_json_schema()
    definitions = schema["$defs"]
    assert "Hardware" in definitions  # re-exported from the manifest models
    assert definitions["Hardware"]["properties"]["id"]["description"].startswith("Short identifier")
    assert all(
        prop.get("description")
        for definition in definitions.values()
        for prop in definition.get("properties", {}).values()
    )
