"""Who signed: model-signing's verifiers check a bundle's signature and hand back its statement.

The three policies mirror ``model_signing verify {key, certificate, sigstore}``: an EC public key;
a certificate chain ending in roots the verifier trusts (model-signing uses pyOpenSSL's store;
with no chain, certifi's roots); or a Sigstore keyless signature, whose Fulcio certificate must
name ``identity`` as issued by ``issuer`` (sigstore-python's ``policy.Identity``, exact match), with
the Rekor inclusion proof checked against the trust root: the public-good instance (fetched with
TUF, so online) or a ``clienttrustconfig`` JSON given with ``trust_config`` (offline).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from hubrelease.errors import HubReleaseError, InputError
from hubrelease.signing.extra import missing_extra
from hubrelease.signing.signers import SigstoreUnavailable
from hubrelease.signing.statement import SignedFiles, signed_files

try:
    from model_signing._signing import sign_certificate, sign_ec_key, sign_sigstore, sign_sigstore_pb
    from model_signing._signing import signing as oms_signing
except ModuleNotFoundError as _missing:
    raise missing_extra(_missing) from None


class SignaturePolicy(NamedTuple):
    """Whom to trust: exactly one of a public key, a certificate chain, or a Sigstore identity."""

    public_key: Path | None = None
    certificate_chain: tuple[Path, ...] = ()
    identity: str | None = None
    issuer: str | None = None
    trust_config: Path | None = None

    @property
    def method(self) -> str | None:
        """``key``, ``certificate`` or ``sigstore``; None when the policy names no signer yet."""
        if self.public_key is not None:
            return "key"
        if self.identity is not None:
            return "sigstore"
        return "certificate" if self.certificate_chain else None


class SignatureInvalid(HubReleaseError):
    """The bundle is not a valid signature under the policy (a finding, not a usage error)."""

    exit_code = 1


def check(policy: SignaturePolicy) -> None:
    """Refuse a policy that names no one, or two methods at once (exit 2)."""
    given = [policy.public_key is not None, bool(policy.certificate_chain), policy.identity is not None]
    if sum(given) > 1:
        raise InputError("give one of --public-key, --certificate-chain, --identity (with --issuer)")
    if (policy.identity is None) != (policy.issuer is None):
        raise InputError("a keyless signature is checked against both --identity and --issuer")
    if policy.trust_config is not None and policy.method not in (None, "sigstore"):
        raise InputError("--trust-config applies to a keyless signature (--identity, --issuer)")


def verify_bundle(path: Path, policy: SignaturePolicy) -> SignedFiles:
    """The statement of the bundle at ``path`` once its signature checks out under ``policy``.

    Raises ``SignatureInvalid`` naming model-signing's or sigstore's reason; unusable key material
    or trust configuration is an ``InputError``.
    """
    verifier, signature = _verifier(policy), _read(path, policy)
    try:
        manifest = verifier.verify(signature)
    except HubReleaseError:
        raise
    except Exception as exc:  # ValueError, cryptography's InvalidSignature, OpenSSL's and sigstore's errors
        raise SignatureInvalid(
            f"signature does not verify ({policy.method}): {_reason(exc)}", path=path
        ) from None
    return signed_files(manifest)


def _verifier(policy: SignaturePolicy) -> oms_signing.Verifier:
    if policy.identity is not None:
        return _sigstore_verifier(policy)
    try:
        if policy.public_key is not None:
            return sign_ec_key.Verifier(policy.public_key)
        return sign_certificate.Verifier(list(policy.certificate_chain))
    except (ValueError, TypeError, OSError) as exc:  # not PEM, another curve, unreadable
        where = policy.public_key or (policy.certificate_chain[0] if policy.certificate_chain else None)
        raise InputError(f"cannot verify with it: {_reason(exc)}", path=where) from None


def _sigstore_verifier(policy: SignaturePolicy) -> oms_signing.Verifier:
    assert policy.identity is not None and policy.issuer is not None
    try:
        return sign_sigstore.Verifier(
            identity=policy.identity, oidc_issuer=policy.issuer, trust_config=policy.trust_config
        )
    except Exception as exc:
        if policy.trust_config is not None:  # unreadable, or not a clienttrustconfig
            raise InputError(
                f"not a Sigstore client trust config: {_reason(exc)}", path=policy.trust_config
            ) from None
        raise SigstoreUnavailable(  # the TUF refresh of the public-good trust root
            f"Sigstore's trust root could not be fetched ({_reason(exc)}); offline, pass --trust-config"
        ) from None


def _read(path: Path, policy: SignaturePolicy) -> oms_signing.Signature:
    """The bundle as the matching verifier wants it (sigstore-python's model, or the protobuf one)."""
    reader = sign_sigstore.Signature if policy.identity is not None else sign_sigstore_pb.Signature
    try:
        return reader.read(path)
    except OSError as exc:
        raise InputError(f"cannot read it: {exc.strerror or exc}", path=path) from None
    except UnicodeDecodeError:
        raise SignatureInvalid("not a Sigstore bundle: not UTF-8 text", path=path) from None
    except Exception as exc:
        raise SignatureInvalid(f"not a Sigstore bundle: {_reason(exc)}", path=path) from None


def _reason(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def check_declared(bundle: str, policy: SignaturePolicy, manifest_path: Path) -> None:
    """Refuse a fresh signature the manifest's ``signing:`` section would not accept (before it is written).

    A key or certificate signature is verified as a reader will verify it; a keyless one cannot be
    offline (Rekor's proof is checked against the trust root), so its certificate is held to the
    declared identity and issuer (sigstore-python's ``policy.Identity``, the check verify makes).
    """
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "model.sig"
        path.write_text(bundle, encoding="utf-8")
        try:
            if policy.method == "sigstore":
                from sigstore.models import Bundle
                from sigstore.verify.policy import Identity

                assert policy.identity is not None
                Identity(identity=policy.identity, issuer=policy.issuer).verify(
                    Bundle.from_json(bundle).signing_certificate
                )
            else:
                verify_bundle(path, policy)
        except SignatureInvalid as exc:
            raise InputError(
                f"signing: the manifest's signer does not accept this signature: {exc.message}",
                path=manifest_path,
            ) from None
        except Exception as exc:
            raise InputError(
                f"signing: the manifest's signer does not accept this signature: {_reason(exc)}",
                path=manifest_path,
            ) from None
