"""`hubrelease verify`: check a release folder against its manifest (or a sha256sum file)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

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
)

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
    from hubrelease.hub.verification import Trust, VerifyRequest, verify_release
    from hubrelease.verify.local import VerifyOptions

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
    trust = Trust(
        public_key=public_key,
        chain=tuple(certificate_chain or ()),
        identity=identity,
        issuer=issuer,
        trust_config=trust_config,
        workflow=github_workflow,
        manifest=trust_manifest,
        allow_unpinned=allow_unpinned_signer,
    )
    if not signature:
        given = [name for name, value in zip(_TRUST_OPTIONS, trust, strict=True) if value]
        if given:
            raise InputError(f"{', '.join(given)} need{'s' * (len(given) == 1)} --signature")
    request = VerifyRequest(
        manifest=manifest,
        directory=directory,
        options=VerifyOptions(jobs=jobs, use_cache=not no_cache, follow_symlinks=follow_symlinks),
        remote=remote,
        revision=revision,
        repo_type=repo_type,
        trust=trust if signature else None,
    )
    with output.progress(json_mode or remote) as progress:  # no bar for the Hub: nothing is hashed
        report = verify_release(request, lambda: hub_session(endpoint, token, quiet), progress)
    raise typer.Exit(render_report(report, str(manifest), json_mode))


_TRUST_OPTIONS = (
    "--public-key",
    "--certificate-chain",
    "--identity",
    "--issuer",
    "--trust-config",
    "--github-workflow",
    "--trust-manifest",
    "--allow-unpinned-signer",
)
"""The options of ``Trust``, in its order."""


def register(app: typer.Typer) -> None:
    app.command("verify", epilog=EXAMPLES)(verify)
