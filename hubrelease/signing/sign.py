"""``sign`` as one call: from verify's caches when ``model.sig`` is provably current
(``signing.unchanged``, which loads no manifest), else through ``signing.release``."""

from __future__ import annotations

import contextlib
from pathlib import Path

from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.signing.signers import SigningMethod
from hubrelease.signing.unchanged import SignResult, sign_unchanged

WORKER_BYTES = 1 << 30
"""Artifact bytes from which model-signing is imported in the signing worker while the release is
checked: hashing that much (when the stat cache cannot vouch for it) outlasts the worker's start
(~0.4 s); below it the worker's second interpreter costs more than the overlap saves."""


def sign_manifest(
    manifest_path: Path,
    directory: Path | None,
    method: SigningMethod,
    progress: Progress = NULL_PROGRESS,
    *,
    pin_identity: bool = False,
) -> SignResult:
    """``sign``: the answer from the caches when ``model.sig`` is provably current, else the manifest
    loaded, the release checked as push checks it and ``model.sig`` written (``signing.release``),
    with model-signing imported meanwhile by the signing worker (``signing.worker``) for a large release."""
    from hubrelease.manifest.text import read_text

    text = read_text(manifest_path)
    result = None if pin_identity else sign_unchanged(manifest_path, text, directory, method, progress)
    if result is not None:
        return result
    from hubrelease.manifest import load_manifest_text, release_root
    from hubrelease.signing.release import sign_release

    release = load_manifest_text(text, manifest_path)
    root = release_root(release, manifest_path, directory)
    with contextlib.ExitStack() as stack:
        worker = None
        if not method.sigstore and sum(a.size or 0 for a in release.artifacts) >= WORKER_BYTES:
            from hubrelease.signing.worker import SigningWorker

            worker = stack.enter_context(SigningWorker())
        return sign_release(
            release,
            manifest_path,
            root,
            method,
            progress,
            pin_identity=pin_identity,
            text=text,
            worker=worker,
        )
