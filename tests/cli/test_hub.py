"""`hub serve --trusted-publishers`: the served Hub exchanges a configured CI job's id token."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest
from huggingface_hub import HfApi, get_token
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.utils import _auth

from tests.factories.cli import finish, invoke, spawn

RUN = "repository=acme/rel workflow_ref=acme/rel/.github/workflows/release.yml@refs/tags/v1 ref=refs/tags/v1"


def test_hub_serve_exchanges_the_id_token_of_a_job_its_trust_file_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tokens").write_text("hf_admin write\n")
    (tmp_path / "trust").write_text(
        "publisher acme/drafter repository=acme/rel workflow=release.yml environment=hub ref=refs/tags/v*\n"
        f"job job-hub {RUN} environment=hub\n"
        f"job job-none {RUN}  # no environment: the publisher refuses it\n"
    )
    args: list[str | Path] = [
        "--root",
        tmp_path / "root",
        "--token-file",
        tmp_path / "tokens",
        "--trusted-publishers",
        tmp_path / "trust",
    ]
    proc = spawn("hub", "serve", *args, stdout=subprocess.DEVNULL)
    try:
        assert proc.stderr is not None
        url = proc.stderr.readline().split()[3]
        monkeypatch.setattr("huggingface_hub.constants.ENDPOINT", url)  # the audience asked for
        monkeypatch.setenv("GITHUB_ACTIONS", "true")
        monkeypatch.setenv("HF_OIDC_RESOURCE", "acme/drafter")
        monkeypatch.setenv("ACTIONS_ID_TOKEN_REQUEST_URL", f"{url}/__oidc/github")
        monkeypatch.setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "job-hub")
        monkeypatch.setattr(_auth, "_OIDC_TOKEN_CACHE", None)
        HfApi(endpoint=url, token=get_token()).create_repo("acme/drafter")
        monkeypatch.setenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "job-none")
        monkeypatch.setattr(_auth, "_OIDC_TOKEN_CACHE", None)
        with pytest.raises(HfHubHTTPError) as refused:
            get_token()
        assert refused.value.response is not None and refused.value.response.status_code == 400
    finally:
        proc.send_signal(signal.SIGINT)
        code, _, err = finish(proc)
    assert code == 0 and "POST /oauth/token 200" in err and "POST /oauth/token 400" in err


def test_hub_serve_refuses_a_malformed_trust_file_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "trust").write_text("publisher acme/drafter workflow=release.yml\n")
    args: list[str | Path] = [
        "--root",
        tmp_path / "root",
        "--allow-anonymous",
        "--trusted-publishers",
        tmp_path / "trust",
    ]
    refused = invoke(["hub", "serve", *args])
    assert refused.exit_code == 2
    assert refused.stderr.startswith("error: ") and refused.stderr.count("\n") == 1
    assert (
        "cannot read the trusted publishers: " in refused.stderr
        and "trust:1: expected 'publisher RESOURCE repository=OWNER/REPO" in refused.stderr
    )
