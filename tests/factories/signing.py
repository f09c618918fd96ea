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


def resign(folder: Path, keys: KeyPair, ignore_paths: list[str]) -> None:
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

    repo = Path(__file__).resolve().parents[2]
    for name in ("example", "example-target"):
        shutil.copytree(repo / "manifests" / name, work / name, ignore=shutil.ignore_patterns(STATE_DIR))
    keys, other = ec_key_pair(work / "keys"), ec_key_pair(work / "keys", "other")
    manifest = work / "example" / "hubrelease.yaml"
    pinned = (
        f"      unpinned: true\n      files:\n        - {{path: t.gguf, header_sha256: {target_header}}}\n"
    )
    manifest.write_text(manifest.read_text(encoding="utf-8").replace("      unpinned: true\n", pinned, 1))
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
