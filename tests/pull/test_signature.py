"""`pull` of a signed release checks ``model.sig`` against the files the Hub lists, before any weights."""

from __future__ import annotations

from pathlib import Path

from hubrelease_loopback import LoopbackHub, RepoKey
from hubrelease_loopback.faults import FILE_ROUTES
from tests.factories.cli import invoke
from tests.factories.published import publish_example
from tests.factories.signing import ec_key_pair


def test_a_signed_release_verifies_and_a_file_replaced_after_signing_is_refused(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    keys = ec_key_pair(tmp_path / "keys")
    example = publish_example(hub, tmp_path, signing_key=keys.private)
    args = ["--engine", "sglang", "--public-key", str(keys.public), "--endpoint", hub.url]
    result = invoke(["pull", example.repo, *args, "--dir", str(tmp_path / "ok"), "--json"])
    assert result.exit_code == 0, result.stderr
    assert '"ok": true' in result.stdout and '"method": "key"' in result.stdout
    hub.store.replace_file(RepoKey("model", example.repo), "main", "model.safetensors", b"\0" * 10)
    hub.requests.clear()
    refused = invoke(["pull", example.repo, *args, "--dir", str(tmp_path / "bad")])
    assert refused.exit_code == 1
    assert (
        refused.stderr.startswith(f"error: {example.repo}@")
        and "signature: model.safetensors" in refused.stderr
    )
    assert [r for r in hub.requests.on(FILE_ROUTES) if r.path.endswith(".safetensors")] == []


def test_another_key_is_refused(hub: LoopbackHub, tmp_path: Path) -> None:
    keys, other = ec_key_pair(tmp_path / "keys"), ec_key_pair(tmp_path / "other", "other")
    example = publish_example(hub, tmp_path, signing_key=keys.private)
    result = invoke(["pull", example.repo, "--public-key", str(other.public), "--endpoint", hub.url])
    assert result.exit_code == 1
    assert "signature: model.sig" in result.stderr
