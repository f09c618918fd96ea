"""The card's "Signature" section: how a reader checks ``model.sig`` without hubrelease.

Built from the manifest's ``signing:`` section as command lines for ``hf download --local-dir``
and ``model_signing verify`` (model-signing 1.1.1's own flags: ``_cli.py``, ``--signature``,
``--public_key``, ``--certificate_chain``, ``--identity``, ``--identity_provider``). The key or
root a command uses comes from the download, which an attacker who replaces the files also
replaces: so the pinned fingerprint is printed here, in the card at the commit a reader trusts,
and compared (``openssl ... | sha256sum``) before the key is used.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from hubrelease.manifest.models import GITHUB_ISSUER, GitHubWorkflow, Manifest
from hubrelease.release_files import SIGNATURE_NAME

_METHOD = {
    "key": "an EC key",
    "certificate": "a certificate chain",
    "sigstore": "Sigstore keyless signing (a Fulcio certificate for the signer's OIDC identity, logged in Rekor)",
}
INSTALL = "pip install model-signing pyOpenSSL huggingface_hub"
"""model-signing 1.1.1 does not declare pyOpenSSL, yet ``import model_signing`` reaches
``from OpenSSL import crypto`` (model_signing/_signing/sign_certificate.py line 29): in a fresh venv
with only model-signing, every ``model_signing`` command fails with ModuleNotFoundError: OpenSSL."""


@dataclass(frozen=True)
class SignatureCheck:
    """What the card prints about the signature."""

    method: str
    """How it was signed, in words."""
    signer: str | None
    """The pinned signer in words (a fingerprint, a workflow), None when the manifest pins none."""
    commands: tuple[str, ...]
    """Shell lines a reader runs as printed: install, ``hf download``, compare and verify."""
    download: str
    """``hf download`` of the release into a local folder."""
    model_signing: str | None
    """``model_signing verify ...`` of that folder, after the fingerprint comparison when one is pinned
    (None: a workflow ref pattern, which model_signing's exact ``--identity`` cannot express)."""
    hubrelease: str
    """The same check with hubrelease (who signed it, and that it signs exactly the published files)."""
    key_published: bool
    """``key``: the public key is one of the release's files (compared with the pinned fingerprint)."""


def _fingerprint_check(pem: str, certificate: bool) -> list[str]:
    """A pipeline printing the SHA-256 of the DER SubjectPublicKeyInfo in ``pem`` (a key or certificate)."""
    if certificate:
        return [
            "openssl",
            "x509",
            "-in",
            pem,
            "-noout",
            "-pubkey",
            "|",
            "openssl",
            "pkey",
            "-pubin",
            "-outform",
            "DER",
        ]
    return ["openssl", "pkey", "-pubin", "-in", pem, "-outform", "DER"]


def signature_check(manifest: Manifest, manifest_name: str) -> SignatureCheck | None:
    """The check for a release with a ``signing:`` section, else None."""
    signing = manifest.signing
    if signing is None:
        return None
    release = manifest.release
    folder = release.repo_id.split("/")[-1]
    repo_type = [] if release.repo_type == "model" else ["--repo-type", release.repo_type]
    download = [
        "hf",
        "download",
        release.repo_id,
        *repo_type,
        "--revision",
        release.revision,
        "--local-dir",
        folder,
    ]
    verify = ["model_signing", "verify", signing.method, folder, "--signature", f"{folder}/{SIGNATURE_NAME}"]
    published = {a.local_path: a.path for a in manifest.artifacts}
    identity = signing.identity
    hubrelease = ["hubrelease", "verify", f"{folder}/{manifest_name}", "--signature"]
    # The key or root the command trusts: the copy in the download only once compared with the pinned
    # fingerprint; unpinned, the one the publisher gives the reader (its repo path, outside the download).
    local = signing.public_key or (signing.certificate_chain[-1] if signing.certificate_chain else None)
    trusted: str | None = None
    if local is not None:  # the root only: the bundle carries the rest of a certificate chain
        name = published.get(local, local)
        trusted = f"{folder}/{name}" if identity is not None and local in published else name
        verify += ["--public_key" if signing.public_key is not None else "--certificate_chain", trusted]
    if isinstance(identity, GitHubWorkflow):
        signer = f"the GitHub Actions workflow `{identity.workflow}` of `{identity.repository}`, run for `{identity.ref}`"
        hubrelease += ["--github-workflow", f"{identity.repository}/{identity.workflow}@{identity.ref}"]
        exact = not any(ch in identity.ref for ch in "*?[")
        verify += ["--identity", f"{identity.san_prefix}{identity.ref}", "--identity_provider", GITHUB_ISSUER]
        lines = [shlex.join(verify)] if exact else []
    elif signing.method == "sigstore":
        assert identity is not None and signing.issuer is not None
        signer = f"`{identity}`, issued by `{signing.issuer}`"
        hubrelease += ["--identity", identity, "--issuer", signing.issuer]
        lines = [shlex.join([*verify, "--identity", identity, "--identity_provider", signing.issuer])]
    elif identity is not None:
        assert trusted is not None
        what = "key" if signing.method == "key" else "root certificate's key"
        signer = f"the {what} with SHA-256 fingerprint `{identity}`"
        hubrelease += ["--identity", identity]
        digest = identity.removeprefix("sha256:")
        compare = [*_fingerprint_check(trusted, signing.method == "certificate"), "|", "sha256sum", "|"]
        compare += ["grep", "-q", f"^{digest} "]
        lines = [" ".join(shlex.quote(w) if w != "|" else w for w in compare) + " && " + shlex.join(verify)]
    else:
        assert trusted is not None
        signer = None
        hubrelease += ["--public-key" if signing.public_key is not None else "--certificate-chain", trusted]
        lines = [shlex.join(verify)]
    return SignatureCheck(
        _METHOD[signing.method],
        signer,
        (INSTALL, shlex.join(download), *lines),
        shlex.join(download),
        lines[0] if lines else None,
        shlex.join(hubrelease),
        signing.public_key is not None and signing.public_key in published,
    )
