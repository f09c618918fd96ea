"""The committed seed releases made small: every artifact a small stand-in, every pinned repo on a
loopback Hub, so they verify, push and preview here as committed (cards, charts, evaluations kept)."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Mapping
from pathlib import Path

from hubrelease.manifest import load_manifest
from hubrelease.manifest.load import parse_tree
from hubrelease.manifest.roundtrip import dump_tree
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import invoke
from tests.factories.hub import api_for, upload_files

SEEDS = ("ornith-1.0-dflash-gguf", "ornith-1.5-dflash2")


def small_seed(repo_root: Path, name: str, tmp_path: Path, hub: LoopbackHub) -> Path:
    """The committed seed with every artifact replaced by a same-named small file, and every pinned
    repo created on the loopback Hub with small files at the pinned paths (their sizes and commits
    re-pinned; ``unpinned`` marks are kept as committed)."""
    folder = tmp_path / name
    shutil.copytree(repo_root / "manifests" / name, folder)
    return shrink_seed(folder, hub)


def shrink_seed(
    folder: Path, hub: LoopbackHub, repo_files: Mapping[str, dict[str, bytes]] | None = None
) -> Path:
    """``small_seed`` on a seed folder already copied: artifacts already in ``folder`` are kept, every
    other one gets a small stand-in; a pinned repo named in ``repo_files`` gets those files (else small
    ones at the pinned paths). Returns the manifest, re-pinned (``add``) and its card rendered."""
    manifest = folder / "hubrelease.yaml"
    seed = load_manifest(manifest)
    api = api_for(hub)
    tree = parse_tree(manifest.read_text(), manifest)
    # The evaluations name the real commits and digests; the stand-ins' replace them (provenance binding).
    replaced: dict[str, str] = {}
    for kind in ("targets", "base_drafters", "datasets"):
        for index, pin in enumerate(getattr(seed.pins, kind)):
            files = {f.path: f"{pin.repo_id}:{f.path}\n".encode() for f in getattr(pin, "files", [])}
            files |= (repo_files or {}).get(pin.repo_id, {})
            repo_type = "dataset" if kind == "datasets" else pin.repo_type
            commit = upload_files(api, pin.repo_id, files or {"README.md": b"pinned\n"}, repo_type=repo_type)
            if not pin.unpinned:  # a commit of the real Hub cannot exist here: re-pinned to ours
                tree["pins"][kind][index]["revision"] = commit
                replaced[str(pin.revision)] = commit
            for f_index, f in enumerate(getattr(pin, "files", [])):
                tree["pins"][kind][index]["files"][f_index]["size"] = len(files[f.path])
    for index, artifact in enumerate(seed.artifacts):
        path = folder / artifact.local_path
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.is_file():  # committed small files (training facts, charts) are kept: the card reads them
            path.write_bytes(f"small stand-in for {artifact.path}\n".encode())
        if artifact.sha256:
            replaced[artifact.sha256] = hashlib.sha256(path.read_bytes()).hexdigest()
        node = tree["artifacts"][index]
        for key in ("sha256", "reported_size", "lint", "composition"):  # the bytes are not a GGUF any more
            node.pop(key, None)
    manifest.write_text(dump_tree(tree))
    for evaluation in seed.evaluation_paths:
        text = (folder / evaluation).read_text()
        for old, new in replaced.items():
            text = text.replace(old, new)
        (folder / evaluation).write_text(text)
    added = invoke(
        [
            "add",
            manifest,
            *(folder / a.local_path for a in seed.artifacts),
            *(folder / e for e in seed.evaluation_paths),
        ]
    )
    assert added.exit_code == 0, added.stderr
    rendered = invoke(["render-card", manifest])
    assert rendered.exit_code == 0, rendered.stderr
    return manifest
