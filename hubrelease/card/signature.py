"""The card's "Signature" section: how a reader checks ``model.sig`` without hubrelease.

Built from the manifest's ``signing:`` section as command lines for ``hf download --local-dir``
and ``model_signing verify`` (model-signing 1.1.1's own flags: ``_cli.py``, ``--signature``,
``--public_key``, ``--certificate_chain``, ``--identity``, ``--identity_provider``).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from hubrelease.manifest.models import Manifest
from hubrelease.release_files import SIGNATURE_NAME

_METHOD = {
    "key": "an EC key",
    "certificate": "a certificate chain",
    "sigstore": "Sigstore keyless signing (a Fulcio certificate for the signer's OIDC identity, logged in Rekor)",
}


@dataclass(frozen=True)
class SignatureCheck:
    """What the card prints about the signature."""

    method: str
    """How it was signed, in words."""
    download: str
    """``hf download`` of the release into a local folder."""
    model_signing: str
    """``model_signing verify ...`` of that folder."""
    hubrelease: str
    """The same check with hubrelease (who signed it, and that it signs exactly the published files)."""
    key_published: bool
    """``key``: the public key is one of the release's files (readers should still get it from the publisher)."""


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

    def where(
        path: str,
    ) -> str:  # in the download if the release publishes it, else as the publisher names it
        return f"{folder}/{published[path]}" if path in published else path

    key_published = signing.public_key is not None and signing.public_key in published
    if signing.public_key is not None:
        verify += ["--public_key", where(signing.public_key)]
    for certificate in signing.certificate_chain:
        verify += ["--certificate_chain", where(certificate)]
    if signing.identity is not None and signing.issuer is not None:
        verify += ["--identity", signing.identity, "--identity_provider", signing.issuer]
    return SignatureCheck(
        _METHOD[signing.method],
        shlex.join(download),
        shlex.join(verify),
        shlex.join(["hubrelease", "verify", f"{folder}/{manifest_name}", "--signature"]),
        key_published,
    )
