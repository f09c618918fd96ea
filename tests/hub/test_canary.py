"""No Hub command prints a token, even when the Hub echoes every request header back,
not even with ``HUBRELEASE_DEBUG=1`` (its traceback skipped the redaction, 23 leaks
in 23 runs, and every error exited 1).

The loopback Hub's ``echo_headers`` fault answers each request with its headers, Authorization
included, in the error body and ``X-Error-Message``, as a careless proxy does. Every Hub command
runs against it with a canary token in HF_TOKEN, another in --token and one in the endpoint URL's
userinfo; none may appear in anything printed, and the exit code is the same with and without debug.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hubrelease_loopback import LoopbackHub
from tests.factories.cli import invoke, run_process
from tests.factories.hub import api_for, hf_env, unique_repo, upload_files
from tests.factories.releases import write_release

ENV_CANARY = "hf_EnvCanary0123456789abcdefghijklmn"
FLAG_CANARY = "flag-canary-0123456789"
URL_CANARY = "urlcanary9876"


@pytest.mark.parametrize("status", [400, 403, 500])
def test_no_hub_command_prints_a_token_the_hub_echoes(
    hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int, no_backoff_sleep: None
) -> None:
    monkeypatch.setenv("HF_TOKEN", ENV_CANARY)
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
            codes = []
            for debug in ("", "1"):
                monkeypatch.setenv("HUBRELEASE_DEBUG", debug)
                result = invoke([*command, "--endpoint", endpoint, *extra])
                assert result.exit_code == 4, (command, result.exit_code, result.stderr)  # the Hub refused
                assert ("Traceback (most recent call last)" in result.stderr) == bool(debug), result.stderr
                assert result.stderr.rstrip().splitlines()[-1].startswith("error: "), result.stderr
                codes.append(result.exit_code)
                outputs.append(result.stdout + result.stderr)
            assert codes[0] == codes[1], (command, codes)
    _assert_no_canary("\n".join(outputs))


def _assert_no_canary(printed: str) -> None:
    assert "Bearer ***" in printed  # the echoed header reached the output, redacted
    for canary in (ENV_CANARY, FLAG_CANARY, URL_CANARY, "EnvCanary"):
        assert canary not in printed


def test_debug_traceback_of_a_real_process_is_redacted_and_keeps_the_exit_code(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    """As users run it: Python's own top level would print an exception that escaped the CLI."""
    repo = unique_repo()
    manifest = write_release(
        tmp_path / "rel",
        {"notes.md": b"n\n"},
        extra_manifest={"release": {"repo_id": repo, "license": "mit"}},
    )
    hub.faults.echo_headers(status=500)
    env = {**hf_env(hub, tmp_path / "hf"), "HF_TOKEN": ENV_CANARY}
    codes = []
    for debug in ("", "1"):
        code, out, err = run_process(
            "verify", manifest, "--remote", "--endpoint", hub.url, env={**env, "HUBRELEASE_DEBUG": debug}
        )
        codes.append(code)
    assert codes == [4, 4], err
    assert "Traceback (most recent call last)" in err and "HfHubHTTPError" in err
    _assert_no_canary(out + err)


def test_debug_traceback_of_an_internal_error_is_redacted_and_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_TOKEN", ENV_CANARY)
    manifest = write_release(tmp_path / "rel", {"notes.md": b"n\n"})

    def broken(*args: object, **kwargs: object) -> None:
        try:
            raise ValueError(f"inner cause quoting Authorization: Bearer {ENV_CANARY}")
        except ValueError:
            raise RuntimeError(f"a bug near {FLAG_CANARY}") from None

    monkeypatch.setattr("hubrelease.verify.checksums.format_sums", broken)
    from hubrelease import redaction

    redaction.remember(FLAG_CANARY)
    for debug in ("", "1"):
        monkeypatch.setenv("HUBRELEASE_DEBUG", debug)
        result = invoke(["checksums", str(manifest)])
        assert result.exit_code == 3, result.stderr
        assert result.stderr.rstrip().splitlines()[-1].startswith("error: internal error: RuntimeError")
        for canary in (ENV_CANARY, FLAG_CANARY):
            assert canary not in result.stderr
    assert "inner cause quoting Authorization: Bearer ***" in result.stderr  # the hidden link is shown
