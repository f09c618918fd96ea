"""Keyless (Sigstore) signatures, verified offline: model-transparency's own v1.1.0 vector.

The bundle was signed through the public-good Fulcio and Rekor; its trust root here is the copy
sigstore-python embeds (``public_good_trust_config``), so no TUF refresh and no network. hubrelease's
verdicts are checked against the real ``model_signing verify sigstore --trust_config`` on the same folder.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner as ClickRunner
from google.protobuf import json_format
from model_signing._cli import main as model_signing_cli

from hubrelease.findings import Finding
from hubrelease.manifest import load_manifest
from hubrelease.signing.release import publish_set, published_digests, signature_findings
from hubrelease.signing.statement import payload
from hubrelease.signing.verifiers import SignaturePolicy
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import run_cli
from tests.factories.releases import write_release
from tests.factories.signing import (
    KEYLESS_IDENTITY,
    KEYLESS_ISSUER,
    KEYLESS_VECTOR,
    KeylessRelease,
    github_keyless_signature,
    public_good_trust_config,
)

SIGNED = ("signme-1", "signme-2")


@pytest.fixture
def vector(tmp_path: Path) -> Path:
    folder = tmp_path / "v1.1.0-sigstore"
    shutil.copytree(KEYLESS_VECTOR, folder)
    return folder


@pytest.fixture
def trust(tmp_path: Path) -> Path:
    return public_good_trust_config(tmp_path / "trust.json")


def _model_signing(folder: Path, trust: Path, identity: str = KEYLESS_IDENTITY) -> tuple[int, str]:
    args = [
        "verify", "sigstore", str(folder), "--signature", str(folder / "model.sig"), "--trust_config", str(trust),
        "--identity", identity, "--identity_provider", KEYLESS_ISSUER,
    ]  # fmt: skip
    result = ClickRunner().invoke(model_signing_cli, args)
    return result.exit_code, result.output


# The vector predates nothing: model_signing sign simply does not ignore .cache/huggingface (a warning).
DOWNLOAD_WARNING = ("model.sig", "warning")


def _errors(findings: list[Finding]) -> list[Finding]:
    assert [(f.path, f.severity) for f in findings if f.severity != "error"] in ([], [DOWNLOAD_WARNING])
    return [f for f in findings if f.severity == "error"]


def _observed(folder: Path) -> dict[str, str | None]:
    return {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in SIGNED}


def _policy(trust: Path, identity: str = KEYLESS_IDENTITY, issuer: str = KEYLESS_ISSUER) -> SignaturePolicy:
    return SignaturePolicy(identity=identity, issuer=issuer, trust_config=trust, anchor="--identity")


def test_the_public_good_vector_verifies_offline(vector: Path, trust: Path) -> None:
    assert _model_signing(vector, trust) == (0, "Verification succeeded\n")
    findings = signature_findings(vector / "model.sig", _policy(trust), _observed(vector))
    assert [(f.path, f.severity) for f in findings] == [DOWNLOAD_WARNING, ("model.sig", "info")]
    assert findings[1].message == (
        f"signature valid, signer matches the pinned identity {KEYLESS_IDENTITY} (issuer {KEYLESS_ISSUER}) "
        "(from --identity)"
    )


@pytest.mark.parametrize(
    ("identity", "issuer", "reason"),
    [
        ("someone@example.com", KEYLESS_ISSUER, "Certificate's SANs do not match someone@example.com"),
        (
            KEYLESS_IDENTITY,
            "https://token.actions.githubusercontent.com",
            "Certificate's OIDCIssuer does not match",
        ),
    ],
)
def test_another_identity_or_issuer_is_refused(
    vector: Path, trust: Path, identity: str, issuer: str, reason: str
) -> None:
    [finding] = _errors(
        signature_findings(vector / "model.sig", _policy(trust, identity, issuer), _observed(vector))
    )
    assert finding.kind == "signature" and finding.path == "model.sig"
    assert (
        finding.message.startswith("signature does not verify (sigstore): VerificationError: ")
        and reason in finding.message
    )
    if issuer == KEYLESS_ISSUER:
        assert _model_signing(vector, trust, identity)[0] == 1


def test_a_changed_signed_file_is_refused_by_both(vector: Path, trust: Path) -> None:
    (vector / "signme-2").write_bytes(b"changed!")
    code, text = _model_signing(vector, trust)
    assert code == 1 and "Hash mismatch for" in text and "signme-2" in text
    [finding] = _errors(signature_findings(vector / "model.sig", _policy(trust), _observed(vector)))
    assert (finding.path, finding.message.split(" is not ")[0]) == (
        "signme-2",
        f"sha256 {hashlib.sha256(b'changed!').hexdigest()}",
    )


def test_a_release_manifest_over_the_vector_through_the_cli(vector: Path, trust: Path) -> None:
    """`verify --signature --identity --issuer --trust-config`: the identity checks out; the vector does not
    sign a hubrelease manifest, which is the one published file it lacks."""
    manifest = vector / "hubrelease.yaml"
    data = {
        "schema_version": 1,
        "release": {"repo_id": "acme/vector", "license": "apache-2.0"},
        "artifacts": [
            {"path": name, "size": 8, "sha256": digest} for name, digest in _observed(vector).items()
        ],
        "ignore": ["ignore-me"],
    }
    manifest.write_text(yaml.safe_dump(data), encoding="utf-8")
    args = (
        "--signature",
        "--identity",
        KEYLESS_IDENTITY,
        "--issuer",
        KEYLESS_ISSUER,
        "--trust-config",
        trust,
        "--json",
    )
    code, out, err = run_cli("verify", manifest, *args)
    assert code == 1, err
    findings = [
        (f["kind"], f["path"], f["message"]) for f in json.loads(out)["findings"] if f["severity"] == "error"
    ]
    assert findings == [("signature", "hubrelease.yaml", "published but not signed")]
    code, out, err = run_cli("verify", manifest, *args[:2], "someone@example.com", *args[3:])
    assert code == 1 and "Certificate's SANs do not match someone@example.com" in out
    bad = vector / "bad-trust.json"
    bad.write_text("{}")
    code, _, err = run_cli("verify", manifest, *args[:6], bad)
    assert code == 2 and err.startswith(f"error: {bad}: not a Sigstore client trust config"), err


WORKFLOW_REPO = "acme/keyless-drafter"
WORKFLOW_FILE = ".github/workflows/release.yml"


def _workflow_release(folder: Path, pinned_repository: str) -> tuple[Path, KeylessRelease]:
    """A release whose manifest pins a GitHub workflow of ``pinned_repository``, signed keyless by
    WORKFLOW_REPO's release workflow at v1.0 (offline: a local trust root)."""
    manifest = write_release(
        folder / "rel",
        {"model.safetensors": b"weights" * 1000, "config.json": b"{}\n"},
        extra_manifest={
            "release": {"repo_id": WORKFLOW_REPO, "license": "mit"},
            "card": {"template": "safetensors_drafter", "summary": "Signed in CI."},
            "signing": {
                "method": "sigstore",
                "identity": {
                    "repository": pinned_repository,
                    "workflow": WORKFLOW_FILE,
                    "ref": "refs/tags/v*",
                },
            },
        },
    )
    assert run_cli("render-card", manifest)[0] == 0
    release = load_manifest(manifest)
    digests = published_digests(publish_set(release, manifest, folder / "rel"))
    files = {path: digest for path, digest in digests.items() if digest is not None}
    statement = json_format.MessageToJson(payload(WORKFLOW_REPO, files).statement.pb).encode()
    signed = github_keyless_signature(
        folder / "rel",
        statement,
        folder / "trust.json",
        repository=WORKFLOW_REPO,
        workflow=WORKFLOW_FILE,
        ref="refs/tags/v1.0",
    )
    return manifest, signed


def _signer_message(out: str) -> tuple[str, str]:
    [finding] = [f for f in json.loads(out)["findings"] if f["path"] == "model.sig"]
    return finding["severity"], finding["message"]


def test_a_workflow_signed_release_through_the_cli_and_its_card(tmp_path: Path) -> None:
    manifest, signed = _workflow_release(tmp_path, WORKFLOW_REPO)
    trust = ("--trust-config", signed.trust_config)
    workflow = f"{WORKFLOW_REPO}/{WORKFLOW_FILE}@refs/tags/v*"
    code, out, err = run_cli(
        "verify", manifest, "--signature", "--github-workflow", workflow, *trust, "--json"
    )
    san = f"https://github.com/{WORKFLOW_REPO}/{WORKFLOW_FILE}@refs/tags/v*"
    assert (code, _signer_message(out)) == (
        0,
        ("info", f"signature valid, signer matches the pinned identity {san} (from --github-workflow)"),
    ), err
    code, out, _ = run_cli("verify", manifest, "--signature", *trust, "--json")  # the folder's own pin
    severity, message = _signer_message(out)
    assert code == 1 and severity == "error" and f"signer is unverified: {san} is pinned only" in message
    other = f"acme/other/{WORKFLOW_FILE}@refs/tags/v*"
    code, out, _ = run_cli("verify", manifest, "--signature", "--github-workflow", other, *trust, "--json")
    assert code == 1 and "GitHubWorkflowRepository does not match" in _signer_message(out)[1]
    card = (tmp_path / "rel" / "README.md").read_text(encoding="utf-8")
    assert (
        f"the GitHub Actions workflow `{WORKFLOW_FILE}` of `{WORKFLOW_REPO}`, run for `refs/tags/v*`" in card
    )
    assert (
        f"`hubrelease verify keyless-drafter/hubrelease.yaml --signature --github-workflow '{workflow}'`"
        in card
    )


def test_push_refuses_a_keyless_signature_by_another_workflow_than_pinned(
    tmp_path: Path, loopback_hub: LoopbackHub
) -> None:
    manifest, _ = _workflow_release(tmp_path, "acme/another-repo")
    loopback_hub.requests.clear()
    code, out, err = run_cli("push", manifest, "--endpoint", loopback_hub.url)
    assert code == 1 and "model.sig is not signed by the manifest's signer" in err, out + err
    assert "GitHubWorkflowRepository does not match" in err
    assert [r for r in loopback_hub.requests.records if r.method not in ("GET", "HEAD")] == []
