"""``verify`` as one call: a release folder (or a sha256sum file) against its manifest, or the Hub
against it, with or without its signature.

It sits in hub because it is the floor that sees all it combines: local verify, the signature
check (signing) and the Hub (``--remote``, and ``--trust-manifest``, which reads a published
manifest locally too). Nothing heavy loads at import: a warm local verify takes its plan from
``verify.plan_cache`` without pydantic, the Hub client or model-signing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from hubrelease.errors import InputError
from hubrelease.findings import Finding, VerifyReport
from hubrelease.progress import NULL_PROGRESS, Progress
from hubrelease.release_files import SIGNATURE_NAME

if TYPE_CHECKING:
    from huggingface_hub import HfApi

    from hubrelease.signing.release import PublishedFile
    from hubrelease.signing.verifiers import SignaturePolicy
    from hubrelease.verify.local import VerifyOptions


class Trust(NamedTuple):
    """Whom ``--signature`` trusts, as given: nothing named means the manifest's ``signing:`` says."""

    public_key: Path | None = None
    chain: tuple[Path, ...] = ()
    identity: str | None = None
    """A key fingerprint (``sha256:HEX``) or the keyless signer's certificate SAN."""
    issuer: str | None = None
    trust_config: Path | None = None
    workflow: str | None = None
    manifest: str | None = None
    """``REPO@COMMIT``: the signer pinned by the manifest published there."""
    allow_unpinned: bool = False


class VerifyRequest(NamedTuple):
    """One ``verify``: what to check, where, and how."""

    manifest: Path
    directory: Path | None = None
    options: VerifyOptions | None = None
    """The local check's options (None: the defaults)."""
    remote: bool = False
    revision: str | None = None
    repo_type: str | None = None
    trust: Trust | None = None
    """``--signature``'s trust (None: the signature is not checked)."""


def verify_release(
    request: VerifyRequest,
    session: Callable[[], HfApi],
    progress: Progress = NULL_PROGRESS,
) -> VerifyReport:
    """The report of one ``verify``; ``session`` makes the Hub client, called only when the Hub is read.

    Whom to trust is settled (and fetched) before any byte is hashed, so a bad ``--trust-manifest``
    fails first.
    """
    policy = signature_policy(request.trust) if request.trust is not None else None
    if request.remote:
        return _remote(request, session, policy)
    from hubrelease.hashing import looks_like_sums
    from hubrelease.verify.local import VerifyOptions, verify_sums_file
    from hubrelease.verify.plan_cache import verify_manifest_file

    manifest = request.manifest
    try:
        text = manifest.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("manifest not found", path=manifest) from None
    except (IsADirectoryError, UnicodeDecodeError):
        raise InputError("not a manifest or sha256sum file", path=manifest) from None
    options = (request.options or VerifyOptions())._replace(remembered_target=policy is None)
    if looks_like_sums(text):
        if policy is not None:
            raise InputError(
                "--signature checks a release against its manifest, not a sha256sum file", path=manifest
            )
        return verify_sums_file(manifest, text, request.directory, options, progress)
    if policy is None:
        return verify_manifest_file(manifest, text, request.directory, options, progress)
    from hubrelease.signing.release import verify_local_signature

    trust_manifest = request.trust.manifest if request.trust is not None else None
    if trust_manifest is None and policy.method is not None and request.directory is None:
        files = _published_by_plan(manifest, text)
        if files is not None:  # the signer is named and the plan lists what push publishes
            report = verify_manifest_file(manifest, text, None, options, progress)
            return _with_signature(report, verify_local_signature(files, report, policy))
    from hubrelease.hub.remote_signature import signer_policy
    from hubrelease.manifest import load_manifest_text, release_root
    from hubrelease.signing.release import publish_set

    release = load_manifest_text(text, manifest)
    hub = session() if trust_manifest is not None else None
    root = release_root(release, manifest, request.directory)
    policy = signer_policy(release, manifest, root, policy, trust_manifest, api=hub)
    report = verify_manifest_file(manifest, text, request.directory, options, progress)
    return _with_signature(
        report, verify_local_signature(publish_set(release, manifest, root), report, policy)
    )


def _published_by_plan(manifest: Path, text: str) -> list[PublishedFile] | None:
    """What push publishes, as ``publish_set`` lists it, from verify's stored plan of ``text`` (the
    manifest not loaded); None without one, or where the published manifest is a copy (``root:``)."""
    from hubrelease.verify.plan_cache import load_plan

    plan = load_plan(manifest, text, None)
    if plan is None or plan.rooted:
        return None
    return [(path, plan.folder / local, None) for path, local in plan.published]


def _remote(
    request: VerifyRequest, session: Callable[[], HfApi], policy: SignaturePolicy | None
) -> VerifyReport:
    """The Hub at ``request.revision`` against the manifest, and its ``model.sig`` with a policy."""
    from hubrelease.hub.remote_verify import verify_remote
    from hubrelease.manifest import load_manifest, release_root
    from hubrelease.manifest.load import with_release

    release = load_manifest(request.manifest)
    root = release_root(release, request.manifest, request.directory)
    api = session()
    release = with_release(release, request.repo_type)
    report = verify_remote(release, api, request.revision, manifest_path=request.manifest, root=root)
    if policy is None:
        return report
    from hubrelease.hub.remote_signature import signer_policy, verify_remote_signature
    from hubrelease.signing.release import publish_set

    trust_manifest = request.trust.manifest if request.trust is not None else None
    local = {path: copy for path, copy, _ in publish_set(release, request.manifest, root)}
    commit = str(report.extra["commit"])
    trusted = signer_policy(release, request.manifest, root, policy, trust_manifest, api=api, remote=True)
    found, traffic = verify_remote_signature(
        api, release.release.repo_id, commit, trusted, local, repo_type=release.release.repo_type
    )
    return _with_signature(report, found, traffic.fetched_bytes)


def signature_policy(trust: Trust) -> SignaturePolicy:
    """The policy ``trust`` names (no one named yet: a manifest's ``signing:`` says), its options
    checked against each other."""
    from hubrelease.signing.identity import parse_workflow
    from hubrelease.signing.verifiers import SignaturePolicy, check

    fingerprint = (
        trust.identity if trust.identity is not None and trust.identity.startswith("sha256:") else None
    )
    if fingerprint is not None:
        from hubrelease.manifest.models import KEY_FINGERPRINT

        if not KEY_FINGERPRINT.match(fingerprint) or trust.issuer is not None:
            raise InputError(
                f"--identity {fingerprint}: a key fingerprint is sha256: and 64 lowercase hex digits, without --issuer"
            )
    named = [
        name
        for name, value in (
            ("--public-key", trust.public_key),
            ("--certificate-chain", trust.chain),
            ("--identity", trust.identity),
            ("--github-workflow", trust.workflow),
            ("--trust-manifest", trust.manifest),
        )
        if value
    ]
    if trust.manifest is not None and len(named) > 1:
        raise InputError(f"--trust-manifest takes the signer from that manifest: drop {named[0]}")
    policy = SignaturePolicy(
        public_key=trust.public_key,
        certificate_chain=trust.chain,
        identity=None if fingerprint is not None else trust.identity,
        issuer=trust.issuer,
        trust_config=trust.trust_config,
        fingerprint=fingerprint,
        workflow=parse_workflow(trust.workflow) if trust.workflow is not None else None,
        anchor=named[0] if named and trust.manifest is None else None,
        allow_unpinned=trust.allow_unpinned,
    )
    check(policy)
    return policy


def _with_signature(report: VerifyReport, found: list[Finding], fetched: int | None = None) -> VerifyReport:
    """``report`` with the signature's findings, and ``signature`` in its ``--json`` extra."""
    extra = dict(report.extra)
    ok = all(finding.severity != "error" for finding in found)
    extra["signature"] = {"path": SIGNATURE_NAME, "ok": ok, "fetched_bytes": fetched}
    return report._replace(findings=tuple(sorted(report.findings + tuple(found))), extra=extra)
