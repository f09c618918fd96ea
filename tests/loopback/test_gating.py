"""Gated repos against the real client: ``update_repo_settings(gated=...)`` and ``hf repos settings
--gated`` take effect, downloads without access raise ``GatedRepoError`` (huggingface_hub 2.4.0
``utils/_http.py`` 888-892, ``X-Error-Code: GatedRepo``), and access requests are handled through
``hf_api.py`` ``_list_access_requests`` (10795), ``_handle_access_request`` (10983) and
``grant_access`` (11018)."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi, constants
from huggingface_hub.errors import GatedRepoError, HfHubHTTPError

from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.auth import Grant
from tests.factories.cli import run_program
from tests.factories.hub import hf_env, raw_request

OWNER, READER, OTHER = "hf_gate_owner", "hf_gate_reader", "hf_gate_other"
WEIGHTS = bytes(range(256)) * 1_000


@pytest.fixture
def gated_hub(tmp_path: Path) -> LoopbackHub:
    """A Hub with an owner and two read tokens (users ``readers`` and ``others``), anonymous reads on."""
    tokens = {
        OWNER: Grant("write"),
        READER: Grant("read", ("readers/*",)),
        OTHER: Grant("read", ("others/*",)),
    }
    return LoopbackHub(tmp_path / "root", tokens=tokens, allow_anonymous=False)


def _ask(hub: LoopbackHub, repo: str, token: str) -> int:
    """The Hub's access form (a browser POST; huggingface_hub has no method for it)."""
    return raw_request(f"{hub.url}/{repo}/ask-access", "POST", b"{}", {"Authorization": f"Bearer {token}"})[0]


@pytest.mark.parametrize("transport", ["lfs", "xet"])
def test_manual_gate_refuses_until_the_owner_accepts(
    gated_hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", transport == "lfs")
    with gated_hub as hub:
        owner = HfApi(endpoint=hub.url, token=OWNER)
        reader = HfApi(endpoint=hub.url, token=READER)
        repo = "acme/gated"
        owner.create_repo(repo)
        owner.create_commit(repo, [CommitOperationAdd("w.safetensors", WEIGHTS)], commit_message="w")
        owner.update_repo_settings(repo, gated="manual")
        assert reader.repo_info(repo).gated == "manual"  # metadata stays readable, as on the Hub
        with pytest.raises(GatedRepoError) as anonymous:
            HfApi(endpoint=hub.url, token=False).hf_hub_download(
                repo, "w.safetensors", cache_dir=tmp_path / "a"
            )
        assert anonymous.value.response.status_code == 401
        with pytest.raises(GatedRepoError) as refused:
            reader.hf_hub_download(repo, "w.safetensors", cache_dir=tmp_path / "r")
        assert refused.value.response.status_code == 403
        assert _ask(hub, repo, READER) == 200
        assert [r.username for r in owner.list_pending_access_requests(repo)] == ["readers"]
        with pytest.raises(GatedRepoError):  # pending is not accepted
            reader.hf_hub_download(repo, "w.safetensors", cache_dir=tmp_path / "r")
        owner.accept_access_request(repo, "readers")
        assert [r.username for r in owner.list_accepted_access_requests(repo)] == ["readers"]
        path = reader.hf_hub_download(repo, "w.safetensors", cache_dir=tmp_path / "r")
        assert Path(path).read_bytes() == WEIGHTS
        owner.reject_access_request(repo, "readers", rejection_reason="not yet")
        with pytest.raises(GatedRepoError):
            reader.hf_hub_download(repo, "w.safetensors", cache_dir=tmp_path / "again")
        assert hub.server_errors == []


def test_auto_gate_accepts_a_request_at_once_and_owners_grant(gated_hub: LoopbackHub, tmp_path: Path) -> None:
    with gated_hub as hub:
        owner = HfApi(endpoint=hub.url, token=OWNER)
        repo = "acme/auto"
        owner.create_repo(repo)
        owner.upload_file(path_or_fileobj=b"hello", path_in_repo="a.txt", repo_id=repo)
        owner.update_repo_settings(repo, gated="auto")
        assert _ask(hub, repo, READER) == 200
        assert [r.username for r in owner.list_accepted_access_requests(repo)] == ["readers"]
        reader_file = HfApi(endpoint=hub.url, token=READER).hf_hub_download(repo, "a.txt", cache_dir=tmp_path)
        assert Path(reader_file).read_bytes() == b"hello"
        other = HfApi(endpoint=hub.url, token=OTHER)
        with pytest.raises(GatedRepoError):
            other.hf_hub_download(repo, "a.txt", cache_dir=tmp_path / "o")
        owner.grant_access(repo, "others")
        assert Path(other.hf_hub_download(repo, "a.txt", cache_dir=tmp_path / "o")).read_bytes() == b"hello"
        owner.update_repo_settings(repo, gated=False)
        anonymous = HfApi(endpoint=hub.url, token=False)
        assert (
            Path(anonymous.hf_hub_download(repo, "a.txt", cache_dir=tmp_path / "n")).read_bytes() == b"hello"
        )


def test_hf_repos_settings_gated_takes_effect(gated_hub: LoopbackHub, tmp_path: Path) -> None:
    with gated_hub as hub:
        owner = HfApi(endpoint=hub.url, token=OWNER)
        owner.create_repo("acme/cli-gated")
        owner.upload_file(path_or_fileobj=b"x", path_in_repo="x.txt", repo_id="acme/cli-gated")
        env = {**hf_env(hub, tmp_path / "hf"), "HF_TOKEN": OWNER}
        result = run_program(["hf", "repos", "settings", "acme/cli-gated", "--gated", "manual"], env=env)
        assert result.returncode == 0, result.stderr
        assert owner.repo_info("acme/cli-gated").gated == "manual"
        env["HF_TOKEN"] = READER
        result = run_program(["hf", "download", "acme/cli-gated", "x.txt"], env=env)
        assert result.returncode != 0 and "gated" in (result.stderr + result.stdout).lower()


def test_only_writers_see_access_requests(gated_hub: LoopbackHub) -> None:
    with gated_hub as hub:
        HfApi(endpoint=hub.url, token=OWNER).create_repo("acme/listed")
        with pytest.raises(HfHubHTTPError) as caught:
            list(HfApi(endpoint=hub.url, token=READER).list_pending_access_requests("acme/listed"))
        assert caught.value.response.status_code == 403


def test_an_invalid_gated_value_changes_nothing(gated_hub: LoopbackHub) -> None:
    """huggingface_hub refuses such a value itself (``hf_api.py`` 4899): sent raw, it is 400 and the
    visibility change in the same request is not applied."""
    with gated_hub as hub:
        owner = HfApi(endpoint=hub.url, token=OWNER)
        owner.create_repo("acme/unchanged")
        body = b'{"private": true, "gated": "sometimes"}'
        headers = {"Authorization": f"Bearer {OWNER}", "Content-Type": "application/json"}
        status = raw_request(f"{hub.url}/api/models/acme/unchanged/settings", "PUT", body, headers)[0]
        assert status == 400
        info = owner.repo_info("acme/unchanged")
        assert (info.private, info.gated) == (False, False)
