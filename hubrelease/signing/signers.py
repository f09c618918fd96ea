"""The three ways to sign, each model-signing's own signer: an EC key, a certificate chain, Sigstore.

Keyless signing takes the CI job's ambient OIDC credential (GitHub Actions with ``id-token: write``,
GitLab, Buildkite, Google Cloud: ``sigstore.oidc.detect_credential``) and never falls back to
model-signing's interactive browser flow, which would hang a CI job.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from hubrelease.errors import HubReleaseError, InputError
from hubrelease.signing.extra import required

if TYPE_CHECKING:
    from model_signing._signing import signing as oms_signing

PASSWORD_ENV = "HUBRELEASE_SIGNING_KEY_PASSWORD"
"""An encrypted private key's password is read from here, never from the command line."""


class SigstoreUnavailable(HubReleaseError):
    """Sigstore's services (TUF trust root, Fulcio, Rekor) could not be reached: exit 4, like the Hub."""

    exit_code = 4


class SigningMethod(NamedTuple):
    """What to sign with (one of: ``key`` alone, ``key`` + ``certificate``, ``sigstore``)."""

    key: Path | None = None
    certificate: Path | None = None
    chain: tuple[Path, ...] = ()
    sigstore: bool = False
    trust_config: Path | None = None
    """Sigstore: a ``clienttrustconfig`` JSON instead of the public-good instance."""

    @property
    def name(self) -> str:
        if self.sigstore:
            return "sigstore"
        return "certificate" if self.certificate is not None else "key"


def signer(method: SigningMethod) -> oms_signing.Signer:
    """model-signing's signer for ``method``; unusable key material is an ``InputError`` naming the file."""
    with required():
        from model_signing._signing import sign_certificate, sign_ec_key
    if method.sigstore:
        return _sigstore_signer(method.trust_config)
    if method.key is None:
        raise InputError("--key is required to sign with a key or a certificate")
    password = os.environ.get(PASSWORD_ENV)
    try:
        if method.certificate is not None:
            # model-signing's certificate signer cannot take a password (sign_certificate.py: super().__init__(key)).
            return sign_certificate.Signer(method.key, method.certificate, list(method.chain))
        # model-signing 1.1.1 types the password `str` but passes it to cryptography's
        # load_pem_private_key, which takes bytes only (its own `sign key --password` fails with
        # "password should be bytes"): give it bytes.
        secret = password.encode() if password else None
        return sign_ec_key.Signer(method.key, secret)  # type: ignore[arg-type]
    except (ValueError, TypeError, OSError) as exc:
        # cryptography: "Could not deserialize key data", "Password was not given but private key is
        # encrypted"; model-signing: "Unsupported key for curve", the certificate not matching the key.
        where = method.key if not isinstance(exc, OSError) or exc.filename is None else exc.filename
        hint = f" (set {PASSWORD_ENV} for an encrypted key)" if "encrypted" in str(exc) else ""
        raise InputError(f"cannot sign with it: {exc}{hint}", path=where) from None


def public_key_pem(method: SigningMethod) -> bytes:
    """The PEM public key of ``method``'s private key (``signer`` has already refused a bad one)."""
    from cryptography.hazmat.primitives import serialization

    chosen = signer(method)
    key = chosen._private_key  # type: ignore[attr-defined]  # model-signing keeps the loaded key here
    return bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def _sigstore_signer(trust_config: Path | None) -> oms_signing.Signer:
    with required():
        from model_signing._signing import sign_sigstore
        from sigstore.errors import Error as SigstoreError
        from sigstore.oidc import detect_credential

    try:
        token = detect_credential()
    except SigstoreError as exc:
        raise InputError(f"keyless signing: the ambient OIDC credential could not be read: {exc}") from None
    if token is None:
        raise InputError(
            "keyless signing needs an ambient OIDC identity token (a CI job that may mint one: GitHub "
            "Actions with `permissions: id-token: write`, GitLab with SIGSTORE_ID_TOKEN); elsewhere sign "
            "with --key"
        )
    try:  # the trust root (TUF) and the OIDC issuer's configuration are fetched here
        return sign_sigstore.Signer(
            identity_token=token, use_ambient_credentials=False, trust_config=trust_config
        )
    except HubReleaseError:
        raise
    except Exception as exc:  # sigstore's errors, and requests' own (Issuer() does not wrap them)
        raise SigstoreUnavailable(f"Sigstore is unreachable: {type(exc).__name__}: {exc}") from None


def sign_statement(method: SigningMethod, payload: oms_signing.Payload) -> str:
    """The Sigstore bundle (JSON text) of ``payload`` signed with ``method``."""
    chosen = signer(method)
    try:
        signature = chosen.sign(payload)
    except Exception as exc:
        if not method.sigstore:
            raise
        raise SigstoreUnavailable(
            f"Sigstore signing failed (Fulcio, Rekor): {type(exc).__name__}: {exc}"
        ) from None
    bundle = signature.bundle  # type: ignore[attr-defined]  # both Signature classes carry one
    return str(bundle.to_json())
