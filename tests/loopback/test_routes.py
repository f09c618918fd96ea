"""Repo routes of the loopback Hub: hostile cards (the front matter is screened and parsed once), and
the routes against the real client (huggingface_hub 2.4.0, the ``hf`` CLI), each test naming the
client source it relies on and what the Hub answers there."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, RepoFolder, constants
from huggingface_hub.errors import HfHubHTTPError

from hubrelease.safe_parse import parse_yaml
from hubrelease_loopback import LoopbackHub
from tests.factories.cards import alias_bomb
from tests.factories.cli import run_program
from tests.factories.hub import api_for, hf_env, logged, ndjson_commit, raw_request, unique_repo

WEIGHTS = bytes(range(256)) * 1_000


def test_the_default_branch_cannot_be_deleted(hub: LoopbackHub) -> None:
    """``delete_branch`` (``hf_api.py`` 7044-7090) on ``main``: the Hub refuses it and the repo keeps
    its branch, so the next upload still lands."""
    api, repo = api_for(hub), unique_repo()
    api.create_repo(repo)
    api.create_branch(repo, branch="dev")
    api.delete_branch(repo, branch="dev")
    with pytest.raises(HfHubHTTPError) as caught:
        api.delete_branch(repo, branch="main")
    assert caught.value.response.status_code == 403
    assert [b.name for b in api.list_repo_refs(repo).branches] == ["main"]
    api.upload_file(path_or_fileobj=b"x", path_in_repo="x.txt", repo_id=repo)


@pytest.mark.parametrize("transport", ["lfs", "xet"])
def test_a_moved_repo_redirects_from_its_old_name(
    hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    """After ``move_repo`` the Hub answers the old name with a redirect to the new one, which the
    client follows (``utils/_http.py`` 347 ``follow_redirects=True``; HEAD in 763-782); the old name
    is free again once a repo takes it."""
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", transport == "lfs")
    api, old, new = api_for(hub), unique_repo("old"), unique_repo("new")
    api.create_repo(old)
    api.create_commit(old, [CommitOperationAdd("w.safetensors", WEIGHTS)], commit_message="w")
    api.move_repo(old, new)
    assert api.repo_info(old).id == new
    path = api.hf_hub_download(old, "w.safetensors", cache_dir=tmp_path / "cache")
    assert Path(path).read_bytes() == WEIGHTS
    assert [f.path for f in api.list_repo_tree(old)] == [".gitattributes", "w.safetensors"]
    api.create_repo(old)
    assert api.repo_info(old).id == old


def test_a_moved_private_repo_is_not_revealed(hub: LoopbackHub) -> None:
    api, old, new = api_for(hub), unique_repo("old"), unique_repo("new")
    api.create_repo(old, private=True)
    api.move_repo(old, new)
    status, headers, _ = raw_request(f"{hub.url}/api/models/{old}")
    assert status == 404 and "location" not in headers


def test_discussion_rename_and_pull_request_diff(hub: LoopbackHub) -> None:
    """``rename_discussion`` posts ``.../discussions/N/title`` and reads ``newTitle`` (``hf_api.py``
    7690-7754); ``get_discussion_details`` asks ``?diff=1`` and reads ``diff`` (7413, 7436)."""
    api, repo = api_for(hub), unique_repo()
    api.create_repo(repo)
    api.upload_file(path_or_fileobj=b"one\ntwo\n", path_in_repo="notes.txt", repo_id=repo)
    pr = api.create_commit(
        repo,
        [CommitOperationAdd("notes.txt", b"one\nthree\n"), CommitOperationAdd("w.safetensors", WEIGHTS)],
        commit_message="change",
        create_pr=True,
    ).pr_num
    assert pr is not None
    renamed = api.rename_discussion(repo, pr, "better title")
    assert (renamed.old_title, renamed.new_title) == ("change", "better title")
    details = api.get_discussion_details(repo, pr)
    assert details.title == "better title"
    assert details.diff is not None
    assert "diff --git a/notes.txt b/notes.txt" in details.diff
    assert "-two\n+three\n" in details.diff
    assert "+oid sha256:" in details.diff  # an LFS file shows as its pointer, as git shows it


def test_formatted_commit_titles_and_folder_last_commits(hub: LoopbackHub) -> None:
    """``list_repo_commits(formatted=True)`` asks ``expand[]=formatted`` (``hf_api.py`` 4259-4265);
    a folder's ``lastCommit`` in an expanded tree (``RepoFolder``, 761-769) is its newest change."""
    api, repo = api_for(hub), unique_repo()
    api.create_repo(repo)
    api.upload_file(path_or_fileobj=b"a", path_in_repo="sub/a.txt", repo_id=repo, commit_message="add <a>")
    second = api.upload_file(path_or_fileobj=b"b", path_in_repo="sub/b.txt", repo_id=repo, commit_message="b")
    api.upload_file(path_or_fileobj=b"c", path_in_repo="c.txt", repo_id=repo, commit_message="c")
    commits = api.list_repo_commits(repo, formatted=True)
    assert [c.formatted_title for c in commits][-2:] == ["add &lt;a&gt;", "initial commit"]
    folders = [e for e in api.list_repo_tree(repo, expand=True) if isinstance(e, RepoFolder)]
    assert [(f.path, f.last_commit.oid if f.last_commit else None) for f in folders] == [("sub", second.oid)]
    api.create_commit(repo, [CommitOperationDelete("c.txt")], commit_message="drop c")
    info = api.get_paths_info(repo, ["sub"], expand=True)
    assert isinstance(info[0], RepoFolder) and info[0].last_commit is not None
    assert info[0].last_commit.oid == second.oid


def test_hf_repos_list_and_duplicate(hub: LoopbackHub, tmp_path: Path) -> None:
    """``hf repos list`` reads ``/api/settings/repositories`` (``hf_api.py`` list_user_repos, 3097-3103);
    ``hf repos duplicate`` posts ``/api/{t}s/{id}/duplicate`` and reads ``url`` (9038-9052)."""
    api, repo, copy = api_for(hub), unique_repo("src"), unique_repo("dup")
    api.create_repo(repo)
    api.create_commit(repo, [CommitOperationAdd("w.safetensors", WEIGHTS)], commit_message="w")
    env = {**hf_env(hub, tmp_path / "hf"), "HF_TOKEN": hub.owner_token}
    listed = run_program(["hf", "repos", "list", "--namespace", "acme", "--limit", "0"], env=env)
    assert listed.returncode == 0, listed.stderr
    assert repo in listed.stdout
    made = run_program(["hf", "repos", "duplicate", repo, copy], env=env)
    assert made.returncode == 0, made.stderr
    path = api.hf_hub_download(copy, "w.safetensors", cache_dir=tmp_path / "cache")
    assert Path(path).read_bytes() == WEIGHTS
    with pytest.raises(HfHubHTTPError) as caught:
        api.duplicate_repo(repo, copy)
    assert caught.value.response.status_code == 409


def test_a_read_token_cannot_duplicate_a_repo(tmp_path: Path) -> None:
    """Duplicating creates a repo: a read-only token is refused (403) as it is for ``create_repo``."""
    with LoopbackHub(tmp_path / "root", tokens={"hf_w": "write", "hf_r": "read"}) as hub:
        HfApi(endpoint=hub.url, token="hf_w").create_repo("acme/src")
        with pytest.raises(HfHubHTTPError) as caught:
            HfApi(endpoint=hub.url, token="hf_r").duplicate_repo("acme/src", "acme/copy")
        assert caught.value.response.status_code == 403
        assert not HfApi(endpoint=hub.url, token="hf_w").repo_exists("acme/copy")


def test_public_repos_are_readable_without_a_token_by_default(tmp_path: Path) -> None:
    """The Hub serves public repos to anyone; private ones stay 404 without a covering token."""
    with LoopbackHub(tmp_path / "root", tokens={"hf_w": "write"}, allow_anonymous=False) as hub:
        owner = api_for(hub)
        owner.create_repo("acme/open")
        owner.create_repo("acme/closed", private=True)
        assert raw_request(f"{hub.url}/api/models/acme/open")[0] == 200
        assert raw_request(f"{hub.url}/api/models/acme/closed")[0] == 404
        with pytest.raises(HfHubHTTPError) as caught:
            HfApi(endpoint=hub.url, token=False).create_repo("acme/anon")
        assert caught.value.response.status_code == 401
    with LoopbackHub(
        tmp_path / "root", tokens={"hf_w": "write"}, allow_anonymous=False, anonymous_reads=False
    ) as closed:
        assert raw_request(f"{closed.url}/api/models/acme/open")[0] == 401


@pytest.mark.usefixtures("lfs_only")
def test_storage_port_is_configurable(tmp_path: Path) -> None:
    """An LFS download redirects to the storage origin on the port asked for."""
    probe = LoopbackHub(tmp_path / "probe")
    port = int(probe._cdn.server_address[1])
    probe.stop()
    with LoopbackHub(tmp_path / "root", storage_port=port) as hub:
        assert hub.cdn_url == f"http://127.0.0.1:{port}"
        api, repo = api_for(hub), unique_repo()
        api.create_repo(repo)
        api.create_commit(repo, [CommitOperationAdd("w.safetensors", WEIGHTS)], commit_message="w")
        path = api.hf_hub_download(repo, "w.safetensors", cache_dir=tmp_path / "cache")
        assert Path(path).read_bytes() == WEIGHTS
        assert logged(hub, "cdn", 1)


def _with_readme(hub: LoopbackHub, readme: str) -> str:
    """A repo whose card is ``readme``, committed without the client's validate-yaml check."""
    api, repo = api_for(hub), unique_repo("card")
    api.create_repo(repo)
    body = ndjson_commit({"README.md": readme.encode()})
    headers = {"Authorization": f"Bearer {hub.owner_token}"}
    assert raw_request(f"{hub.url}/api/models/{repo}/commit/main", "POST", body, headers)[0] == 200
    return repo


def _info(hub: LoopbackHub, repo: str) -> tuple[int, bytes]:
    status, _, text = raw_request(f"{hub.url}/api/models/{repo}")
    return status, text


def test_a_card_is_parsed_once_however_often_repo_info_is_asked(
    hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[str] = []
    original = parse_yaml

    def counting(text: str | bytes) -> Any:
        parsed.append(str(text))
        return original(text)

    monkeypatch.setattr("hubrelease_loopback.routes.parse_yaml", counting)
    repo = _with_readme(hub, f"---\nlicense: mit\ntags: [{uuid.uuid4().hex}]\n---\n# card\n")
    answers = [_info(hub, repo) for _ in range(3)]
    assert all(status == 200 for status, _ in answers)
    assert [json.loads(text)["cardData"]["license"] for _, text in answers] == ["mit"] * 3
    assert len(parsed) == 1


def test_an_alias_bomb_is_refused_by_the_screen_not_expanded_into_repo_info(hub: LoopbackHub) -> None:
    readme = alias_bomb(width=2, levels=21)  # 2 ** 21 values once expanded, from under 500 bytes
    assert len(readme) < 500
    status, text = _info(hub, _with_readme(hub, readme))
    assert status == 200 and "cardData" not in json.loads(text)  # a broken card: none, as on the Hub
    assert len(text) < 4096  # main answered every repo_info with the 2,097,152 values (~15 MB)


def test_a_card_with_a_date_has_card_data(hub: LoopbackHub) -> None:
    status, text = _info(hub, _with_readme(hub, "---\nlicense: mit\ndate: 2024-01-02\n---\n"))
    assert status == 200  # main: 500, a YAML date is no JSON value
    assert json.loads(text)["cardData"] == {"license": "mit", "date": "2024-01-02"}
