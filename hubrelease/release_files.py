"""What a release publishes: the one list push, verify (local and ``--remote``) and signing use.

A release publishes its artifacts, its evaluation files, the card and the manifest itself (under its
own file name, without its local ``root:``); the Hub adds ``.gitattributes``. Each published file
comes with what the manifest pins about it. The card and the manifest are pinned by what they must
equal rather than by a digest: a rendered card must be a fresh render of the manifest and
evaluation files, the published manifest must be the manifest (``hubrelease.verify.expected``
derives their digests); a hand-written card (``card.template: none``) is pinned like an artifact.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Literal, NamedTuple

from hubrelease.errors import InputError

if TYPE_CHECKING:
    from hubrelease.manifest.models import Manifest

ReleaseFileKind = Literal["artifact", "evaluation", "card", "rendered_card", "manifest"]
"""``card``: hand-written (``card.template: none``), pinned like an artifact; ``rendered_card``: written by
render-card, so it must equal a fresh render; ``manifest``: must equal the manifest, ``root:`` aside."""
# Files the Hub itself adds to every repo: published, never listed in a manifest.
SIGNATURE_NAME = "model.sig"
"""Where a release's signature lives: at the release root and the repo root (model-signing-spec v1.0
§9, and ``model_signing``'s default ``--signature``); ``hubrelease.signing`` writes and checks it."""
HUB_FILES = (".gitattributes",)


class ReleaseFile(NamedTuple):
    """One file a push publishes, with whatever the manifest pins about it."""

    path: str
    """Where it is published (the repo path; also its place in an ``hf download --local-dir``)."""
    local: str
    """Where it is in the release folder (``artifacts[].local``); the manifest: its file name."""
    kind: ReleaseFileKind
    size: int | None
    """Pinned size (``None``: not pinned; always for ``rendered_card`` and ``manifest``)."""
    sha256: str | None
    """Pinned SHA-256 (``None`` likewise)."""


def card_published(manifest: Manifest, root: Path | None) -> bool:
    """Whether the card is published: always with a ``card:`` section, else when ``root`` holds one.

    Without a ``card:`` section ``README.md`` is still the card (render-card writes it from the
    default template), published when the release folder has it.
    """
    if manifest.card is not None:
        return True
    return root is not None and os.path.isfile(os.path.join(root, manifest.card_output))


def release_files(
    manifest: Manifest, manifest_path: str | Path, root: Path | None = None
) -> list[ReleaseFile]:
    """Every file a push of the manifest at ``manifest_path`` publishes, in push order.

    Artifacts first, then evaluation files and the card (each unless an artifact already publishes
    that path), then the manifest. ``root`` is the release folder, read only to see whether a card
    without a ``card:`` section exists (``card_published``). ``InputError`` when the manifest's name
    collides with a published file.
    """
    files = [ReleaseFile(a.path, a.local_path, "artifact", a.size, a.sha256) for a in manifest.artifacts]
    listed = {a.path for a in manifest.artifacts}
    extras = [ReleaseFile(e.path, e.path, "evaluation", e.size, e.sha256) for e in manifest.evaluation_files]
    if card_published(manifest, root):
        card = manifest.card
        name = manifest.card_output
        if card is not None and card.hand_written:
            extras.append(ReleaseFile(name, name, "card", card.size, card.sha256))
        else:
            extras.append(ReleaseFile(name, name, "rendered_card", None, None))
    for item in extras:
        if item.path not in listed:
            files.append(item)
            listed.add(item.path)
    name = Path(manifest_path).name
    if name in listed:
        raise InputError(f"the manifest's name {name!r} collides with a published file", path=manifest_path)
    files.append(ReleaseFile(name, name, "manifest", None, None))
    return files


def published_paths(files: Iterable[ReleaseFile]) -> set[str]:
    """Repo paths a release may hold: its files and the Hub's own (anything else is extra)."""
    return {f.path for f in files} | set(HUB_FILES)


class FileCount(NamedTuple):
    """One release counted one way, whichever part of it a command compared.

    ``files`` is what ``release_files`` lists and a signature covers: the manifest and the ``pinned``
    files. A local verify counts the manifest too (it is the reference every other file is checked
    against), so verify, sign, push's plan and ``verify --remote`` of one release say one number;
    ``model.sig``, which signs those files and is none of them, is told apart.
    """

    files: int
    pinned: int
    """The files the manifest pins: artifacts, evaluation files and the card."""
    signature: bool
    """Whether ``model.sig`` was among the paths (push's plan of a signed release)."""


def count_files(paths: Collection[str], manifest: str | PurePath) -> FileCount:
    """The count of a release whose files a command covered as ``paths`` (repo paths)."""
    name = PurePath(manifest).name
    signature = SIGNATURE_NAME in paths
    pinned = len(paths) - (name in paths) - signature
    return FileCount(pinned + 1, pinned, signature)
