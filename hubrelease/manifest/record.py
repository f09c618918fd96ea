"""``--manifest`` for builders: check the manifest before building, record the outputs after.

``prepare`` runs before any output is written (the manifest parses and validates, each output
will land inside its release folder), so a wrong ``--manifest`` costs neither a build nor a stray
file. ``record`` then upserts the outputs, comments kept: a rebuild into other shards replaces the
old shard entries of the same output and keeps their role.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from ruamel.yaml.comments import CommentedMap

from hubrelease.errors import InputError
from hubrelease.fsutil import relative_inside
from hubrelease.manifest.editor import ManifestEditor
from hubrelease.manifest.models import HAND_WRITTEN, Manifest
from hubrelease.manifest.root import release_root
from hubrelease.manifest.roundtrip import to_node, upsert_evaluation

# The shard suffix of llama.cpp's gguf-split and of huggingface's safetensors sharding.
_SHARD = re.compile(r"-\d{5}-of-\d{5}(?=\.[^/]+$)")


def _family(path: str) -> str:
    """``dir/model-00001-of-00003.gguf`` and ``dir/model.gguf`` are one output: ``dir/model.gguf``."""
    return _SHARD.sub("", path)


@dataclass(frozen=True)
class _Target:
    path: Path
    editor: ManifestEditor
    manifest: Manifest
    root: Path

    @classmethod
    def load(cls, manifest_path: Path) -> _Target:
        editor = ManifestEditor.open(manifest_path)
        manifest = editor.validate()
        return cls(manifest_path, editor, manifest, release_root(manifest, manifest_path).resolve())

    def relative(self, output: Path) -> str:
        rel = relative_inside(output, self.root)
        if rel is None:
            raise InputError(f"output {output} is outside the release folder {self.root}", path=self.path)
        return rel


@dataclass(frozen=True)
class ArtifactRecorder:
    """Records a drafter build's outputs as artifacts of a manifest checked beforehand."""

    target: _Target

    @classmethod
    def prepare(cls, manifest_path: Path, out: Path) -> ArtifactRecorder:
        """Check ``manifest_path`` and that ``out`` (a file or folder to build) lands in its release folder."""
        target = _Target.load(manifest_path)
        target.relative(out)  # refuses an ``out`` outside the release folder, before the build
        return cls(target)

    @property
    def root(self) -> Path:
        return self.target.root

    def relative(self, path: Path) -> str:
        """``path`` relative to the release folder (for recipes), or as a path from it when outside."""
        return relative_inside(path, self.root) or os.path.relpath(path.resolve(), self.root)

    def record(self, outputs: Sequence[tuple[Path, dict[str, Any]]]) -> None:
        """Upsert each (output file, entry fields) pair; stale shards of the same outputs are removed."""
        editor, manifest = self.target.editor, self.target.manifest
        entries = [{"path": self.target.relative(path), **fields} for path, fields in outputs]
        new_paths = {e["path"] for e in entries}
        families = {_family(p) for p in new_paths}
        stale = [a for a in manifest.artifacts if _family(a.path) in families and a.path not in new_paths]
        roles = {_family(a.path): a.role for a in manifest.artifacts if _family(a.path) in families}
        editor.remove_artifacts(a.path for a in stale)
        for entry in entries:
            listed = manifest.artifact(entry["path"]) is not None
            role = roles.get(_family(entry["path"]))
            if role is not None and not listed:  # a new shard of an output the manifest had: its role
                entry = {**entry, "role": role}
            editor.upsert_artifact(entry)
        editor.save()


_R = TypeVar("_R", bound="_OneFileRecorder")


@dataclass(frozen=True)
class _OneFileRecorder:
    """A builder's one output recorded outside ``artifacts``: checked before the build, pinned after."""

    target: _Target
    output: str
    refused: ClassVar[str] = ""
    """Why an ``out`` that ``taken`` says is already listed is refused."""

    @staticmethod
    def taken(manifest: Manifest, output: str) -> bool:
        raise NotImplementedError

    @classmethod
    def prepare(cls: type[_R], manifest_path: Path, out: Path) -> _R:
        """Check the manifest and that ``out`` is inside its release folder and not listed otherwise."""
        target = _Target.load(manifest_path)
        output = target.relative(out)
        if cls.taken(target.manifest, output):
            raise InputError(f"{output} {cls.refused}", path=manifest_path)
        return cls(target, output)

    @property
    def root(self) -> Path:
        return self.target.root


class CardRecorder(_OneFileRecorder):
    """Records a card written by a builder (``build dataset-card``) as the manifest's hand-written card."""

    refused = "is listed as an artifact or evaluation file; the card is never one (`hubrelease rm` it first)"

    @staticmethod
    def taken(manifest: Manifest, output: str) -> bool:
        return manifest.artifact(output) is not None or output in manifest.evaluation_paths

    def record(self, data: bytes, recipe: dict[str, Any] | None = None) -> None:
        """Pin ``data`` as the card: ``card: {template: none, output, size, sha256, recipe}``."""
        tree = self.target.editor.section("card")
        card = tree.get("card")
        if not isinstance(card, CommentedMap):
            card = CommentedMap()
            tree["card"] = card
        card["template"] = HAND_WRITTEN
        card["output"] = self.output
        card["size"] = len(data)
        card["sha256"] = hashlib.sha256(data).hexdigest()
        if recipe is not None:
            card["recipe"] = to_node(recipe)
        self.target.editor.save()


class EvaluationRecorder(_OneFileRecorder):
    """Records an evaluation file written by ``build eval`` in the manifest's ``evaluations``."""

    refused = "is listed as an artifact or is the card; an evaluation file is neither"

    @staticmethod
    def taken(manifest: Manifest, output: str) -> bool:
        return manifest.artifact(output) is not None or output == manifest.card_output

    def record(self, data: bytes, recipe: dict[str, Any]) -> None:
        """Pin ``data`` at ``evaluations[path]`` with its recipe; stated deviations are kept."""
        entry = {"path": self.output, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        upsert_evaluation(self.target.editor.section("evaluations"), entry | {"recipe": recipe})
        self.target.editor.save()
