"""The release manifest: models, loading with line-accurate errors, round-trip editing, JSON Schema."""

from hubrelease.manifest.load import load_manifest, load_manifest_text
from hubrelease.manifest.models import SCHEMA_VERSION, Artifact, Manifest
from hubrelease.manifest.root import release_root
from hubrelease.manifest.schema import manifest_json_schema

__all__ = [
    "SCHEMA_VERSION",
    "Artifact",
    "Manifest",
    "load_manifest",
    "load_manifest_text",
    "manifest_json_schema",
    "release_root",
]
