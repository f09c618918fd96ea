"""`hubrelease sign`: write ``model.sig`` (OpenSSF Model Signing) over what push publishes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.options import DirOpt, JsonOpt, ManifestArg, QuietOpt

EXAMPLES = """
Examples:

  hubrelease sign hubrelease.yaml --key signing-key.pem            # EC P-256/P-384 private key (PEM)

  hubrelease sign hubrelease.yaml --key signing-key.pem --pin-identity   # first time: pin its fingerprint

  hubrelease sign hubrelease.yaml --key leaf-key.pem --certificate leaf.pem --chain int-ca.pem

  hubrelease sign hubrelease.yaml --sigstore    # keyless, in CI: GitHub Actions with id-token: write

  model_signing verify key DIR --signature DIR/model.sig --public_key signing-pub.pem   # on an hf download

A signer the manifest pins (signing.identity: a key fingerprint, a GitHub workflow) is the only
one accepted; --pin-identity records the key's fingerprint when none is pinned (the card prints it).
The release is checked as push checks it first (local verify, lint, a current card); the
signature is built from the manifest's verified digests, so no artifact is hashed again. An
encrypted key's password is read from HUBRELEASE_SIGNING_KEY_PASSWORD. Exit codes: 0 signed,
1 the release does not verify, 2 invalid input (key, certificate, no OIDC credential, the optional
extra missing: pip install 'hubrelease[sign]'), 4 Sigstore could not be reached.
"""


def sign(
    manifest: ManifestArg,
    directory: DirOpt = None,
    key: Annotated[
        Path | None,
        typer.Option("--key", help="EC private key (PEM, P-256/P-384/P-521); with --certificate, its key."),
    ] = None,
    certificate: Annotated[
        Path | None, typer.Option("--certificate", help="Signing certificate (PEM) for --key.")
    ] = None,
    chain: Annotated[
        list[Path] | None,
        typer.Option("--chain", help="Intermediate certificates (PEM) that lead to the root; repeatable."),
    ] = None,
    *,
    sigstore: Annotated[
        bool,
        typer.Option(
            "--sigstore", help="Keyless: Fulcio certificate for the CI job's ambient OIDC identity."
        ),
    ] = False,
    trust_config: Annotated[
        Path | None,
        typer.Option(
            "--trust-config",
            help="With --sigstore: a Sigstore clienttrustconfig JSON (default: public good).",
        ),
    ] = None,
    pin_identity: Annotated[
        bool,
        typer.Option(
            "--pin-identity",
            help="Record this key's fingerprint (or the chain root's) in signing.identity if none is pinned.",
        ),
    ] = False,
    quiet: QuietOpt = False,
    json_mode: JsonOpt = False,
) -> None:
    """Sign the release: model.sig at its root, an OpenSSF Model Signing bundle over every published file."""
    from hubrelease.cli.report import counted
    from hubrelease.errors import InputError
    from hubrelease.sizes import human_bytes

    output.set_quiet(quiet)
    if sigstore == (key is not None):
        raise InputError("say how to sign: --key PEM (with --certificate for a certificate), or --sigstore")
    if (certificate is not None or chain) and key is None:
        raise InputError("--certificate and --chain sign with --key, the certificate's private key")
    if chain and certificate is None:
        raise InputError("--chain needs --certificate")
    if trust_config is not None and not sigstore:
        raise InputError("--trust-config applies to --sigstore")
    from hubrelease.signing.sign import sign_manifest
    from hubrelease.signing.signers import SigningMethod

    method = SigningMethod(
        key=key,
        certificate=certificate,
        chain=tuple(chain or ()),
        sigstore=sigstore,
        trust_config=trust_config,
    )
    with output.progress(json_mode) as progress:
        result = sign_manifest(manifest, directory, method, progress, pin_identity=pin_identity)
    signed = result.signed
    if json_mode:
        output.emit_document(
            "sign",
            signature=str(result.path),
            method=result.method,
            written=result.written,
            pinned=result.pinned,
            subject={"name": signed.name, "sha256": signed.root_digest},
            ignore_paths=list(signed.ignore_paths),
            files=[{"path": path, "sha256": digest} for path, digest in signed.digests.items()],
        )
        return
    if result.pinned is not None:
        output.info_line(f"pinned signing.identity: {result.pinned} (in {manifest} and its card)")
    if not result.written:
        output.info_line(
            f"unchanged: {result.path} already signs these {len(signed.digests)} files with this key "
            f"(subject sha256 {signed.root_digest})"
        )
        return
    output.info_line(
        f"signed {counted(signed.digests, str(manifest))} ({human_bytes(result.artifact_bytes)} of artifacts) with {result.method}: "
        f"{result.path} (subject sha256 {signed.root_digest})"
    )


def register(app: typer.Typer) -> None:
    app.command("sign", epilog=EXAMPLES)(sign)
