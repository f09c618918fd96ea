"""Who signed: model-signing's verifiers check a bundle's signature and hand back its statement.

The three policies mirror ``model_signing verify {key, certificate, sigstore}``: an EC public key;
a certificate chain ending in roots the verifier trusts (model-signing uses pyOpenSSL's store;
with no chain, certifi's roots); or a Sigstore keyless signature, whose Fulcio certificate must
name ``identity`` as issued by ``issuer`` (sigstore-python's ``policy.Identity``, exact match), with
the Rekor inclusion proof checked against the trust root: the public-good instance (fetched with
TUF, so online) or a ``clienttrustconfig`` JSON given with ``trust_config`` (offline).

Who signed is then held to the pinned identity (``SignaturePolicy.fingerprint`` or ``workflow``):
a key's fingerprint, the fingerprint of the certificate chain's root (only certificates with it are
trusted), or a GitHub workflow (``hubrelease.signing.identity``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from hubrelease.errors import HubReleaseError, InputError
from hubrelease.signing.extra import required
from hubrelease.signing.identity import describe, pem_fingerprint, workflow_policy
from hubrelease.signing.signers import SigstoreUnavailable
from hubrelease.signing.statement import SignedFiles, signed_files

if TYPE_CHECKING:
    from model_signing._signing import signing as oms_signing
    from sigstore.verify.policy import VerificationPolicy

    from hubrelease.manifest.models import GitHubWorkflow


class SignaturePolicy(NamedTuple):
    """Whom to trust: exactly one of a public key, a certificate chain, or a Sigstore identity."""

    public_key: Path | None = None
    certificate_chain: tuple[Path, ...] = ()
    identity: str | None = None
    issuer: str | None = None
    trust_config: Path | None = None
    fingerprint: str | None = None
    """The pinned key (``key``) or root (``certificate``) fingerprint, ``sha256:HEX``."""
    workflow: GitHubWorkflow | None = None
    """A keyless signer pinned as a GitHub workflow (instead of ``identity`` and ``issuer``)."""
    anchor: str | None = None
    """Where the pinned identity comes from (an option, a manifest at a commit); None: only from
    the folder being checked, which cannot vouch for itself."""
    allow_unpinned: bool = False
    """A signer nothing outside the folder pins is a warning, not an error."""

    @property
    def method(self) -> str | None:
        """``key``, ``certificate`` or ``sigstore``; None when the policy names no signer yet."""
        if self.public_key is not None:
            return "key"
        if self.identity is not None or self.workflow is not None:
            return "sigstore"
        return "certificate" if self.certificate_chain else None

    @property
    def pinned(self) -> str | None:
        """The signer as findings name it, when one is pinned."""
        if self.workflow is not None:
            return describe(self.workflow)
        if self.identity is not None:
            return f"{self.identity} (issuer {self.issuer})"
        if self.fingerprint is not None:
            return self.fingerprint
        return None

    @property
    def trusted(self) -> str | None:
        """The signer a valid signature was checked against: the pinned one, else the key given by
        its file (named by its fingerprint)."""
        if self.pinned is not None or self.public_key is None:
            return self.pinned
        try:
            return pem_fingerprint(self.public_key)
        except InputError:
            return str(self.public_key)


class SignatureInvalid(HubReleaseError):
    """The bundle is not a valid signature under the policy (a finding, not a usage error)."""

    exit_code = 1


def check(policy: SignaturePolicy) -> None:
    """Refuse a policy that names no one, or two methods at once (exit 2)."""
    given = [
        policy.public_key is not None,
        bool(policy.certificate_chain),
        policy.identity is not None or policy.workflow is not None,
    ]
    if sum(given) > 1 or (policy.identity is not None and policy.workflow is not None):
        raise InputError(
            "give one of --public-key, --certificate-chain, --identity (with --issuer), --github-workflow"
        )
    if (policy.identity is None) != (policy.issuer is None):
        raise InputError("a keyless signature is checked against both --identity and --issuer")
    if policy.trust_config is not None and policy.method not in (None, "sigstore"):
        raise InputError("--trust-config applies to a keyless signature (--identity, --issuer)")


def verify_bundle(path: Path, policy: SignaturePolicy) -> SignedFiles:
    """The statement of the bundle at ``path`` once its signature checks out under ``policy``.

    Raises ``SignatureInvalid`` naming model-signing's or sigstore's reason, or the pinned identity
    and the one found; unusable key material or trust configuration is an ``InputError``.
    """
    policy = _pinned_roots(policy)
    if policy.public_key is not None:  # a key signature: one already verified here is recalled
        from hubrelease.signing.verified import verified

        try:
            fingerprint = pem_fingerprint(policy.public_key)
        except InputError:  # not a key: model-signing's verifier says why
            return _verify(path, policy)
        return verified(path, fingerprint, lambda: _verify(path, policy))
    return _verify(path, policy)


def _verify(path: Path, policy: SignaturePolicy) -> SignedFiles:
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


def _pinned_roots(policy: SignaturePolicy) -> SignaturePolicy:
    """``policy`` with only what its pinned fingerprint allows: the key must be it, and only the
    chain's certificates with it are trusted (model-signing trusts every one it is given)."""
    if policy.fingerprint is None or policy.method not in ("key", "certificate"):
        return policy
    given = [policy.public_key] if policy.public_key is not None else list(policy.certificate_chain)
    found = {path: pem_fingerprint(path) for path in given}
    trusted = tuple(path for path, fingerprint in found.items() if fingerprint == policy.fingerprint)
    if not trusted:
        seen = ", ".join(f"{fingerprint} ({path.name})" for path, fingerprint in found.items())
        raise SignatureInvalid(
            f"signer does not match the pinned identity: expected {policy.fingerprint}, found {seen}"
        )
    return policy if policy.public_key is not None else policy._replace(certificate_chain=trusted)


def _verifier(policy: SignaturePolicy) -> oms_signing.Verifier:
    if policy.method == "sigstore":
        return _sigstore_verifier(policy)
    with required():
        from model_signing._signing import sign_certificate, sign_ec_key
    try:
        if policy.public_key is not None:
            return sign_ec_key.Verifier(policy.public_key)
        return sign_certificate.Verifier(list(policy.certificate_chain))
    except (ValueError, TypeError, OSError) as exc:  # not PEM, another curve, unreadable
        where = policy.public_key or (policy.certificate_chain[0] if policy.certificate_chain else None)
        raise InputError(f"cannot verify with it: {_reason(exc)}", path=where) from None


def identity_policy(policy: SignaturePolicy) -> VerificationPolicy:
    """sigstore's policy for the keyless signer ``policy`` pins."""
    with required():
        from sigstore.verify.policy import Identity

    if policy.workflow is not None:
        return workflow_policy(policy.workflow)
    assert policy.identity is not None and policy.issuer is not None
    assert policy.identity is not None and policy.issuer is not None
    return Identity(identity=policy.identity, issuer=policy.issuer)


def _sigstore_verifier(policy: SignaturePolicy) -> oms_signing.Verifier:
    pinned = identity_policy(policy)
    with required():
        from model_signing._signing import sign_sigstore
    try:  # the identity is replaced below: model-signing's Verifier takes an exact SAN and issuer only
        verifier = sign_sigstore.Verifier(identity="", oidc_issuer="", trust_config=policy.trust_config)
    except Exception as exc:
        if policy.trust_config is not None:  # unreadable, or not a clienttrustconfig
            raise InputError(
                f"not a Sigstore client trust config: {_reason(exc)}", path=policy.trust_config
            ) from None
        raise SigstoreUnavailable(  # the TUF refresh of the public-good trust root
            f"Sigstore's trust root could not be fetched ({_reason(exc)}); offline, pass --trust-config"
        ) from None
    # model-signing 1.1.1 _signing/sign_sigstore.py: Verifier.__init__ keeps the policy it checks in
    # self._policy (lines 221-223), which _verify_signed_content hands to sigstore's verify_dsse (line 232).
    verifier._policy = pinned  # type: ignore[assignment]
    return verifier


def _read(path: Path, policy: SignaturePolicy) -> oms_signing.Signature:
    """The bundle as the matching verifier wants it (sigstore-python's model, or the protobuf one)."""
    with required():
        from model_signing._signing import sign_sigstore, sign_sigstore_pb
    reader = sign_sigstore.Signature if policy.method == "sigstore" else sign_sigstore_pb.Signature
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


def signer_problem(bundle: Path, policy: SignaturePolicy) -> str | None:
    """Why the signature at ``bundle`` is not the signer ``policy`` names, or None.

    A key or certificate signature is verified as a reader will verify it; a keyless one cannot be
    offline (Rekor's proof is checked against the trust root), so its certificate is held to the
    identity policy (sigstore-python's, the check verify makes).
    """
    try:
        if policy.method == "sigstore":
            with required():
                from sigstore.models import Bundle

            identity_policy(policy).verify(Bundle.from_json(bundle.read_bytes()).signing_certificate)
        else:
            verify_bundle(bundle, policy)
    except SignatureInvalid as exc:
        return exc.message
    except HubReleaseError:
        raise
    except Exception as exc:  # sigstore's VerificationError, a bundle it cannot parse
        return _reason(exc)
    return None


def check_declared(bundle: str, policy: SignaturePolicy, manifest_path: Path) -> None:
    """Refuse a fresh signature the manifest's ``signing:`` section would not accept (before it is written)."""
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "model.sig"
        path.write_text(bundle, encoding="utf-8")
        problem = signer_problem(path, policy)
    if problem is not None:
        raise InputError(
            f"signing: the manifest's signer does not accept this signature: {problem}", path=manifest_path
        )
