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


SVG_CHART = (
    b'<svg xmlns="http://www.w3.org/2000/svg" width="30" height="10"><rect width="30" height="10"/></svg>'
)


def write_hand_written_release(root: Path, card: str, files: dict[str, bytes] | None = None) -> Path:
    """A release whose card is hand-written (``template: none``) and pinned like an artifact; ``files``
    (default: a small weights file and ``charts/speed.svg``) are its artifacts."""
    manifest = write_release(
        root,
        files if files is not None else {"model.safetensors": b"\0" * 4096, "charts/speed.svg": SVG_CHART},
        extra_manifest={
            "card": {
                "template": "none",
                "size": len(card.encode()),
                "sha256": hashlib.sha256(card.encode()).hexdigest(),
            }
        },
    )
    (root / "README.md").write_text(card, encoding="utf-8")
    return manifest


EXAMPLE_REPO = "hubrelease-example/tiny-dflash-drafter"
REPO_ROOT = Path(__file__).resolve().parents[2]


def example_release(folder: Path, repo: str) -> Path:
    """A copy of the example release (and its target) published under ``repo``; its manifest."""
    import shutil

    from hubrelease.fsutil import STATE_DIR

    for name in ("example", "example-target"):
        shutil.copytree(
            REPO_ROOT / "manifests" / name, folder / name, ignore=shutil.ignore_patterns(STATE_DIR)
        )
    manifest = folder / "example" / "hubrelease.yaml"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace(EXAMPLE_REPO, repo), encoding="utf-8")
    return manifest


def pin_target_header(manifest: Path, header: str) -> None:
    """Pin the example's target by one GGUF's header digest, so lint reads the target facts
    remembered for that pin (``lint.target``; a branch pin has none)."""
    pinned = f"      unpinned: true\n      files:\n        - {{path: t.gguf, header_sha256: {header}}}\n"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("      unpinned: true\n", pinned, 1))
