"""``sign`` as one call: from verify's caches when ``model.sig`` is provably current
(``signing.unchanged``, which loads no manifest), else through ``signing.release``."""

from __future__ import annotations

from pathlib import Path

from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.signing.signers import SigningMethod
from hubrelease.signing.unchanged import SignResult, sign_unchanged


def sign_manifest(
    manifest_path: Path,
    directory: Path | None,
    method: SigningMethod,
    progress: Progress = NULL_PROGRESS,
    *,
    pin_identity: bool = False,
) -> SignResult:
    """``sign``: the answer from the caches when ``model.sig`` is provably current, else the manifest
    loaded, the release checked as push checks it and ``model.sig`` written (``signing.release``)."""
    from hubrelease.manifest.text import read_text

    text = read_text(manifest_path)
    result = None if pin_identity else sign_unchanged(manifest_path, text, directory, method, progress)
    if result is not None:
        return result
    from hubrelease.manifest import load_manifest_text, release_root
    from hubrelease.signing.release import sign_release

    release = load_manifest_text(text, manifest_path)
    root = release_root(release, manifest_path, directory)
    return sign_release(release, manifest_path, root, method, progress, pin_identity=pin_identity, text=text)
