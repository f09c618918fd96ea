"""A ``sign`` whose ``model.sig`` is already current, proven from verify's caches alone.

``sign`` of an unchanged release should cost what a warm ``verify`` costs: no manifest validated
(pydantic and the YAML of every artifact), no card rendered, no model-signing imported. This
module imports none of them; ``signing.release`` does the rest when a proof is not at hand
(``signing.sign`` picks).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from hubrelease.errors import InputError
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.release_files import SIGNATURE_NAME
from hubrelease.signing.identity import pem_fingerprint
from hubrelease.signing.signers import SigningMethod
from hubrelease.signing.statement import SignedFiles, signs


class SignResult(NamedTuple):
    path: Path
    method: str
    signed: SignedFiles
    written: bool = True
    """False when the ``model.sig`` already there signs exactly these files with this key (kept)."""
    pinned: str | None = None
    """The identity ``--pin-identity`` recorded in the manifest (None: none was written)."""
    artifact_bytes: int = 0
    """The artifacts' pinned sizes, summed (when ``written``)."""


def sign_unchanged(
    manifest_path: Path,
    text: str,
    directory: Path | None,
    method: SigningMethod,
    progress: Progress = NULL_PROGRESS,
) -> SignResult | None:
    """``sign_release``'s answer for a release whose ``model.sig`` is current, without loading the
    manifest; None when that cannot be shown from the caches (then ``sign_release`` decides).

    It needs the plan a ``sign`` of this very text marked ``sign_ready`` (its checks of pins and
    licences passed; no ``signing:`` section, no ``root:``), a clean verify of that plan (the digests
    push publishes are then its pins and the card's render digest) with the lint and provenance
    findings verify recalls for the same inputs (``verify.plan_cache.recalled_checks``), and the statement of a ``model.sig`` this key verified here
    (``signing.verified``) saying exactly those files.
    """
    from hubrelease.hashing import sha256_file
    from hubrelease.verify.local import VerifyOptions, verify_plan, with_findings
    from hubrelease.verify.plan_cache import load_plan, recalled_checks

    plan = load_plan(manifest_path, text, directory)
    if plan is None or not plan.sign_ready or method.name != "key":
        return None
    report = verify_plan(plan, VerifyOptions(), progress)
    found = recalled_checks(manifest_path, text, directory, plan, report)
    if found is None or with_findings(report, found).has_drift:
        return None
    root = directory if directory is not None else manifest_path.parent
    pins = {item.name: item.sha256 for item in plan.expected}
    files: dict[str, str] = {}
    for path, local in plan.published:
        digest = pins.get(local)
        if digest is None and (root / local).is_file():  # the manifest, an evaluation without a pin
            digest = sha256_file(root / local)
        if digest is None:
            return None
        files[path] = digest
    target = root / SIGNATURE_NAME
    signed = recalled(target, method)
    if signed is None or not signs(signed, files):
        return None
    return SignResult(target, method.name, signed, written=False)


def key_fingerprint(method: SigningMethod) -> str | None:
    """The fingerprint of ``method``'s key, read without model-signing (None: not a plain key, or
    one cryptography cannot read without a password: model-signing's signer handles those)."""
    if method.name != "key" or method.key is None:
        return None
    try:
        return pem_fingerprint(method.key)
    except InputError:
        return None


def recalled(target: Path, method: SigningMethod) -> SignedFiles | None:
    """The statement of ``target`` if it verified here under ``method``'s key (``signing.verified``)."""
    from hubrelease.signing.verified import recall

    fingerprint = key_fingerprint(method)
    return recall(target, fingerprint) if fingerprint is not None else None
