"""No Hub command prints a token, even when the Hub echoes every request header back (issue 13.6).

The loopback Hub's ``echo_headers`` fault answers each request with its headers, Authorization
included, in the error body and ``X-Error-Message``, as a careless proxy does. Every Hub command
runs against it with a canary token in HF_TOKEN, another in --token and one in the endpoint URL's
userinfo; none may appear in anything printed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from hubrelease.cli.app import app
from hubrelease.loopback import LoopbackHub
from tests.factories.hub import api_for, unique_repo, upload_files
from tests.factories.releases import write_release

ENV_CANARY = "hf_EnvCanary0123456789abcdefghijklmn"
FLAG_CANARY = "flag-canary-0123456789"
URL_CANARY = "urlcanary9876"


@pytest.mark.parametrize("status", [400, 403, 500])
def test_no_hub_command_prints_a_token_the_hub_echoes(
    hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    monkeypatch.setenv("HF_TOKEN", ENV_CANARY)
    monkeypatch.setattr("huggingface_hub.utils._http.time.sleep", lambda _: None)
    target = unique_repo("target")
    upload_files(api_for(hub), target, {"config.json": b"{}"})
    repo = unique_repo()
    pins = {"targets": [{"repo_id": target, "revision": "main", "unpinned": True}]}
    release = {"repo_id": repo, "license": "mit"}
    manifest = write_release(tmp_path / "rel", {"notes.md": b"n\n"}, extra_manifest={"release": release})
    locked = write_release(
        tmp_path / "pins", {"notes.md": b"n\n"}, extra_manifest={"release": release, "pins": pins}
    )
    userinfo = hub.url.replace("http://", f"http://user:{URL_CANARY}@")
    commands = [
        ["push", str(manifest)],
        ["push", str(manifest), "--dry-run", "--json"],
        ["verify", str(manifest), "--remote"],
        ["verify", str(manifest), "--remote", "--json"],
        ["lock", str(locked), "--pin", target],  # unpinned: true is kept without a request unless --pin
        ["import", target, "--out", str(tmp_path / "imported.yaml")],
        ["inspect", f"hf://{target}/config.json"],
    ]
    hub.faults.echo_headers(status=status)
    outputs = []
    for command in commands:
        for endpoint in (hub.url, userinfo):
            extra = ["--token", FLAG_CANARY] if command[0] != "inspect" else []
            result = CliRunner().invoke(app, [*command, "--endpoint", endpoint, *extra])
            assert result.exit_code in (1, 2, 4), (command, result.exit_code, result.stderr)
            outputs.append(result.stdout + result.stderr)
    printed = "\n".join(outputs)
    assert "Bearer ***" in printed  # the echoed header reached the output, redacted
    for canary in (ENV_CANARY, FLAG_CANARY, URL_CANARY, "EnvCanary"):
        assert canary not in printed
