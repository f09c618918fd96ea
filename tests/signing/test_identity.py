"""Who signs: key fingerprints as openssl prints them, and a GitHub workflow policy on a keyless bundle.

The keyless bundle is made offline with a local trust root (``github_keyless_signature``): a CA, a
CT log and a Rekor key of the test's own, whose certificate carries GitHub Actions' SAN and Fulcio
extensions. model-transparency's published keyless vector is signed by a person (an email SAN with
IBM's issuer), so it cannot say anything about workflows.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import NamedTuple

import pytest
from click.testing import CliRunner as ClickRunner
from google.protobuf import json_format
from model_signing._cli import main as model_signing_cli

from hubrelease.errors import InputError
from hubrelease.findings import Finding
from hubrelease.manifest.models import GitHubWorkflow
from hubrelease.signing.identity import parse_workflow, pem_fingerprint
from hubrelease.signing.release import signature_findings
from hubrelease.signing.statement import payload
from hubrelease.signing.verifiers import SignaturePolicy
from tests.factories.signing import (
    GITHUB_OIDC_ISSUER,
    KeylessRelease,
    certificate_chain,
    ec_key_pair,
    github_keyless_signature,
    public_good_trust_config,
)

REPOSITORY = "acme/tiny-drafter"
WORKFLOW = ".github/workflows/release.yml"
REF = "refs/tags/v1.0"
FILES = {"model.safetensors": b"weights" * 1000, "config.json": b"{}\n"}


class Keyless(NamedTuple):
    folder: Path
    release: KeylessRelease
    observed: dict[str, str | None]


@pytest.fixture(scope="module")
def keyless(tmp_path_factory: pytest.TempPathFactory) -> Keyless:
    folder = tmp_path_factory.mktemp("keyless")
    for name, data in FILES.items():
        (folder / name).write_bytes(data)
    digests = {name: hashlib.sha256(data).hexdigest() for name, data in FILES.items()}
    statement = json_format.MessageToJson(payload(REPOSITORY, digests).statement.pb).encode()
    trust = tmp_path_factory.mktemp("trust") / "trust.json"
    release = github_keyless_signature(
        folder, statement, trust, repository=REPOSITORY, workflow=WORKFLOW, ref=REF
    )
    return Keyless(folder, release, dict(digests))


def _findings(keyless: Keyless, workflow: GitHubWorkflow, trust: Path | None = None) -> list[Finding]:
    policy = SignaturePolicy(
        workflow=workflow, trust_config=trust or keyless.release.trust_config, anchor="--github-workflow"
    )
    return signature_findings(keyless.release.signature, policy, keyless.observed)


@pytest.mark.parametrize("ref", [REF, "refs/tags/v*", "refs/tags/*"])
def test_the_signing_workflow_is_accepted(keyless: Keyless, ref: str) -> None:
    workflow = GitHubWorkflow(repository=REPOSITORY, workflow=WORKFLOW, ref=ref)
    [finding] = _findings(keyless, workflow)
    assert finding.severity == "info" and finding.message == (
        f"signature valid, signer matches the pinned identity https://github.com/{REPOSITORY}/{WORKFLOW}@{ref} "
        "(from --github-workflow)"
    )


def test_the_real_model_signing_accepts_the_bundle_with_its_exact_identity(keyless: Keyless) -> None:
    args = [
        "verify", "sigstore", str(keyless.folder), "--signature", str(keyless.release.signature),
        "--trust_config", str(keyless.release.trust_config),
        "--identity", f"https://github.com/{REPOSITORY}/{WORKFLOW}@{REF}", "--identity_provider", GITHUB_OIDC_ISSUER,
    ]  # fmt: skip
    result = ClickRunner().invoke(model_signing_cli, args)
    assert (result.exit_code, result.output) == (0, "Verification succeeded\n")


@pytest.mark.parametrize(
    ("repository", "workflow", "ref", "reason"),
    [
        ("acme/other", WORKFLOW, REF, "SANs do not match"),
        ("acme/other", WORKFLOW, "refs/tags/v*", "GitHubWorkflowRepository does not match"),
        (REPOSITORY, ".github/workflows/other.yml", REF, "SANs do not match"),
        (REPOSITORY, ".github/workflows/other.yml", "refs/tags/*", "is not https://github.com/"),
        (REPOSITORY, WORKFLOW, "refs/heads/main", "SANs do not match"),
        (REPOSITORY, WORKFLOW, "refs/tags/v2*", "is not https://github.com/"),
    ],
)
def test_another_repository_workflow_or_ref_is_refused(
    keyless: Keyless, repository: str, workflow: str, ref: str, reason: str
) -> None:
    findings = _findings(keyless, GitHubWorkflow(repository=repository, workflow=workflow, ref=ref))
    [finding] = [f for f in findings if f.severity == "error"]
    assert finding.message.startswith("signature does not verify (sigstore): VerificationError: ")
    assert reason in finding.message, finding.message


def test_the_trust_root_is_checked_too(keyless: Keyless, tmp_path: Path) -> None:
    """The right workflow under Sigstore's public-good root: not the CA that issued this certificate."""
    public_good = public_good_trust_config(tmp_path / "public-good.json")
    findings = _findings(keyless, parse_workflow(f"{REPOSITORY}/{WORKFLOW}@{REF}"), public_good)
    assert [f.severity for f in findings] == ["error"], findings


def test_parse_workflow_defaults_to_any_tag_and_refuses_garbage() -> None:
    assert parse_workflow(f"{REPOSITORY}/{WORKFLOW}") == GitHubWorkflow(
        repository=REPOSITORY, workflow=WORKFLOW, ref="refs/tags/*"
    )
    with pytest.raises(InputError, match=r"say OWNER/REPO/\.github/workflows/FILE\.yml@REF"):
        parse_workflow("acme/tiny-drafter@refs/tags/v1")


def _openssl_fingerprint(*command: str) -> str:
    der = subprocess.run(command, capture_output=True, check=True).stdout
    return f"sha256:{hashlib.sha256(der).hexdigest()}"


def test_a_fingerprint_is_what_openssl_and_sha256sum_print(tmp_path: Path) -> None:
    """The card's comparison (openssl ... -outform DER | sha256sum) and hubrelease agree, for each PEM."""
    keys = ec_key_pair(tmp_path)
    expected = _openssl_fingerprint("openssl", "pkey", "-pubin", "-in", str(keys.public), "-outform", "DER")
    assert pem_fingerprint(keys.public) == pem_fingerprint(keys.private) == expected
    chain = certificate_chain(tmp_path / "chain")
    pubkey = subprocess.run(
        ["openssl", "x509", "-in", str(chain.root), "-noout", "-pubkey"], capture_output=True, check=True
    ).stdout
    root = tmp_path / "root-pub.pem"
    root.write_bytes(pubkey)
    assert pem_fingerprint(chain.root) == pem_fingerprint(root) != pem_fingerprint(chain.leaf)
