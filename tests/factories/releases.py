"""Release folders with a manifest whose pins match the files (the verify tests' raw material)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import yaml

DEFAULT_FILES: dict[str, bytes] = {
    "model.safetensors": b"\x00" * 4096 + b"weights",
    "config.json": b'{"architectures": ["DFlashDraftModel"]}\n',
    "sub/dir/notes.md": b"# notes\n",
    "empty.bin": b"",
}


def write_release(
    root: Path,
    files: dict[str, bytes] | None = None,
    *,
    extra_manifest: dict[str, object] | None = None,
    manifest_name: str = "hubrelease.yaml",
) -> Path:
    """Write ``files`` under ``root`` and a manifest pinning each one's size and sha256."""
    contents = DEFAULT_FILES if files is None else files
    artifacts = []
    for name, data in contents.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        artifacts.append({"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    manifest: dict[str, object] = {
        "schema_version": 1,
        "release": {"repo_id": "acme/tiny-drafter", "license": "apache-2.0"},
        "artifacts": artifacts,
    }
    manifest.update(extra_manifest or {})
    target = root / manifest_name
    target.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    return target
