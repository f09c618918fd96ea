"""`hubrelease verify`: check a release folder against its manifest (or a sha256sum file)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NamedTuple

import typer

from hubrelease.cli import output
from hubrelease.cli.options import (
    DirOpt,
    EndpointOpt,
    JobsOpt,
    JsonOpt,
    ManifestArg,
    QuietOpt,
    RepoTypeOpt,
    TokenOpt,
    hub_session,
    with_release,
)

if TYPE_CHECKING:
    from hubrelease.findings import Finding, VerifyReport
    from hubrelease.signing.verifiers import SignaturePolicy

EXAMPLES = """
Examples:

  hubrelease verify hubrelease.yaml                 # size first, then sha256; cached when unchanged

  hubrelease verify hubrelease.yaml --no-cache -j 8 # re-hash everything on 8 threads

  hubrelease verify SHA256SUMS                      # a sha256sum -c file works as input too

  hubrelease verify hubrelease.yaml --json | jq .summary

  hubrelease verify hubrelease.yaml --remote --revision v1.0   # the Hub vs the manifest, 0 bytes downloaded

  hubrelease verify NAME/hubrelease.yaml --signature --identity sha256:HEX       # the key the card pins

  hubrelease verify NAME/hubrelease.yaml --signature --trust-manifest ORG/NAME@COMMIT  # pins at a commit

  hubrelease verify hubrelease.yaml --signature --public-key signing-pub.pem      # model.sig, key-signed

  hubrelease verify hubrelease.yaml --remote --signature \
      --identity https://github.com/ORG/REPO/.github/workflows/release.yml@refs/tags/v1.0 \
      --issuer https://token.actions.githubusercontent.com                        # keyless, on the Hub

A local --signature trusts only a signer named from outside the folder (an option, or the manifest
published at a commit): the folder's own manifest cannot vouch for it (--allow-unpinned-signer).
Exit codes: 0 clean, 1 drift (missing, size or digest mismatch, unlisted file, a signature that
does not verify, does not sign these files or whose signer is not the pinned one, or unverified), 2 invalid input, 4 (--remote) the Hub could not be
reached or refused us (or Sigstore's trust root could not be fetched).
"""

SignatureOpt = Annotated[
    bool,
    typer.Option(
        "--signature",
        help="Also check model.sig (OpenSSF Model Signing): who signed it, and that it signs exactly these files.",
    ),
]
PublicKeyOpt = Annotated[
    Path | None,
    typer.Option("--public-key", "--key", help="With --signature: the signer's EC public key (PEM)."),
]
ChainOpt = Annotated[
    list[Path] | None,
    typer.Option("--certificate-chain", help="With --signature: trusted certificates (PEM); repeatable."),
]
IdentityOpt = Annotated[
    str | None,
    typer.Option(
        "--identity",
        help="With --signature: the key's fingerprint (sha256:HEX), or the keyless signer (certificate SAN, exact).",
    ),
]
WorkflowOpt = Annotated[
    str | None,
    typer.Option(
        "--github-workflow",
        help="With --signature: the keyless signer as OWNER/REPO/.github/workflows/FILE.yml@REF (REF may be a pattern).",
    ),
]
TrustManifestOpt = Annotated[
    str | None,
    typer.Option(
        "--trust-manifest",
        help="With --signature: take the signer from the manifest published at REPO@COMMIT (from the Hub).",
    ),
]
AllowUnpinnedOpt = Annotated[
    bool,
    typer.Option(
        "--allow-unpinned-signer",
        help="With --signature: accept a signer nothing outside the folder pins (a warning, exit 0).",
    ),
]
IssuerOpt = Annotated[
    str | None, typer.Option("--issuer", help="With --signature: the keyless signer's OIDC issuer.")
]
TrustConfigOpt = Annotated[
    Path | None,
    typer.Option("--trust-config", help="With --identity: a Sigstore clienttrustconfig JSON (offline)."),
]


def verify(
    manifest: ManifestArg,
    directory: DirOpt = None,
    jobs: JobsOpt = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Re-hash every file; ignore the stat cache.")
    ] = False,
    follow_symlinks: Annotated[
        bool,
        typer.Option(
            "--follow-symlinks", help="Hash the targets of symlinked artifacts instead of refusing."
        ),
    ] = False,
    *,
    json_mode: JsonOpt = False,
    remote: Annotated[
        bool,
        typer.Option("--remote", help="Check the published repo and all pins on the Hub (no downloads)."),
    ] = False,
    revision: Annotated[
        str | None,
        typer.Option("--revision", help="With --remote: branch, tag or commit (default: release.revision)."),
    ] = None,
    endpoint: EndpointOpt = None,
    token: TokenOpt = None,
    repo_type: RepoTypeOpt = None,
    quiet: QuietOpt = False,
    signature: SignatureOpt = False,
    public_key: PublicKeyOpt = None,
    certificate_chain: ChainOpt = None,
    identity: IdentityOpt = None,
    issuer: IssuerOpt = None,
    trust_config: TrustConfigOpt = None,
    github_workflow: WorkflowOpt = None,
    trust_manifest: TrustManifestOpt = None,
    allow_unpinned_signer: AllowUnpinnedOpt = False,
) -> None:
    """Verify every artifact of a release: size, then SHA-256, plus files the manifest does not list."""
    from hubrelease.cli.report import render_report
    from hubrelease.errors import InputError
    from hubrelease.hashing import looks_like_sums
    from hubrelease.verify import VerifyOptions, verify_manifest_file, verify_sums_file

    output.set_quiet(quiet)
    # An option the chosen mode would ignore is refused: a silently local verify is not the check asked for.
    hub_only = {
        "--revision": revision is not None,
        "--endpoint": endpoint is not None,
        "--token": token is not None,
        "--repo-type": repo_type is not None,
    }
    local_only = {"--jobs": jobs is not None, "--no-cache": no_cache, "--follow-symlinks": follow_symlinks}
    if trust_manifest is not None:  # it reads the Hub, locally too
        hub_only = {name: given for name, given in hub_only.items() if name in ("--revision", "--repo-type")}
    ignored = [name for name, given in (local_only if remote else hub_only).items() if given]
    if ignored:
        one = len(ignored) == 1
        needs = (
            f"appl{'ies' if one else 'y'} to the local check, not --remote"
            if remote
            else f"need{'s' * one} --remote"
        )
        raise InputError(f"{', '.join(ignored)} {needs}")
    policy = _policy(
        signature,
        Trust(public_key, certificate_chain, identity, issuer, trust_config, github_workflow, trust_manifest),
        allow_unpinned_signer,
    )
    if remote:
        from hubrelease.hub import verify_remote
        from hubrelease.manifest import load_manifest, release_root

        release = load_manifest(manifest)
        root = release_root(release, manifest, directory)
        api = hub_session(endpoint, token, quiet)
        release = with_release(release, repo_type)
        report = verify_remote(release, api, revision, manifest_path=manifest, root=root)
        if policy is not None:
            from hubrelease.hub.remote_signature import signer_policy, verify_remote_signature
            from hubrelease.signing.release import publish_set

            local = {path: copy for path, copy, _ in publish_set(release, manifest, root)}
            commit = str(report.extra["commit"])
            trusted = signer_policy(release, manifest, root, policy, trust_manifest, api=api, remote=True)
            found, traffic = verify_remote_signature(
                api, release.release.repo_id, commit, trusted, local, repo_type=release.release.repo_type
            )
            report = _with_signature(report, found, traffic.fetched_bytes)
        raise typer.Exit(render_report(report, str(manifest), json_mode))
    try:
        text = manifest.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("manifest not found", path=manifest) from None
    except (IsADirectoryError, UnicodeDecodeError):
        raise InputError("not a manifest or sha256sum file", path=manifest) from None
    options = VerifyOptions(
        jobs=jobs,
        use_cache=not no_cache,
        follow_symlinks=follow_symlinks,
        remembered_target=policy is None,
    )
    sums = looks_like_sums(text)
    if sums and policy is not None:
        raise InputError(
            "--signature checks a release against its manifest, not a sha256sum file", path=manifest
        )
    if policy is not None:  # whom to trust is settled (and fetched) before any byte is hashed
        from hubrelease.hub.remote_signature import signer_policy
        from hubrelease.manifest import load_manifest_text, release_root

        release = load_manifest_text(text, manifest)
        hub = hub_session(endpoint, token, quiet) if trust_manifest is not None else None
        root = release_root(release, manifest, directory)
        policy = signer_policy(release, manifest, root, policy, trust_manifest, api=hub)
    with output.progress(json_mode) as progress:
        if sums:
            report = verify_sums_file(manifest, text, directory, options, progress)
        else:
            report = verify_manifest_file(manifest, text, directory, options, progress)
    if policy is not None:
        from hubrelease.signing.release import verify_local_signature

        report = _with_signature(report, verify_local_signature(release, manifest, report, policy))
    raise typer.Exit(render_report(report, str(manifest), json_mode))


class Trust(NamedTuple):
    """The ``--signature`` options that name whom to trust."""

    public_key: Path | None
    chain: list[Path] | None
    identity: str | None
    issuer: str | None
    trust_config: Path | None
    workflow: str | None
    manifest: str | None


def _policy(signature: bool, trust: Trust, allow_unpinned: bool) -> SignaturePolicy | None:
    """Whom ``--signature`` trusts (no one named yet: a manifest's ``signing:`` says), or None
    without it (then its options are a usage error)."""
    from hubrelease.errors import InputError

    options = {
        "--public-key": trust.public_key,
        "--certificate-chain": trust.chain,
        "--identity": trust.identity,
        "--issuer": trust.issuer,
        "--trust-config": trust.trust_config,
        "--github-workflow": trust.workflow,
        "--trust-manifest": trust.manifest,
    }
    given = [name for name, value in options.items() if value]
    if allow_unpinned:
        given.append("--allow-unpinned-signer")
    if not signature:
        if given:
            raise InputError(f"{', '.join(given)} need{'s' * (len(given) == 1)} --signature")
        return None
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
    named = [name for name in given if name not in ("--trust-config", "--issuer", "--allow-unpinned-signer")]
    if trust.manifest is not None and len(named) > 1:
        raise InputError(f"--trust-manifest takes the signer from that manifest: drop {named[0]}")
    policy = SignaturePolicy(
        public_key=trust.public_key,
        certificate_chain=tuple(trust.chain or ()),
        identity=None if fingerprint is not None else trust.identity,
        issuer=trust.issuer,
        trust_config=trust.trust_config,
        fingerprint=fingerprint,
        workflow=parse_workflow(trust.workflow) if trust.workflow is not None else None,
        anchor=named[0] if named and trust.manifest is None else None,
        allow_unpinned=allow_unpinned,
    )
    check(policy)
    return policy


def _with_signature(report: VerifyReport, found: list[Finding], fetched: int | None = None) -> VerifyReport:
    """``report`` with the signature's findings, and ``signature`` in its ``--json`` extra."""
    from hubrelease.release_files import SIGNATURE_NAME

    extra = dict(report.extra)
    ok = all(finding.severity != "error" for finding in found)
    extra["signature"] = {"path": SIGNATURE_NAME, "ok": ok, "fetched_bytes": fetched}
    return report._replace(findings=tuple(sorted(report.findings + tuple(found))), extra=extra)


def register(app: typer.Typer) -> None:
    app.command("verify", epilog=EXAMPLES)(verify)
