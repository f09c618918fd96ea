"""``sign`` as one call: from verify's caches when ``model.sig`` is provably current
(``signing.unchanged``, which loads no manifest), else through ``signing.release``."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.signing.signers import SigningMethod
from hubrelease.signing.unchanged import SignResult, sign_unchanged

if TYPE_CHECKING:
    from hubrelease.signing.worker import SigningWorker

WORKER_BYTES = 1 << 30
"""Artifact bytes from which model-signing is imported in the signing worker while the release is
checked: hashing that much (when the stat cache cannot vouch for it) outlasts the worker's start
(~0.4 s on 2 cores)."""
WORKER_CPUS = 4
"""CPUs from which every signature is made in the worker, started before the manifest is even
loaded: the worker's interpreter then has a core of its own. On 2 cores it takes turns with the
checks it was meant to run beside, and signing a small release in process is faster."""


def _worker_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


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
    with model-signing imported meanwhile by the signing worker (``signing.worker``) where that is faster."""
    from hubrelease.manifest.text import read_text

    text = read_text(manifest_path)
    result = None if pin_identity else sign_unchanged(manifest_path, text, directory, method, progress)
    if result is not None:
        return result
    with contextlib.ExitStack() as stack:
        worker = None
        if not method.sigstore and _worker_cpus() >= WORKER_CPUS:  # before the manifest's imports
            worker = stack.enter_context(_start_worker())
        from hubrelease.manifest import load_manifest_text, release_root
        from hubrelease.signing.release import sign_release

        release = load_manifest_text(text, manifest_path)
        root = release_root(release, manifest_path, directory)
        if (
            worker is None
            and not method.sigstore
            and sum(a.size or 0 for a in release.artifacts) >= WORKER_BYTES
        ):
            worker = stack.enter_context(_start_worker())
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


def _start_worker() -> SigningWorker:
    from hubrelease.signing.worker import SigningWorker

    return SigningWorker()
