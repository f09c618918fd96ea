"""A release and its signature: sign what push publishes, check a folder against ``model.sig``.

Signing never hashes an artifact: every pinned file was just verified against its pin (through
the stat cache), so its digest *is* the pin. Only files the manifest cannot pin are hashed: the
rendered card and the manifest itself (which the signature covers), both small.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from hubrelease.errors import CheckFailed, InputError
from hubrelease.fsutil import STATE_DIR, atomic_write_text, relative_inside
from hubrelease.hashing import sha256_file
from hubrelease.manifest.models import Manifest
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.release_files import SIGNATURE_NAME
from hubrelease.signing.signers import SigningMethod, public_key_pem, sign_statement
from hubrelease.signing.statement import (
    IGNORE_PATHS,
    SignedFiles,
    differences,
    download_problem,
    payload,
    read_unverified,
)
from hubrelease.signing.verifiers import (
    SignatureInvalid,
    SignaturePolicy,
    check,
    check_declared,
    verify_bundle,
)
from hubrelease.verify.findings import Finding, VerifyReport

PublishedFile = tuple[str, Path, str | None]
"""(repo path, local path, pinned sha256) of one file push publishes."""


def publish_set(manifest: Manifest, manifest_path: Path, root: Path) -> list[PublishedFile]:
    """Every file push publishes (``hubrelease.release_files``, the one definition push and verify
    use), where its bytes are: the manifest as published (without ``root:``), the rest in ``root``."""
    from hubrelease.fsutil import ReleaseFolder
    from hubrelease.manifest.editor import published_manifest
    from hubrelease.release_files import release_files

    folder = ReleaseFolder(root)
    return [
        (
            item.path,
            published_manifest(manifest, manifest_path, root)
            if item.kind == "manifest"
            else folder.path(item.local),
            item.sha256,
        )
        for item in release_files(manifest, manifest_path, root)
    ]


def published_digests(
    files: Sequence[PublishedFile], observed: Mapping[str, str | None] | None = None
) -> dict[str, str | None]:
    """Repo path -> sha256: the pin (``observed`` None: after a clean verify) or what verify saw.

    A file with neither is hashed if it exists (the card, the manifest: small); a missing one is None.
    """
    digests: dict[str, str | None] = {}
    for path, local, pinned in files:
        digest = pinned if observed is None else observed.get(path)
        if digest is None and local.is_file():
            digest = sha256_file(local)
        digests[path] = digest
    return digests


class SignResult(NamedTuple):
    path: Path
    method: str
    signed: SignedFiles
    written: bool = True
    """False when the ``model.sig`` already there signs exactly these files with this key (kept)."""


def sign_release(
    manifest: Manifest,
    manifest_path: Path,
    root: Path,
    method: SigningMethod,
    progress: Progress = NULL_PROGRESS,
) -> SignResult:
    """Check the release as push would, then write ``model.sig`` over what push publishes."""
    from hubrelease.hub.preflight import preflight

    declared = declared_policy(manifest, root, SignaturePolicy()) if manifest.signing is not None else None
    if declared is not None and declared.method != method.name:
        raise InputError(
            f"the manifest's signing.method is {declared.method}, not {method.name}: sign as it says, or change it",
            path=manifest_path,
            field="signing.method",
        )
    preflight(manifest, manifest_path, root, progress)
    digests = published_digests(publish_set(manifest, manifest_path, root))
    missing = [path for path, digest in digests.items() if digest is None]
    if missing:
        raise CheckFailed(
            f"{missing[0]}: to be published but missing; nothing was signed", path=root / missing[0]
        )
    files = {p: d for p, d in digests.items() if d is not None}
    target = root / SIGNATURE_NAME
    kept = _still_signed(target, method, files)
    if kept is not None:
        return SignResult(target, method.name, kept, written=False)
    bundle = sign_statement(method, payload(manifest.release.repo_id, files))
    if declared is not None:
        check_declared(bundle, declared, manifest_path)
    atomic_write_text(target, bundle)
    return SignResult(target, method.name, read_unverified(target))


def _still_signed(target: Path, method: SigningMethod, files: Mapping[str, str]) -> SignedFiles | None:
    """The existing signature, if ``method``'s key made it over exactly ``files`` as hubrelease signs them.

    ECDSA signatures differ on every run, so re-signing an unchanged release would change
    ``model.sig`` and make push upload it again; keeping it makes ``sign`` then ``push`` idempotent.
    Only plain keys: a certificate or a keyless signature is re-made (new chain, new identity).
    """
    if method.name != "key" or not target.is_file():
        return None
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        public = Path(scratch) / "public.pem"
        public.write_bytes(public_key_pem(method))
        try:
            signed = verify_bundle(target, SignaturePolicy(public_key=public))
        except (SignatureInvalid, InputError):
            return None
    if (
        differences(signed, files)
        or download_problem(signed)
        or set(signed.ignore_paths) != set(IGNORE_PATHS)
    ):
        return None
    return signed


def declared_policy(manifest: Manifest, root: Path, given: SignaturePolicy) -> SignaturePolicy:
    """``given`` if it names a signer, else the manifest's ``signing:`` section (paths in ``root``)."""
    if given.method is not None:
        return given
    signing = manifest.signing
    if signing is None:
        raise InputError(
            "--signature: say whom to trust: --public-key, --certificate-chain, or --identity and --issuer "
            "(or declare the signer in the manifest's signing: section)"
        )
    policy = SignaturePolicy(
        root / signing.public_key if signing.public_key else None,
        tuple(root / path for path in signing.certificate_chain),
        signing.identity,
        signing.issuer,
        given.trust_config,
    )
    check(policy)
    return policy


def verified_statement(signature: Path, policy: SignaturePolicy) -> SignedFiles | Finding:
    """The statement of ``signature`` (a local file) once it verifies under ``policy``, else the finding."""
    if not signature.is_file():
        return Finding.make("signature", SIGNATURE_NAME, "no signature: `hubrelease sign` writes one")
    try:
        return verify_bundle(signature, policy)
    except (SignatureInvalid, InputError) as exc:
        if not isinstance(exc, SignatureInvalid) and exc.path != str(signature):
            raise
        return Finding.make("signature", SIGNATURE_NAME, exc.message)


def statement_findings(signed: SignedFiles, observed: Mapping[str, str | None]) -> list[Finding]:
    """Findings for a verified statement against ``observed`` repo paths."""
    findings = [Finding.make("signature", path, problem) for path, problem in differences(signed, observed)]
    unusable = download_problem(signed)
    if unusable is not None:
        findings.append(Finding.make("signature", SIGNATURE_NAME, unusable, severity="warning"))
    return findings


def signature_findings(
    signature: Path, policy: SignaturePolicy, observed: Mapping[str, str | None]
) -> list[Finding]:
    """Findings for ``signature`` (a local file) under ``policy`` against ``observed`` repo paths."""
    signed = verified_statement(signature, policy)
    return [signed] if isinstance(signed, Finding) else statement_findings(signed, observed)


def verify_local_signature(
    manifest: Manifest, manifest_path: Path, report: VerifyReport, policy: SignaturePolicy
) -> list[Finding]:
    """The release folder ``report`` checked against its ``model.sig``: the files as they are on disk,
    the ones ``model_signing verify`` would hash (``signing.folder``), each under its repo path."""
    from hubrelease.signing.folder import model_signing_view

    folder = Path(report.root)
    signed = verified_statement(folder / SIGNATURE_NAME, policy)
    if isinstance(signed, Finding):
        return [signed]
    view = model_signing_view(folder, signed)
    if view.refusal is not None:
        return [Finding.make("signature", view.refusal[0], view.refusal[1])]
    files = publish_set(manifest, manifest_path, folder)
    seen = {check.path: check.sha256 for check in report.files}
    present = set(view.files)
    observed: dict[str, str | None] = {}
    for path, local, _ in files:
        name = relative_inside(local, folder)
        if name in present:
            present.discard(name)
            observed[path] = seen.get(name)
        elif name is None or name.startswith(STATE_DIR + "/") or not local.exists():
            observed[path] = None  # the manifest as published (``root:``), or a file that is gone
    digests = published_digests([f for f in files if f[0] in observed], observed)
    unpublished = present - set(digests)  # files push does not publish, which model_signing hashes
    for name in unpublished & set(signed.digests):
        digests[name] = seen.get(name) or sha256_file(folder / name)
    extra = [
        Finding.make(
            "signature",
            name,
            "not published, but in the folder and not signed: `model_signing verify` refuses the folder",
        )
        for name in sorted(unpublished - set(signed.digests))
    ]
    return statement_findings(signed, digests) + extra
