"""The BOM against the CycloneDX 1.6 JSON schema that cyclonedx-python-lib ships, strictly."""

from __future__ import annotations

from hubrelease.errors import BuildError, InputError


def validate_bom(text: str) -> None:
    """Raise ``BuildError`` naming the first schema violation (``bom`` never writes an invalid BOM)."""
    try:
        from cyclonedx.schema import SchemaVersion
        from cyclonedx.validation.json import JsonStrictValidator
    except ImportError:
        raise InputError("hubrelease bom needs cyclonedx-python-lib: pip install 'hubrelease[bom]'") from None
    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    if error is not None:
        detail = getattr(error.data, "message", None) or str(error).splitlines()[0]
        where = getattr(error.data, "json_path", None)
        raise BuildError(f"the BOM does not validate against CycloneDX 1.6 at {where}: {detail}")
