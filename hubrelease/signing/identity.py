"""Who signs: a key's fingerprint, and a GitHub workflow as a sigstore identity policy.

A fingerprint is SHA-256 of the key's DER SubjectPublicKeyInfo, the bytes ``openssl pkey -pubin
-outform DER`` prints, so a reader can compare it with nothing but openssl and sha256sum. A
workflow policy is built from sigstore-python's own classes (``sigstore.verify.policy``) and
checked against the Fulcio certificate's extensions.
"""

from __future__ import annotations

import fnmatch
import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from hubrelease.errors import InputError

if TYPE_CHECKING:  # the manifest models (pydantic) load where a workflow is parsed or checked
    from cryptography.hazmat.primitives.asymmetric.types import PublicKeyTypes
    from cryptography.x509 import Certificate
    from sigstore.verify.policy import VerificationPolicy

    from hubrelease.manifest.models import GitHubWorkflow


def spki_fingerprint(der: bytes) -> str:
    """``sha256:HEX`` of a DER SubjectPublicKeyInfo."""
    return f"sha256:{hashlib.sha256(der).hexdigest()}"


def pem_fingerprint(path: Path) -> str:
    """The fingerprint of the public key in ``path``: a PEM public key, certificate or private key."""
    from cryptography.hazmat.primitives import serialization

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read it: {exc.strerror}", path=path) from None
    # The PEM label says which loader applies: trying the others first imports cryptography.x509 (~20 ms).
    first = (
        _certificate_key
        if b"CERTIFICATE-----" in data
        else _private_key
        if b"PRIVATE KEY-----" in data
        else _public_key
    )
    for load in (
        first,
        *(other for other in (_public_key, _certificate_key, _private_key) if other is not first),
    ):
        try:
            key = load(data)
        except (ValueError, TypeError):
            continue
        der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        return spki_fingerprint(der)
    raise InputError("not a PEM public key, certificate or unencrypted private key", path=path)


def _public_key(data: bytes) -> PublicKeyTypes:
    from cryptography.hazmat.primitives import serialization

    return serialization.load_pem_public_key(data)


def _certificate_key(data: bytes) -> PublicKeyTypes:
    from cryptography import x509

    return x509.load_pem_x509_certificate(data).public_key()


def _private_key(data: bytes) -> PublicKeyTypes:
    from cryptography.hazmat.primitives import serialization

    return serialization.load_pem_private_key(data, None).public_key()


def parse_workflow(text: str) -> GitHubWorkflow:
    """``OWNER/REPO/.github/workflows/FILE.yml@REF`` (``--github-workflow``) as a workflow identity."""
    from pydantic import ValidationError

    from hubrelease.manifest.models import GitHubWorkflow

    where, at, ref = text.partition("@")
    owner, _, rest = where.partition("/")
    repo, _, workflow = rest.partition("/")
    try:
        return GitHubWorkflow(
            repository=f"{owner}/{repo}", workflow=workflow, ref=ref if at else "refs/tags/*"
        )
    except ValidationError:
        raise InputError(
            f"--github-workflow {text!r}: say OWNER/REPO/.github/workflows/FILE.yml@REF "
            "(REF exact or a pattern: refs/tags/v*)"
        ) from None


def describe(workflow: GitHubWorkflow) -> str:
    """The workflow as the card and findings print it: its SAN with the ref pattern."""
    return f"{workflow.san_prefix}{workflow.ref}"


class _WorkflowAt:
    """The certificate's SAN is ``workflow`` run for a ref its pattern matches.

    sigstore's ``Identity`` and ``GitHubWorkflowRef`` match one exact value; a release workflow
    runs for every tag, so the ref part is matched as a shell pattern here.
    """

    def __init__(self, workflow: GitHubWorkflow) -> None:
        self._workflow = workflow

    def verify(self, cert: Certificate) -> None:
        from cryptography.x509 import SubjectAlternativeName, UniformResourceIdentifier
        from sigstore.errors import VerificationError

        prefix = self._workflow.san_prefix
        sans = cert.extensions.get_extension_for_class(SubjectAlternativeName).value
        uris = sans.get_values_for_type(UniformResourceIdentifier)
        if not any(
            uri.startswith(prefix) and fnmatch.fnmatchcase(uri[len(prefix) :], self._workflow.ref)
            for uri in uris
        ):
            raise VerificationError(
                f"Certificate's SAN {', '.join(uris) or '(none)'} is not {describe(self._workflow)}"
            )


def workflow_policy(workflow: GitHubWorkflow) -> VerificationPolicy:
    """sigstore's policy for a certificate GitHub Actions' ``workflow`` was issued: issuer, repository
    (the certificate's ``1.3.6.1.4.1.57264.1.5``), and the workflow file and ref in its SAN."""
    from sigstore.verify.policy import (
        AllOf,
        GitHubWorkflowRef,
        GitHubWorkflowRepository,
        Identity,
        OIDCIssuer,
    )

    from hubrelease.manifest.models import GITHUB_ISSUER

    if not any(ch in workflow.ref for ch in "*?["):
        return AllOf(
            [
                Identity(identity=describe(workflow), issuer=GITHUB_ISSUER),
                GitHubWorkflowRepository(workflow.repository),
                GitHubWorkflowRef(workflow.ref),
            ]
        )
    return AllOf(
        [OIDCIssuer(GITHUB_ISSUER), GitHubWorkflowRepository(workflow.repository), _WorkflowAt(workflow)]
    )
