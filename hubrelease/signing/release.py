"""A release and its signature: sign what push publishes, check a folder against ``model.sig``.

Signing never hashes an artifact: every pinned file was just verified against its pin (through
the stat cache), so its digest *is* the pin. Only files the manifest cannot pin are hashed: the
rendered card and the manifest itself (which the signature covers), both small.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hubrelease.errors import CheckFailed, InputError
from hubrelease.findings import Finding, VerifyReport
from hubrelease.fsutil import STATE_DIR, atomic_write_text, relative_inside
from hubrelease.hashing import sha256_file
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.release_files import SIGNATURE_NAME
from hubrelease.signing.bundle import SignRequest, signed_bundle
from hubrelease.signing.identity import pem_fingerprint
from hubrelease.signing.signers import SigningMethod, public_key_pem
from hubrelease.signing.statement import (
    SignedFiles,
    differences,
    download_problem,
    signs,
)
from hubrelease.signing.unchanged import SignResult, key_fingerprint, recalled
from hubrelease.signing.verifiers import (
    SignatureInvalid,
    SignaturePolicy,
    check,
    signer_problem,
    verify_bundle,
)

if TYPE_CHECKING:  # pydantic loads only where a manifest is validated: not for a warm verify --signature
    from hubrelease.manifest.models import Manifest
    from hubrelease.signing.worker import SigningWorker

PublishedFile = tuple[str, Path, str | None]
"""(repo path, local path, pinned sha256) of one file push publishes."""


def publish_set(manifest: Manifest, manifest_path: Path, root: Path) -> list[PublishedFile]:
    """Every file push publishes (``hubrelease.release_files``, the one definition push and verify
    use), where its bytes are: the manifest as published (without ``root:``), the rest in ``root``."""
    from hubrelease.fsutil import ReleaseFolder
    from hubrelease.release_files import release_files

    published = manifest_path
    if manifest.root is not None:  # a copy without ``root:``: the round-trip editor (ruamel) loads only then
        from hubrelease.manifest.editor import published_manifest

        published = published_manifest(manifest, manifest_path, root)
    folder = ReleaseFolder(root)
    return [
        (item.path, published if item.kind == "manifest" else folder.path(item.local), item.sha256)
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


def sign_release(
    manifest: Manifest,
    manifest_path: Path,
    root: Path,
    method: SigningMethod,
    progress: Progress = NULL_PROGRESS,
    *,
    pin_identity: bool = False,
    text: str | None = None,
    worker: SigningWorker | None = None,
) -> SignResult:
    """Check the release as push would, then write ``model.sig`` over what push publishes.

    ``pin_identity`` first records the signer in ``signing.identity`` when none is pinned (and
    renders the card again if it was current: it prints the identity), since both are signed.
    ``text``: the manifest's text ``manifest`` was loaded from; the preflight's verify then takes
    its plan from verify's plan cache (``verify.plan_cache``), so an unchanged card is not rendered again.
    ``worker``: builds the signature where model-signing was imported meanwhile (else in process).
    """
    from hubrelease.verify.plan_cache import manifest_plan, mark_sign_ready
    from hubrelease.verify.preflight import preflight

    pinned = pin_signer(manifest, manifest_path, root, method) if pin_identity else None
    if pinned is not None:
        from hubrelease.manifest.load import load_manifest_text
        from hubrelease.manifest.text import read_text

        text = read_text(manifest_path)
        manifest = load_manifest_text(text, manifest_path)
    declared = declared_policy(manifest, SignaturePolicy(), root) if manifest.signing is not None else None
    if declared is not None and declared.method != method.name:
        raise InputError(
            f"the manifest's signing.method is {declared.method}, not {method.name}: sign as it says, or change it",
            path=manifest_path,
            field="signing.method",
        )
    if declared is not None and declared.method == "key" and declared.fingerprint is not None:
        assert method.key is not None
        found = pem_fingerprint(method.key)
        if found != declared.fingerprint:
            raise InputError(
                f"signing.identity pins {declared.fingerprint}, but --key is {found}: sign with the pinned "
                "key, or change the pin",
                path=manifest_path,
                field="signing.identity",
            )
    plan = manifest_plan(manifest, manifest_path, text, root) if text is not None else None
    preflight(manifest, manifest_path, root, progress, plan=plan)
    if plan is not None and text is not None and manifest.signing is None and manifest.root is None:
        mark_sign_ready(manifest, manifest_path, text, root, plan)
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
        return SignResult(target, method.name, kept, written=False, pinned=pinned)
    request = SignRequest(method, manifest.release.repo_id, files, declared, manifest_path)
    bundle, signed = signed_bundle(request) if worker is None else worker.sign(request)
    atomic_write_text(target, bundle)
    fingerprint = key_fingerprint(method)
    if fingerprint is not None:  # signed just now with that key: the next sign or verify recalls it
        from hubrelease.signing.verified import remember

        remember(target, fingerprint, signed, bundle.encode("utf-8"))
    size = sum(artifact.size or 0 for artifact in manifest.artifacts)
    return SignResult(target, method.name, signed, pinned=pinned, artifact_bytes=size)


def pin_signer(manifest: Manifest, manifest_path: Path, root: Path, method: SigningMethod) -> str | None:
    """Record ``method``'s signer in ``signing.identity`` unless one is pinned; the identity written.

    ``key``: the key's fingerprint; ``certificate``: the fingerprint of the chain's root (the last
    of ``signing.certificate_chain``). The manifest is edited in place, its comments kept.
    """
    signing = manifest.signing
    if signing is None or signing.method == "sigstore":
        raise InputError(
            "--pin-identity records a key's fingerprint in the manifest's signing: section: declare its "
            "method (key or certificate) and public_key or certificate_chain first"
            + ("; a keyless signer is pinned by signing.identity itself" if signing is not None else ""),
            path=manifest_path,
            field="signing",
        )
    if signing.identity is not None:
        return None
    assert method.key is not None
    if signing.method == "key":
        assert signing.public_key is not None
        fingerprint, published = pem_fingerprint(method.key), pem_fingerprint(root / signing.public_key)
        if fingerprint != published:
            raise InputError(
                f"--key is {fingerprint}, but signing.public_key ({signing.public_key}) is {published}: "
                "publish the public key of the key you sign with",
                path=manifest_path,
                field="signing.public_key",
            )
    else:
        fingerprint = pem_fingerprint(root / signing.certificate_chain[-1])
    _write_identity(manifest, manifest_path, root, fingerprint)
    return fingerprint


def _write_identity(manifest: Manifest, manifest_path: Path, root: Path, identity: str) -> None:
    from hubrelease.card.render import check_card, render_card
    from hubrelease.manifest.editor import ManifestEditor

    rendered = manifest.card is None or not manifest.card.hand_written
    card = check_card(manifest_path, root=root) if rendered else None
    editor = ManifestEditor.open(manifest_path)
    editor.section("signing")["signing"]["identity"] = identity
    editor.save()
    if card is not None and card.current:
        atomic_write_text(card.path, render_card(manifest_path, root))


def _still_signed(target: Path, method: SigningMethod, files: Mapping[str, str]) -> SignedFiles | None:
    """The existing signature, if ``method``'s key made it over exactly ``files`` as hubrelease signs them.

    ECDSA signatures differ on every run, so re-signing an unchanged release would change
    ``model.sig`` and make push upload it again; keeping it makes ``sign`` then ``push`` idempotent.
    Only plain keys: a certificate or a keyless signature is re-made (new chain, new identity).
    """
    if method.name != "key" or not target.is_file():
        return None
    signed = recalled(target, method)
    if signed is None:
        import tempfile

        with tempfile.TemporaryDirectory() as scratch:
            public = Path(scratch) / "public.pem"
            public.write_bytes(public_key_pem(method))
            try:
                signed = verify_bundle(target, SignaturePolicy(public_key=public))
            except (SignatureInvalid, InputError):
                return None
    return signed if signs(signed, files) else None


def declared_policy(manifest: Manifest, given: SignaturePolicy, root: Path) -> SignaturePolicy:
    """``given`` if it names a signer, else the manifest's ``signing:`` section (paths in ``root``),
    held to ``given``'s fingerprint if it has one."""
    if given.method is not None:
        return given
    signing = manifest.signing
    if signing is None and given.fingerprint is not None:
        raise InputError(
            "--identity sha256:... checks the key or root the manifest's signing: section names, and it has "
            "none: pass --public-key (or --certificate-chain) with it"
        )
    if signing is None and given.anchor is not None:
        raise InputError(f"{given.anchor} names no signer (it has no signing: section)")
    if signing is None:
        raise InputError(
            "--signature: say whom to trust: --public-key, --certificate-chain, --identity (with --issuer), "
            "--github-workflow or --trust-manifest REPO@COMMIT (or declare the signer in the manifest's "
            "signing: section)"
        )
    keyless = signing.method == "sigstore"
    if given.fingerprint is not None and keyless:
        raise InputError(
            "--identity sha256:...: the release is signed keyless; name its signer with --identity and "
            "--issuer, or --github-workflow"
        )
    text = signing.identity if isinstance(signing.identity, str) else None  # a fingerprint or a SAN
    policy = given._replace(
        public_key=root / signing.public_key if signing.public_key else None,
        certificate_chain=tuple(root / path for path in signing.certificate_chain),
        identity=text if keyless else None,
        issuer=signing.issuer if keyless and text is not None else None,
        fingerprint=given.fingerprint or (None if keyless else text),
        workflow=None if isinstance(signing.identity, str | None) else signing.identity,
    )
    if given.anchor is not None and policy.pinned is None:
        raise InputError(
            f"{given.anchor} pins no signer (signing.identity): nothing outside the folder says who signs"
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
    """Findings for ``signature`` (a local file) under ``policy`` against ``observed`` repo paths,
    and whether its signer is one something outside the files pins."""
    signed = verified_statement(signature, policy)
    if isinstance(signed, Finding):
        return [signed]
    return with_signer(statement_findings(signed, observed), policy)


def with_signer(findings: list[Finding], policy: SignaturePolicy) -> list[Finding]:
    """``findings`` of a valid signature, and what it says of its signer when nothing else is wrong."""
    if any(finding.severity == "error" for finding in findings):
        return findings
    return [*findings, _signer_finding(policy)]


def _signer_finding(policy: SignaturePolicy) -> Finding:
    """What a valid signature says of its signer: pinned from outside the download, or unverified."""
    if policy.anchor is not None:
        message = (
            f"signature valid, signer matches the pinned identity {policy.trusted} (from {policy.anchor})"
        )
        return Finding.make("signature", SIGNATURE_NAME, message, severity="info")
    why = (
        f"{policy.pinned} is pinned only by the manifest in the folder being checked"
        if policy.pinned is not None
        else "the manifest pins no signer (signing.identity)"
    )
    message = (
        f"signature valid, but the signer is unverified: {why}; give --identity sha256:..., --public-key, "
        "--github-workflow or --trust-manifest REPO@COMMIT (--allow-unpinned-signer accepts it)"
    )
    return Finding.make(
        "signature", SIGNATURE_NAME, message, severity="warning" if policy.allow_unpinned else "error"
    )


def check_signer(manifest: Manifest, root: Path, signature: Path) -> None:
    """Refuse (exit 1) a ``model.sig`` the manifest's ``signing:`` section does not accept: push
    would publish a signature its readers then refuse."""
    if manifest.signing is None:
        return
    problem = signer_problem(signature, declared_policy(manifest, SignaturePolicy(), root))
    if problem is not None:
        raise CheckFailed(
            f"{SIGNATURE_NAME} is not signed by the manifest's signer: {problem}; re-run `hubrelease sign`; "
            "nothing was pushed",
            path=signature,
        )


def _inside(path: Path, folder: Path, prefix: str) -> str | None:
    """``relative_inside``, resolving only a path not lexically under ``folder`` (``prefix``: its
    text and a separator; the manifest may be elsewhere): past the view's check the folder holds no
    symlink (model-signing refuses any), so a path under it is where it says. Compared as text:
    one resolve per file cost 0.16 s for 2,008 files, one ``relative_to`` 0.03 s."""
    text = str(path)
    if text.startswith(prefix):
        return text[len(prefix) :].replace(os.sep, "/")
    return relative_inside(path, folder)


def verify_local_signature(
    files: Sequence[PublishedFile], report: VerifyReport, policy: SignaturePolicy
) -> list[Finding]:
    """The release folder ``report`` checked against its ``model.sig``: the files as they are on disk,
    the ones ``model_signing verify`` would hash (``signing.folder``), each under its repo path;
    ``files``: what push publishes (``publish_set``, or the verify plan's list)."""
    from hubrelease.signing.folder import cached_view

    folder = Path(report.root)
    signed = verified_statement(folder / SIGNATURE_NAME, policy)
    if isinstance(signed, Finding):
        return [signed]
    view = cached_view(folder, signed)
    if view.refusal is not None:
        return [Finding.make("signature", view.refusal[0], view.refusal[1])]
    seen = {check.path: check.sha256 for check in report.files}
    present = set(view.files)
    observed: dict[str, str | None] = {}
    prefix = os.path.join(str(folder), "")
    for path, local, _ in files:
        name = _inside(local, folder, prefix)
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
    return with_signer(statement_findings(signed, digests) + extra, policy)
