"""Key material for signing tests: EC key pairs, a CA -> intermediate -> leaf chain, a local trust root.

Everything is generated with cryptography (what model-signing itself uses); nothing leaves the test's
folder. ``public_good_trust_config`` builds a Sigstore ``clienttrustconfig`` from the trust root and
signing config that sigstore-python ships inside its wheel, so a public-good keyless bundle verifies
offline, as ``model_signing verify sigstore --trust_config`` does.
"""

from __future__ import annotations

import datetime
import importlib.resources
import json
from pathlib import Path
from typing import NamedTuple

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VECTORS = Path(__file__).resolve().parents[1] / "signing" / "vectors"
KEYLESS_VECTOR = VECTORS / "v1.1.0-sigstore"
"""model-transparency's v1.1.0 keyless vector (see its README): who signed it, and with what."""
KEYLESS_IDENTITY = "stefanb@us.ibm.com"
KEYLESS_ISSUER = "https://sigstore.verify.ibm.com/oauth2"


class KeyPair(NamedTuple):
    private: Path
    public: Path


def ec_key_pair(folder: Path, name: str = "signing", curve: ec.EllipticCurve | None = None) -> KeyPair:
    """``NAME-key.pem`` (PKCS#8, unencrypted) and ``NAME-pub.pem`` (SubjectPublicKeyInfo) in ``folder``."""
    key = ec.generate_private_key(curve or ec.SECP256R1())
    folder.mkdir(parents=True, exist_ok=True)
    private, public = folder / f"{name}-key.pem", folder / f"{name}-pub.pem"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return KeyPair(private, public)


class CertificateChain(NamedTuple):
    key: Path
    """The leaf's private key."""
    leaf: Path
    intermediate: Path
    root: Path


def _certificate(
    subject: str,
    public: ec.EllipticCurvePublicKey,
    issuer: str,
    signer: ec.EllipticCurvePrivateKey,
    *,
    ca: bool,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=not ca,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=ca,
                crl_sign=ca,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    )
    if not ca:
        builder = builder.add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False
        )
    return builder.sign(signer, hashes.SHA256())


def certificate_chain(folder: Path) -> CertificateChain:
    """A self-signed root CA, an intermediate it signed, and a code-signing leaf the intermediate signed."""
    folder.mkdir(parents=True, exist_ok=True)
    root_key, int_key, leaf_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    root = _certificate(
        "hubrelease test root", root_key.public_key(), "hubrelease test root", root_key, ca=True
    )
    intermediate = _certificate(
        "hubrelease test CA", int_key.public_key(), "hubrelease test root", root_key, ca=True
    )
    leaf = _certificate("release signer", leaf_key.public_key(), "hubrelease test CA", int_key, ca=False)
    paths = CertificateChain(
        folder / "leaf-key.pem", folder / "leaf.pem", folder / "int-ca.pem", folder / "ca.pem"
    )
    paths.key.write_bytes(
        leaf_key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    for path, cert in ((paths.leaf, leaf), (paths.intermediate, intermediate), (paths.root, root)):
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return paths


def public_good_trust_config(target: Path) -> Path:
    """A ``clienttrustconfig`` of Sigstore's public-good instance from sigstore-python's embedded copy."""
    store = importlib.resources.files("sigstore._store") / "https%3A%2F%2Ftuf-repo-cdn.sigstore.dev"
    config = {
        "mediaType": "application/vnd.dev.sigstore.clienttrustconfig.v0.1+json",
        "trustedRoot": json.loads((store / "trusted_root.json").read_text(encoding="utf-8")),
        "signingConfig": json.loads((store / "signing_config.v0.2.json").read_text(encoding="utf-8")),
    }
    target.write_text(json.dumps(config), encoding="utf-8")
    return target


def resign(folder: Path, key: Path) -> None:
    """Replace ``folder``'s ``model.sig`` with a statement over its signed files as they are now,
    signed with ``key``: what an attacker who swapped files and key publishes."""
    import hashlib

    from hubrelease.release_files import SIGNATURE_NAME
    from hubrelease.signing.signers import SigningMethod, sign_statement
    from hubrelease.signing.statement import payload, read_unverified

    signature = folder / SIGNATURE_NAME
    signed = read_unverified(signature)
    digests = {path: hashlib.sha256((folder / path).read_bytes()).hexdigest() for path in signed.digests}
    signature.write_text(
        sign_statement(SigningMethod(key=key), payload(signed.name, digests)), encoding="utf-8"
    )
