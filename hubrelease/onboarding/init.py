"""`init`: a first manifest for a folder of files, every size and digest computed, never typed.

The folder is walked with ignore rules (``scan``), hashed through the shared pool and stat cache
(``facts``; a following ``verify`` is then all cache hits), roles are guessed (``roles``), the
README's front matter fills the release metadata (``manifest.card_fields``), and the result is written as
commented YAML that passes ``verify`` as it stands (``document``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from hubrelease.card.marker import is_generated
from hubrelease.errors import InputError
from hubrelease.manifest.card_fields import card_release_fields
from hubrelease.manifest.models import HAND_WRITTEN, BaseModelRelation, Manifest, RepoType, is_repo_id
from hubrelease.manifest.root import root_value
from hubrelease.onboarding.document import ManifestDraft, refuse_existing, write_new_manifest
from hubrelease.onboarding.facts import hash_scanned
from hubrelease.onboarding.roles import artifact_entries
from hubrelease.onboarding.scan import scan_folder
from hubrelease.progress import NULL_PROGRESS, Progress

PLACEHOLDER_NAMESPACE = "your-namespace"
DEFAULT_LICENSE = "unknown"
README = "README.md"


@dataclass(frozen=True, kw_only=True)
class InitOptions:
    """What ``hubrelease init`` was asked for; ``None`` means "take it from the README or a default"."""

    root: Path
    out: Path
    repo_id: str | None = None
    repo_type: RepoType = "model"
    license: str | None = None
    base_model: tuple[str, ...] = ()
    base_model_relation: str | None = None
    license_name: str | None = None
    license_link: str | None = None
    exclude: tuple[str, ...] = ()
    recommended: str | None = None
    force: bool = False
    threads: int | None = None


@dataclass(frozen=True)
class InitResult:
    """The written manifest and what the user should hear about."""

    manifest: Manifest
    path: Path
    total_bytes: int
    ignored: tuple[str, ...]
    warnings: tuple[str, ...]


def init_manifest(options: InitOptions, progress: Progress = NULL_PROGRESS) -> InitResult:
    """Scan, hash and describe ``options.root``; write the manifest to ``options.out``."""
    refuse_existing(options.out, options.force)
    _check(options)
    scan = scan_folder(options.root, options.exclude, skip=[options.out])
    facts, unreadable, warnings = hash_scanned(
        options.root, scan.files, threads=options.threads, progress=progress
    )
    skipped = [*scan.skipped, *unreadable]
    notes = [f"{s.name}: {s.reason}; skipped and listed under ignore" for s in skipped] + warnings
    # The card is never an artifact: a hand-written README.md is kept as the card, pinned by digest.
    readme = next((f for f in facts if f.name == README), None)
    card = None
    if readme is not None and not is_generated(_text(options.root / README)):
        card = {"template": HAND_WRITTEN, "size": readme.size, "sha256": readme.sha256}
    artifacts, evaluations = artifact_entries([f for f in facts if f is not readme], options.recommended)
    release, card_notes = _release(options)
    notes += card_notes
    ignored = sorted({*scan.ignored, *(s.name for s in unreadable)})
    total = sum(f.size for f in facts)
    draft = ManifestDraft(
        _header(options, len(facts), total),
        release,
        artifacts,
        evaluations,
        ignored,
        root=root_value(options.root, options.out),
        card=card,
        scaffold=True,
    )
    manifest = write_new_manifest(options.out, draft, force=options.force)
    if options.repo_id is None:
        notes.append(f"no --repo-id given: set release.repo_id (now {release['repo_id']}) before pushing")
    return InitResult(manifest, options.out, total, tuple(ignored), tuple(notes))


def _check(options: InitOptions) -> None:
    """Refuse option values the manifest would refuse, before any file is read."""
    for option, value in [("repo-id", options.repo_id), *(("base-model", b) for b in options.base_model)]:
        if value is not None and not is_repo_id(value):
            raise InputError(f"{value!r} is not a Hub repo id (namespace/name)", field=option)
    if options.license == "other" and not (options.license_name and options.license_link):
        raise InputError("'other' needs --license-name and --license-link", field="license")
    if options.base_model_relation is not None and options.base_model_relation not in get_args(
        BaseModelRelation
    ):
        raise InputError(
            f"{options.base_model_relation!r} is not one of {', '.join(get_args(BaseModelRelation))}",
            field="base-model-relation",
        )


def _release(options: InitOptions) -> tuple[dict[str, Any], list[str]]:
    """The release section: options first, then the README's front matter, then defaults."""
    readme = options.root / README
    fields, notes = card_release_fields(readme, options.repo_type) if readme.is_file() else ({}, [])
    if options.license:
        fields["license"] = options.license
        fields.pop("license_name", None)
        fields.pop("license_link", None)
    for key in ("license_name", "license_link", "base_model_relation"):
        if getattr(options, key) is not None:
            fields[key] = getattr(options, key)
    if options.base_model:
        fields["base_model"] = list(options.base_model)
    release: dict[str, Any] = {
        "repo_id": options.repo_id or f"{PLACEHOLDER_NAMESPACE}/{repo_name(options.root)}",
        "repo_type": options.repo_type,
        # Stated, not implied: the first push creates the repo public (the Hub's default) unless this
        # says true, and no push flips an existing repo's visibility (hub.push._visibility).
        "private": False,
        "license": fields.pop("license", DEFAULT_LICENSE),
    }
    release.update(fields)
    return release, notes


def repo_name(folder: Path) -> str:
    """A valid Hub repo name made from a folder name (invalid characters become '-')."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", folder.resolve().name)
    name = re.sub(r"-{2,}", "-", re.sub(r"\.{2,}", ".", name)).strip("-._")
    return name[:80] or "release"


def _header(options: InitOptions, count: int, total: int) -> list[str]:
    out = options.out
    lines = [
        f"Generated by `hubrelease init {options.root}` from {count} files ({total} bytes):",
        "sizes and sha256 digests were computed from the files, roles guessed from their names.",
        "Review roles and release metadata, add pins and a card section, then run",
        f"`hubrelease verify {out}`. After a file changes: `hubrelease add {out} FILE`.",
    ]
    return lines


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
