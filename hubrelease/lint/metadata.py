"""A release's metadata says one thing everywhere: GGUF ``general.*`` keys and a hand-written card's
front matter against the manifest's ``release`` (licence, base models).

The Hub reads a GGUF's ``general.license`` and ``general.base_model.N.*`` into its viewer, and
llama.cpp's converter copies them from the folder's README front matter
(``convert_hf_to_gguf.py`` ``metadata.py`` ``Metadata.load``), so a file converted from another
card carries another licence than the release it is published in.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from hubrelease.errors import HubReleaseError
from hubrelease.formats.gguf_header import read_gguf
from hubrelease.fsutil import ReleaseFolder
from hubrelease.lint.findings import FileFinding, RuleFinding, error

if TYPE_CHECKING:
    from hubrelease.manifest.models import Manifest

_REPO_URL = re.compile(r"^https?://(?:huggingface\.co|hf\.co)/([^/\s]+/[^/\s]+?)/?$")


def gguf_general_findings(manifest: Manifest, root: Path) -> list[FileFinding]:
    """Each published GGUF's ``general.license`` and base models against ``release``."""
    folder = ReleaseFolder(root)
    results = []
    release = manifest.release
    for artifact in manifest.artifacts:
        if not artifact.path.endswith(".gguf"):
            continue
        try:
            model = read_gguf(folder.path(artifact.local_path), keep_key=lambda k: k.startswith("general."))
        except (HubReleaseError, OSError):
            continue  # the drafter lint and verify report an unreadable file
        found: list[RuleFinding] = []
        license_id = model.value("general.license")
        if isinstance(license_id, str) and license_id != release.license:
            found.append(
                error(
                    "gguf-general",
                    f"general.license is {license_id!r} but the release is licensed {release.license!r}",
                )
            )
        count = model.value("general.base_model.count")
        for index in range(count if isinstance(count, int) and 0 <= count <= 64 else 0):
            url = model.value(f"general.base_model.{index}.repo_url")
            match = _REPO_URL.match(url) if isinstance(url, str) else None
            if match and match.group(1) not in release.base_model:
                found.append(
                    error(
                        "gguf-general",
                        f"general.base_model.{index}.repo_url names {match.group(1)}, not a base_model of the "
                        f"release ({', '.join(release.base_model) or 'none'})",
                    )
                )
        results += [FileFinding(artifact.path, f) for f in found]
    return results


def card_metadata_findings(manifest: Manifest, root: Path) -> list[FileFinding]:
    """A hand-written card's front matter (parsed by huggingface_hub's ``ModelCard``) against ``release``."""
    from hubrelease.manifest.card_fields import card_release_fields

    card = manifest.card
    path = root / manifest.card_output
    if card is None or not card.hand_written or not path.is_file():
        return []  # a rendered card is written from the manifest (verify checks it is a fresh render)
    fields, _ = card_release_fields(path, manifest.release.repo_type)
    release = manifest.release
    found = []
    if "license" in fields and fields["license"] != release.license:
        found.append(
            error(
                "card-metadata",
                f"the card's license is {fields['license']!r} but the manifest's is {release.license!r}",
            )
        )
    if "base_model" in fields and sorted(fields["base_model"]) != sorted(release.base_model):
        found.append(
            error(
                "card-metadata",
                f"the card's base_model is {fields['base_model']} but the manifest's is {release.base_model}",
            )
        )
    return [FileFinding(manifest.card_output, f) for f in found]
