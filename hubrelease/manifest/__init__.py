"""The release manifest: models, loading with line-accurate errors, round-trip editing, JSON Schema.

Exports load lazily (``hubrelease.lazy``): ``manifest.models`` alone does not load the YAML reader
(ruamel) or the schema.
"""

from typing import TYPE_CHECKING

from hubrelease.lazy import exports

if TYPE_CHECKING:
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

__getattr__ = exports(
    __name__,
    {
        "SCHEMA_VERSION": "models",
        "Artifact": "models",
        "Manifest": "models",
        "load_manifest": "load",
        "load_manifest_text": "load",
        "manifest_json_schema": "schema",
        "release_root": "root",
    },
)
