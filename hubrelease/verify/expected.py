"""What every published file must be: its pins, or for the card and the manifest the bytes they derive from.

``release_files`` says what a release publishes; here each file gets an ``ExpectedFile``. Artifacts,
evaluation files and a hand-written card carry the manifest's pins. A rendered card must be a fresh
render of the manifest and the evaluation files (``render-card``), the published manifest the
manifest itself without its local ``root:``: both are derived here, once, as bytes, so local
verify checks them like any file (size, then sha256 through the stat cache) and remote verify
compares the Hub's blob id or sha256 with them without downloading anything.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from hubrelease.errors import CheckFailed, HubReleaseError
from hubrelease.findings import Finding
from hubrelease.release_files import ReleaseFile, release_files
from hubrelease.verify.compare import ExpectedFile

if TYPE_CHECKING:
    from hubrelease.manifest.models import Manifest

CARD_BASIS = "a re-render of the manifest and evaluation files"


class Expectations(NamedTuple):
    """Every published file with what it must be, named by its release-folder path (``ExpectedFile.name``)."""

    published: tuple[ReleaseFile, ...]
    """Everything the release publishes (``release_files``), checked or not."""
    files: tuple[tuple[ReleaseFile, ExpectedFile], ...]
    content: Mapping[str, bytes]
    """Derived bytes by repo path: the rendered card, the published manifest."""
    findings: tuple[Finding, ...]
    """Published files that cannot be checked (a card that does not render, an unpinned hand-written one)."""
    cacheable: bool
    """True when the derived digests follow from the manifest's text, its pinned bytes and this code only."""


def expectations(
    manifest: Manifest, manifest_path: Path, folder: Path | None, manifest_name: str | None = None
) -> Expectations:
    """What each file of ``release_files`` must be; ``folder`` is the release folder (None: none at hand).

    The manifest is read from ``manifest_path`` and published as ``manifest_name`` (default: its
    file name). Without a folder the card is not derived (nothing to render it from): a finding
    says so.
    """
    files: list[tuple[ReleaseFile, ExpectedFile]] = []
    content: dict[str, bytes] = {}
    findings: list[Finding] = []
    cacheable = True
    published = release_files(manifest, manifest_name or manifest_path, folder)
    for item in published:
        if item.kind == "manifest":
            data = _published_manifest(manifest, manifest_path)
            content[item.path] = data
            # Locally a copy is optional: a release folder need not hold the manifest (``root:``).
            basis = f"the manifest {manifest_path.name} (its root: aside)"
            files.append((item, _derived(item, data, basis, optional=True)))
        elif item.kind == "rendered_card":
            rendered = _render(manifest, manifest_path, folder, item)
            if isinstance(rendered, Finding):
                findings.append(rendered)
                cacheable = False
                continue
            content[item.path] = rendered
            files.append((item, _derived(item, rendered, CARD_BASIS)))
            cacheable = cacheable and _render_inputs_pinned(manifest)
        else:
            require = item.kind != "evaluation"
            files.append((item, ExpectedFile(item.local, item.size, item.sha256, require_digest=require)))
    return Expectations(tuple(published), tuple(files), content, tuple(findings), cacheable)


def _derived(item: ReleaseFile, data: bytes, basis: str, optional: bool = False) -> ExpectedFile:
    return ExpectedFile(
        item.local, len(data), hashlib.sha256(data).hexdigest(), basis=basis, optional=optional
    )


def _published_manifest(manifest: Manifest, manifest_path: Path) -> bytes:
    if manifest.root is None:  # the file itself: ruamel (the editor) loads only to drop a root:
        return manifest_path.read_bytes()
    from hubrelease.manifest.editor import published_manifest_bytes

    return published_manifest_bytes(manifest, manifest_path)


def _render(
    manifest: Manifest, manifest_path: Path, folder: Path | None, item: ReleaseFile
) -> bytes | Finding:
    """The card as render-card would write it now, or the finding that says why it cannot be checked."""
    from hubrelease.card.marker import is_generated

    if folder is None:
        return Finding.make("not_checked", item.path, "no release folder to re-render the card from")
    if manifest.card is None:
        try:
            text = (folder / item.local).read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            return Finding.make("unreadable", item.path, f"cannot read: {exc.strerror}")
        if not is_generated(text):
            message = (
                "neither rendered by render-card nor pinned; keep it as the card with "
                f"`card: {{template: none}}` and `hubrelease add {manifest_path.name} {item.local}`"
            )
            return Finding.make("unpinned", item.path, message)
    drifted = _evaluations_not_as_pinned(manifest, folder)
    if drifted:
        # A render of other bytes than the pinned ones proves nothing; the evaluation's finding says why.
        return Finding.make("not_checked", item.path, f"not re-rendered: {drifted[0]} is not as pinned")
    from hubrelease.card.render import render

    try:
        return render(manifest_path, folder, charts=False).text.encode("utf-8")  # charts verify as artifacts
    except CheckFailed as exc:  # render-card refuses the release (provenance): that check's finding says why
        return Finding.make(
            "not_checked", item.path, f"not re-rendered: render-card refuses it: {exc.message}"
        )
    except HubReleaseError as exc:
        return Finding.make("unreadable", item.path, f"cannot re-render the card to check it: {exc}")


def _evaluations_not_as_pinned(manifest: Manifest, folder: Path) -> list[str]:
    """Pinned evaluation files that are missing or differ from their pins (small: read whole)."""
    drifted = []
    for evaluation in manifest.evaluation_files:
        if evaluation.sha256 is None:
            continue
        try:
            data = (folder / evaluation.path).read_bytes()
        except OSError:
            drifted.append(evaluation.path)
            continue
        if hashlib.sha256(data).hexdigest() != evaluation.sha256:
            drifted.append(evaluation.path)
    return drifted


def _render_inputs_pinned(manifest: Manifest) -> bool:
    """True when the card's render read only pinned bytes: a built-in template, pinned evaluation files.

    Their bytes were just checked (``_evaluations_not_as_pinned``), so the render's digest holds as
    long as the manifest's text and hubrelease do, and the evaluation files verify (the same verify
    checks them); a bare-path evaluation or a template file of the release folder could change
    under an unchanged manifest.
    """
    from hubrelease.card import builtin_templates
    from hubrelease.card.render import default_card

    if default_card(manifest).template not in builtin_templates():
        return False
    if manifest.training is not None:  # the card also reads the training: files (card/training.py)
        for path in (
            manifest.training.config,
            manifest.training.arguments,
            manifest.training.state,
            manifest.training.data,
        ):
            artifact = manifest.artifact(path) if path is not None else None
            if path is not None and (artifact is None or artifact.sha256 is None):
                return False
    return all(evaluation.sha256 is not None for evaluation in manifest.evaluation_files)
