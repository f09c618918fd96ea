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
from typing import Any, NamedTuple

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


def resign(folder: Path, key: Path, certificate: Path | None = None, chain: tuple[Path, ...] = ()) -> None:
    """Replace ``folder``'s ``model.sig`` with a statement over its signed files as they are now,
    signed with ``key`` (and ``certificate``, ``chain``): what an attacker who swapped files publishes."""
    import hashlib

    from hubrelease.release_files import SIGNATURE_NAME
    from hubrelease.signing.signers import SigningMethod, sign_statement
    from hubrelease.signing.statement import payload, read_unverified

    signature = folder / SIGNATURE_NAME
    signed = read_unverified(signature)
    digests = {path: hashlib.sha256((folder / path).read_bytes()).hexdigest() for path in signed.digests}
    method = SigningMethod(key=key, certificate=certificate, chain=chain)
    signature.write_text(sign_statement(method, payload(signed.name, digests)), encoding="utf-8")


GITHUB_OIDC_ISSUER = "https://token.actions.githubusercontent.com"
_KEYLESS_TIME = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)
# Fulcio's certificate extensions (github.com/sigstore/fulcio docs/oid-info.md): the v1 ones hold raw bytes.
_FULCIO_OIDS = {
    "issuer": "1.3.6.1.4.1.57264.1.1",
    "repository": "1.3.6.1.4.1.57264.1.5",
    "ref": "1.3.6.1.4.1.57264.1.6",
}


class KeylessRelease(NamedTuple):
    signature: Path
    trust_config: Path
    """A ``clienttrustconfig`` whose trusted root is this factory's own CA, CT log and Rekor key."""


def _b64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode()


def _spki(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _der_octet_string(data: bytes) -> bytes:
    length = len(data)
    head = bytes([length]) if length < 0x80 else bytes([0x80 | 2]) + length.to_bytes(2, "big")
    return b"\x04" + head + data


def github_keyless_signature(
    folder: Path, statement: bytes, trust: Path, *, repository: str, workflow: str, ref: str
) -> KeylessRelease:
    """``folder/model.sig`` and the client trust config ``trust``: a Sigstore bundle of ``statement`` (in-toto JSON) signed as the GitHub
    Actions ``workflow`` of ``repository`` at ``ref``, with a local trust root that verifies it offline.

    Everything public-good Sigstore does is done here with throwaway keys, and nothing is mocked:
    a CA issues the signing certificate (GitHub's SAN and Fulcio extensions, an embedded SCT from a
    CT log key), the DSSE envelope is signed with the certificate's key, and a Rekor log key signs
    the dsse/0.0.1 entry's checkpoint and inclusion promise. The construction follows
    sigstore-python's offline bundle test (test/unit/verify/test_verifier_rsa_bundle.py at f340c51:
    ``rsa_bundle_materials`` and ``_bundle``), with an EC key and GitHub's extensions.
    """
    import hashlib
    import struct

    import rfc8785
    from cryptography.x509.oid import ExtensionOID
    from sigstore import dsse

    ca_key, ct_key, log_key, signing_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(4))
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hubrelease test Fulcio")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(_KEYLESS_TIME - datetime.timedelta(days=1))
        .not_valid_after(_KEYLESS_TIME + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    values = {"issuer": GITHUB_OIDC_ISSUER, "repository": repository, "ref": ref}
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([]))
        .issuer_name(ca_name)
        .public_key(signing_key.public_key())
        .serial_number(2)
        .not_valid_before(_KEYLESS_TIME - datetime.timedelta(minutes=5))
        .not_valid_after(_KEYLESS_TIME + datetime.timedelta(minutes=5))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]), critical=False)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.UniformResourceIdentifier(f"https://github.com/{repository}/{workflow}@{ref}")]
            ),
            critical=True,
        )
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
    )
    for name, oid in _FULCIO_OIDS.items():
        builder = builder.add_extension(
            x509.UnrecognizedExtension(x509.ObjectIdentifier(oid), values[name].encode()), critical=False
        )
    # RFC 6962 section 3.2: the CT log signs the precertificate's TBS without the SCT list.
    tbs = builder.sign(ca_key, hashes.SHA256()).tbs_certificate_bytes
    millis = int(_KEYLESS_TIME.timestamp() * 1000)
    signed_sct = (
        struct.pack("!BBQH", 0, 0, millis, 1)
        + hashlib.sha256(_spki(ca_key)).digest()
        + len(tbs).to_bytes(3, "big")
        + tbs
        + b"\x00\x00"
    )
    sct_signature = ct_key.sign(signed_sct, ec.ECDSA(hashes.SHA256()))
    sct = (
        b"\x00"
        + hashlib.sha256(_spki(ct_key)).digest()
        + struct.pack("!QH", millis, 0)
        + struct.pack("!BBH", 4, 3, len(sct_signature))
        + sct_signature
    )
    sct_list = struct.pack("!HH", len(sct) + 2, len(sct)) + sct
    certificate = builder.add_extension(
        x509.UnrecognizedExtension(
            ExtensionOID.PRECERT_SIGNED_CERTIFICATE_TIMESTAMPS, _der_octet_string(sct_list)
        ),
        critical=False,
    ).sign(ca_key, hashes.SHA256())
    envelope = json.loads(dsse._sign(signing_key, dsse.Statement(statement)).to_json())
    pem = certificate.public_bytes(serialization.Encoding.PEM)
    body: dict[str, Any] = {
        "kind": "dsse",
        "apiVersion": "0.0.1",
        "spec": {
            "payloadHash": {"algorithm": "sha256", "value": hashlib.sha256(statement).hexdigest()},
            "envelopeHash": {
                "algorithm": "sha256",
                "value": hashlib.sha256(json.dumps(envelope).encode()).hexdigest(),
            },
            "signatures": [{"signature": envelope["signatures"][0]["sig"], "verifier": _b64(pem)}],
        },
    }
    body_bytes = rfc8785.dumps(body)
    log_id = hashlib.sha256(_spki(log_key)).digest()
    leaf = hashlib.sha256(b"\x00" + body_bytes).digest()
    note = f"log.example.com\n1\n{_b64(leaf)}\n"
    checkpoint = (
        note
        + f"\n\u2014 log.example.com {_b64(log_id[:4] + log_key.sign(note.encode(), ec.ECDSA(hashes.SHA256())))}\n"
    )
    seconds = int(_KEYLESS_TIME.timestamp())
    promise = rfc8785.dumps(
        {"body": _b64(body_bytes), "integratedTime": seconds, "logID": log_id.hex(), "logIndex": 0}
    )
    bundle = {
        "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
        "verificationMaterial": {
            "certificate": {"rawBytes": _b64(certificate.public_bytes(serialization.Encoding.DER))},
            "tlogEntries": [
                {
                    "logIndex": "0",
                    "logId": {"keyId": _b64(log_id)},
                    "kindVersion": {"kind": "dsse", "version": "0.0.1"},
                    "integratedTime": str(seconds),
                    "canonicalizedBody": _b64(body_bytes),
                    "inclusionPromise": {
                        "signedEntryTimestamp": _b64(log_key.sign(promise, ec.ECDSA(hashes.SHA256())))
                    },
                    "inclusionProof": {
                        "logIndex": "0",
                        "rootHash": _b64(leaf),
                        "treeSize": "1",
                        "hashes": [],
                        "checkpoint": {"envelope": checkpoint},
                    },
                }
            ],
        },
        "dsseEnvelope": envelope,
    }
    signature = folder / "model.sig"
    signature.write_text(json.dumps(bundle), encoding="utf-8")

    def log(key: ec.EllipticCurvePrivateKey, url: str) -> dict[str, object]:
        return {
            "baseUrl": url,
            "hashAlgorithm": "SHA2_256",
            "logId": {"keyId": _b64(hashlib.sha256(_spki(key)).digest())},
            "publicKey": {
                "rawBytes": _b64(_spki(key)),
                "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                "validFor": {"start": "2024-01-01T00:00:00Z"},
            },
        }

    root = {
        "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
        "tlogs": [log(log_key, "https://log.example.com")],
        "ctlogs": [log(ct_key, "https://ct.example.com")],
        "certificateAuthorities": [
            {
                "subject": {"commonName": "hubrelease test Fulcio", "organization": "hubrelease"},
                "uri": "https://ca.example.com",
                "certChain": {
                    "certificates": [{"rawBytes": _b64(ca.public_bytes(serialization.Encoding.DER))}]
                },
                "validFor": {"start": "2024-01-01T00:00:00Z"},
            }
        ],
    }
    public_good_trust_config(trust)  # its signing config; the trusted root is replaced
    config = json.loads(trust.read_text(encoding="utf-8"))
    config["trustedRoot"] = root
    trust.write_text(json.dumps(config), encoding="utf-8")
    return KeylessRelease(signature, trust)


def resign_ignoring(folder: Path, keys: KeyPair, ignore_paths: list[str]) -> None:
    """Replace ``folder/model.sig`` with one signing the same files with ``keys`` but recording
    ``ignore_paths`` in its statement (a statement `hubrelease sign` never writes, as a hostile
    signer or another tool could): model-signing's own classes build it."""
    from model_signing import manifest as oms_manifest
    from model_signing._hashing.hashing import Digest
    from model_signing._signing import signing as oms_signing

    from hubrelease.signing.signers import SigningMethod, sign_statement
    from hubrelease.signing.statement import HASH_TYPE, read_unverified

    signed = read_unverified(folder / "model.sig")
    serialization = oms_manifest.SerializationType.from_args(
        {"method": "files", "hash_type": HASH_TYPE, "allow_symlinks": False, "ignore_paths": ignore_paths}
    )
    items = [
        serialization.new_item(path, Digest(HASH_TYPE, bytes.fromhex(sha)))
        for path, sha in signed.digests.items()
    ]
    payload = oms_signing.Payload(oms_manifest.Manifest(signed.name, items, serialization))
    bundle = sign_statement(SigningMethod(key=keys.private), payload)
    (folder / "model.sig").write_text(bundle, encoding="utf-8")


_LETTERS = b"bcdefghijklmnopqrstuvwxy"


def flip_one_byte(path: Path) -> bytes:
    """Change one byte of ``path`` (returning its original bytes): the middle byte of a binary file;
    in a text file the letter nearest the middle becomes the next letter, so it still parses (in the
    manifest, a letter of its first comment)."""
    data = path.read_bytes()
    at = len(data) // 2
    if path.name == "hubrelease.yaml":
        at = data.index(b"tiny")
    elif path.suffix in (".md", ".json", ".jsonl", ".yaml"):
        at = min((i for i, byte in enumerate(data) if byte in _LETTERS), key=lambda i: abs(i - at))
    changed = data[at] + 1 if path.suffix in (".md", ".json", ".jsonl", ".yaml") else data[at] ^ 0x01
    path.write_bytes(data[:at] + bytes([changed]) + data[at + 1 :])
    return data


class SignedDownload(NamedTuple):
    folder: Path
    """The example's signed files and ``model.sig``, as ``hf download`` leaves them (its cache aside)."""
    keys: KeyPair
    other: KeyPair
    """A key that did not sign it."""


def signed_download(work: Path, target_header: str) -> SignedDownload:
    """The example release, its target pinned by ``target_header`` (so lint reads remembered target
    facts by that pin), signed by `hubrelease sign` with a fresh key, copied as a download would be."""
    import shutil

    from hubrelease.fsutil import STATE_DIR
    from hubrelease.signing.statement import read_unverified
    from tests.factories.cli import run_cli
    from tests.factories.releases import pin_target_header

    repo = Path(__file__).resolve().parents[2]
    for name in ("example", "example-target"):
        shutil.copytree(repo / "manifests" / name, work / name, ignore=shutil.ignore_patterns(STATE_DIR))
    keys, other = ec_key_pair(work / "keys"), ec_key_pair(work / "keys", "other")
    manifest = work / "example" / "hubrelease.yaml"
    pin_target_header(manifest, target_header)
    assert run_cli("render-card", manifest, "--force")[0] == 0
    code, _, err = run_cli("sign", manifest, "--key", keys.private)
    assert code == 0, err
    download = work / "download"
    for name in [*read_unverified(work / "example" / "model.sig").digests, "model.sig"]:
        (download / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(work / "example" / name, download / name)
    return SignedDownload(download, keys, other)


def sign_raw_statement(folder: Path, keys: KeyPair, payload: bytes) -> None:
    """Re-sign ``folder/model.sig`` over ``payload`` as its DSSE payload, whatever the bytes hold (the
    envelope and signature as model-signing's key signer makes them, ``sign_ec_key.py``), so a
    reader meets a statement only a hostile signer writes, with a signature that checks out."""
    import base64

    from cryptography.hazmat.primitives.serialization import load_pem_private_key
    from model_signing._signing.sign_sigstore_pb import pae

    bundle = json.loads((folder / "model.sig").read_text(encoding="utf-8"))
    key = load_pem_private_key(keys.private.read_bytes(), password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    signature = key.sign(pae(payload), ec.ECDSA(hashes.SHA256()))
    bundle["dsseEnvelope"]["payload"] = base64.b64encode(payload).decode()
    bundle["dsseEnvelope"]["signatures"] = [{"sig": base64.b64encode(signature).decode(), "keyid": ""}]
    (folder / "model.sig").write_text(json.dumps(bundle), encoding="utf-8")
