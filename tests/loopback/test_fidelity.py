"""The loopback Hub answers as the Hub does where the real client (huggingface_hub 2.4, hf_xet 1.8)
depends on it: copies, repo management routes, misses cached by commit, refs rules, repo and tree
fields, Range and path validation, bounded decompression."""

from __future__ import annotations

import hashlib
import json
import os
import tracemalloc
from pathlib import Path

import lz4.frame
import pytest
from huggingface_hub import (
    CommitOperationAdd,
    CommitOperationCopy,
    RepoFile,
    constants,
    get_hf_file_metadata,
    hf_hub_download,
    hf_hub_url,
)
from huggingface_hub.errors import (
    EntryNotFoundError,
    HfHubHTTPError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from hubrelease_loopback import LoopbackHub, xetformat
from tests.factories.cli import run_program
from tests.factories.hub import api_for, head, hf_env, raw_request, unique_repo

CARD = b"---\nlicense: apache-2.0\nbase_model: acme/base\n---\n# Drafter\n"


@pytest.mark.parametrize("transport", ["lfs", "xet"])
def test_copies_of_large_files(
    hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    """CommitOperationCopy sends an lfsFile line without a size (_commit_api.py, case 2.d)."""
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", transport == "lfs")
    api, repo = api_for(hub), unique_repo()
    weights = os.urandom(300_000)
    api.create_repo(repo)
    api.create_commit(repo, [CommitOperationAdd("w.safetensors", weights)], commit_message="w")
    api.create_commit(repo, [CommitOperationCopy("w.safetensors", "copy.safetensors")], commit_message="c")
    path = api.hf_hub_download(repo, "copy.safetensors", cache_dir=tmp_path / "cache")
    assert Path(path).read_bytes() == weights


def test_repo_management_routes(hub: LoopbackHub) -> None:
    api, repo = api_for(hub), unique_repo("manage")
    api.create_repo(repo)
    assert api.whoami()["auth"]["accessToken"]["role"] == "write"
    api.update_repo_settings(repo, private=True)
    assert api.repo_info(repo).private is True
    assert repo in [m.id for m in api.list_models(author="acme", search="manage-")]
    moved = unique_repo("moved")
    api.move_repo(repo, moved)
    assert api.repo_info(moved).private is True
    api.delete_repo(moved)
    with pytest.raises(RepositoryNotFoundError):
        api.repo_info(repo)  # the old name redirected to the deleted repo
    with pytest.raises(RepositoryNotFoundError):
        api.repo_info(moved)
    api.delete_repo(moved, missing_ok=True)


def test_a_missing_file_is_cached_as_missing_at_its_commit(hub: LoopbackHub, tmp_path: Path) -> None:
    api, repo = api_for(hub), unique_repo()
    api.create_repo(repo)
    head = api.repo_info(repo).sha
    with pytest.raises(EntryNotFoundError):
        hf_hub_download(repo, "absent.txt", cache_dir=tmp_path, endpoint=hub.url, token=hub.owner_token)
    assert (
        tmp_path / f"models--{repo.replace('/', '--')}" / ".no_exist" / str(head) / "absent.txt"
    ).is_file()


def test_refs_rules_and_paths_the_hub_refuses(hub: LoopbackHub) -> None:
    api, repo = api_for(hub), unique_repo()
    api.create_repo(repo)
    head = api.repo_info(repo).sha
    assert head is not None
    with pytest.raises(RevisionNotFoundError):  # a PR's base is a branch
        api.create_commit(
            repo, [CommitOperationAdd("a.txt", b"a")], commit_message="pr", revision=head, create_pr=True
        )
    lines = [
        {"key": "header", "value": {"summary": "x"}},
        {"key": "file", "value": {"path": "a\\b.txt", "content": "eA==", "encoding": "base64"}},
    ]
    body = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
    status, _, text = raw_request(
        f"{hub.url}/api/models/{repo}/commit/main", "POST", body, {"Content-Type": "application/x-ndjson"}
    )
    assert status == 400 and b"backslash" in text
    url = f"{hub.url}/{repo}/resolve/main/.gitattributes"
    assert raw_request(url, headers={"Range": "bytes=" + "9" * 5000 + "-"})[0] == 416
    status, headers, _ = raw_request(url, headers={"Range": "bytes=-" + "9" * 5000})
    assert status == 206 and headers["content-range"].startswith("bytes 0-")
    assert api.repo_info(repo).sha == head


def test_repo_info_and_tree_fields(hub: LoopbackHub) -> None:
    api, repo = api_for(hub), unique_repo()
    api.create_repo(repo)
    api.create_commit(repo, [CommitOperationAdd("README.md", CARD)], commit_message="card")
    info = api.model_info(repo)
    # ModelInfo keeps fields it does not name as attributes (hf_api.py ModelInfo.__init__, __dict__.update)
    assert vars(info)["xetEnabled"] is True and info.created_at is not None
    assert info.card_data is not None and info.card_data["license"] == "apache-2.0"
    [entry] = [e for e in api.list_repo_tree(repo, expand=True) if e.path == "README.md"]
    assert entry.last_commit is not None and entry.last_commit.title == "card"
    assert isinstance(entry, RepoFile) and entry.security is not None and entry.security["status"] == "safe"


def test_lz4_chunks_are_bounded_before_they_are_allocated() -> None:
    bomb = lz4.frame.compress(bytes(64 * 1024 * 1024))  # ~255 KB that expand to 64 MiB
    tracemalloc.start()
    try:
        with pytest.raises(xetformat.XetFormatError, match="its header says 1000"):
            xetformat.decode_chunk(1, 1000, bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024  # the 64 MiB were never allocated


def test_discussions_pull_requests_merge_and_squash(hub: LoopbackHub) -> None:
    api, repo = api_for(hub), unique_repo()
    api.create_repo(repo)
    question = api.create_discussion(repo, "why?", description="a question")
    pr = api.create_commit(
        repo, [CommitOperationAdd("new.txt", b"from the PR\n")], commit_message="add new", create_pr=True
    )
    assert pr.pr_num is not None
    api.create_commit(repo, [CommitOperationAdd("main.txt", b"on main\n")], commit_message="main moved")
    listed = {d.num: d for d in api.get_repo_discussions(repo)}
    assert listed[question.num].is_pull_request is False and listed[pr.pr_num].is_pull_request is True
    assert [d.num for d in api.get_repo_discussions(repo, discussion_type="pull_request")] == [pr.pr_num]
    reply = api.comment_discussion(repo, question.num, "an answer")
    assert reply.content == "an answer"
    assert api.change_discussion_status(repo, question.num, "closed").new_status == "closed"
    api.merge_pull_request(repo, pr.pr_num)
    details = api.get_discussion_details(repo, pr.pr_num)
    assert details.status == "merged" and details.merge_commit_oid == api.repo_info(repo).sha
    assert set(api.list_repo_files(repo)) == {".gitattributes", "new.txt", "main.txt"}  # both kept
    assert len(api.list_repo_commits(repo)) > 1
    api.super_squash_history(repo, commit_message="one commit")
    [only] = api.list_repo_commits(repo)
    assert only.title == "one commit" and set(api.list_repo_files(repo)) == {
        ".gitattributes",
        "new.txt",
        "main.txt",
    }


def test_gitignore_and_gitattributes_decide_at_preupload(hub: LoopbackHub) -> None:
    api, repo = api_for(hub), unique_repo()
    api.create_repo(repo)
    api.create_commit(
        repo,
        [
            CommitOperationAdd(".gitignore", b"*.tmp\n!keep.tmp\nlogs/\n!logs/run.txt\n"),
            CommitOperationAdd(".gitattributes", b"*.weights filter=lfs diff=lfs merge=lfs -text\n"),
        ],
        commit_message="rules",
    )
    api.create_commit(
        repo,
        [
            CommitOperationAdd("scratch.tmp", b"x"),
            CommitOperationAdd("logs/run.txt", b"x"),
            CommitOperationAdd("keep.tmp", b"kept"),
            CommitOperationAdd("w.weights", b"small text, yet tracked"),
            CommitOperationAdd("w.safetensors", b"small text, no longer tracked"),
        ],
        commit_message="files",
    )
    files = {f.path: f for f in api.get_paths_info(repo, ["w.weights", "w.safetensors"])}
    assert set(api.list_repo_files(repo)) == {
        ".gitignore",
        ".gitattributes",
        "keep.tmp",
        "w.weights",
        "w.safetensors",
    }
    tracked, untracked = files["w.weights"], files["w.safetensors"]
    assert isinstance(tracked, RepoFile) and isinstance(untracked, RepoFile)
    assert tracked.lfs is not None and untracked.lfs is None


def test_a_copy_from_another_repo(hub: LoopbackHub, tmp_path: Path) -> None:
    """Cross-repo copies go through the source's /lfs-files/duplicate (hf_api.py _duplicate_lfs_files)."""
    api, source, target = api_for(hub), unique_repo(), unique_repo()
    weights = os.urandom(300_000)
    api.create_repo(source)
    api.create_commit(source, [CommitOperationAdd("w.safetensors", weights)], commit_message="w")
    api.create_repo(target)
    copy = CommitOperationCopy("w.safetensors", "w.safetensors", src_repo_id=source, src_repo_type="model")
    api.create_commit(target, [copy], commit_message="copy")
    path = api.hf_hub_download(target, "w.safetensors", cache_dir=tmp_path / "cache")
    assert Path(path).read_bytes() == weights


def _pushed_over_lfs(hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch, weights: bytes) -> str:
    """A new repo holding ``weights`` as w.safetensors, uploaded with hf_xet off (plain LFS)."""
    api, repo = api_for(hub), unique_repo("over-lfs")
    api.create_repo(repo)
    with monkeypatch.context() as patch:
        patch.setattr(constants, "HF_HUB_DISABLE_XET", True)
        api.create_commit(repo, [CommitOperationAdd("w.safetensors", weights)], commit_message="w")
    return repo


def test_a_file_uploaded_over_lfs_gets_the_xet_hash_of_its_bytes(
    hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Hub converts LFS uploads to Xet, so paths-info gives every LFS file a ``xetHash``
    (hf_api.py 719 in huggingface_hub 2.4.0 reads it): the hash an Xet upload of the same bytes
    registers. A tree listing does not compute it, so a listing after a push hashes nothing."""
    api, weights = api_for(hub), os.urandom(300_000)
    repo = _pushed_over_lfs(hub, monkeypatch, weights)
    listed = [e for e in api.list_repo_tree(repo) if e.path == "w.safetensors"]
    assert isinstance(listed[0], RepoFile) and listed[0].lfs is not None and listed[0].xet_hash is None
    [lfs_info] = api.get_paths_info(repo, ["w.safetensors"])
    assert isinstance(lfs_info, RepoFile) and lfs_info.xet_hash is not None
    listed = [e for e in api.list_repo_tree(repo) if e.path == "w.safetensors"]
    assert isinstance(listed[0], RepoFile) and listed[0].xet_hash == lfs_info.xet_hash
    twin = unique_repo("over-xet")
    api.create_repo(twin)
    api.create_commit(twin, [CommitOperationAdd("w.safetensors", weights)], commit_message="w")
    [xet_info] = api.get_paths_info(twin, ["w.safetensors"])
    assert isinstance(xet_info, RepoFile)
    assert hub.xet.file_record(lfs_info.xet_hash) is not None  # the Xet upload registered that hash
    assert xet_info.xet_hash == lfs_info.xet_hash


@pytest.mark.parametrize("verb", ["copy_files", "hf cp"])
@pytest.mark.parametrize("transport", ["lfs", "xet"])
def test_a_file_uploaded_over_lfs_copies_to_another_repo(
    hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: str, verb: str
) -> None:
    """``copy_files`` refuses an LFS source without ``xetHash`` ("file has no xet hash", hf_api.py
    5551-5555 in huggingface_hub 2.4.0), then asks the source's /lfs-files/duplicate for the target;
    ``hf cp hf://A hf://B`` is ``copy_files`` (cli/_cp.py 120-123)."""
    api, weights = api_for(hub), os.urandom(300_000)
    source, target = _pushed_over_lfs(hub, monkeypatch, weights), unique_repo("copy")
    api.create_repo(target)
    urls = (f"hf://{source}/w.safetensors", f"hf://{target}/w.safetensors")
    if verb == "copy_files":
        monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", transport == "lfs")
        api.copy_files(*urls)
    else:
        env = hf_env(hub, tmp_path / "hf-home") | {"HF_TOKEN": hub.owner_token}
        env["HF_HUB_DISABLE_XET"] = "1" if transport == "lfs" else "0"
        done = run_program(["hf", "cp", *urls], env=env)
        assert done.returncode == 0, done.stderr
    path = api.hf_hub_download(target, "w.safetensors", cache_dir=tmp_path / "cache")
    assert Path(path).read_bytes() == weights


@pytest.mark.parametrize("transport", ["lfs", "xet"])
def test_large_files_redirect_to_the_storage_origin(
    hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    """HEAD on an LFS/Xet file is 302 + Location, and the client reads the metadata off that first
    answer (file_download.py get_hf_file_metadata) without following it to another origin."""
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", transport == "lfs")
    api, repo = api_for(hub), unique_repo(f"redirect-{transport}")
    weights = os.urandom(300_000)
    api.create_repo(repo)
    commit = api.create_commit(
        repo,
        [CommitOperationAdd("w.safetensors", weights), CommitOperationAdd("config.json", b"{}\n")],
        commit_message="w",
    ).oid
    sha = hashlib.sha256(weights).hexdigest()
    url = hf_hub_url(repo, "w.safetensors", endpoint=hub.url)
    status, headers = head(url)
    assert status == 302 and headers["content-length"] == "0"
    assert headers["location"].startswith(f"{hub.cdn_url}/{sha}/w.safetensors?") and hub.cdn_url != hub.url
    assert headers["x-repo-commit"] == commit and headers["x-linked-etag"] == f'"{sha}"'
    assert headers["x-linked-size"] == str(len(weights))
    assert ("x-xet-hash" in headers) == (transport == "xet")
    assert head(hf_hub_url(repo, "config.json", endpoint=hub.url))[0] == 200  # a regular file: no redirect
    hub.requests.clear()
    meta = get_hf_file_metadata(url, token=hub.owner_token)
    assert (meta.commit_hash, meta.etag, meta.size) == (commit, sha, len(weights))
    assert meta.location.startswith(f"{hub.cdn_url}/{sha}/")
    assert [(r.route, r.status) for r in hub.requests.records] == [("resolve", 302)]  # not followed
    hub.requests.clear()
    path = hf_hub_download(repo, "w.safetensors", endpoint=hub.url, token=hub.owner_token, cache_dir=tmp_path)
    assert Path(path).read_bytes() == weights
    if transport == "lfs":  # the bytes came from the storage origin, none from resolve
        assert hub.requests.bytes_out("cdn") == len(weights) and hub.requests.bytes_out("resolve") == 0
    else:  # hf_xet reconstructs from the CAS and never GETs the Location
        assert hub.requests.count("cdn") == 0 and hub.requests.count("xet_reconstruction") >= 1


def test_storage_urls_are_signed_expiring_and_need_no_token(tmp_path: Path, lfs_only: None) -> None:
    """The client sends no token to the storage origin (file_download.py drops ``authorization``
    off the Hub's origin): the signed URL is the credential, for that object, for an hour."""
    with LoopbackHub(tmp_path / "hub", tokens={"hf_reader": "read"}, allow_anonymous=False) as hub:
        api, repo = api_for(hub), "acme/private-weights"
        weights = os.urandom(70_000)
        api.create_repo(repo, private=True)
        api.create_commit(repo, [CommitOperationAdd("w.gguf", weights)], commit_message="w")
        url = hf_hub_url(repo, "w.gguf", endpoint=hub.url)
        assert head(url)[0] == 404  # no token: a private repo does not exist, and no Location is given out
        status, headers = head(url, {"Authorization": f"Bearer {hub.owner_token}"})
        location = headers["location"]
        assert status == 302 and location.startswith(hub.cdn_url)
        assert raw_request(location, headers={"Range": "bytes=5-9"})[::2] == (206, weights[5:10])
        hub.faults.echo_headers(route="cdn", status=403, times=1)
        with pytest.raises(HfHubHTTPError) as caught:  # the client's own GET, its headers echoed back
            hf_hub_download(repo, "w.gguf", endpoint=hub.url, token=hub.owner_token, cache_dir=tmp_path / "c")
        assert "request refused, headers were" in str(caught.value)
        assert hub.owner_token not in str(caught.value) and "authorization" not in str(caught.value).lower()
        tampered = location.replace("size=70000", "size=70001")
        assert raw_request(tampered)[0] == 403
        owner = {"Authorization": f"Bearer {hub.owner_token}"}  # even to its owner (without: 401)
        assert (
            raw_request(location.replace(hub.cdn_url, hub.url), headers=owner)[0] == 404
        )  # not on the API origin
        assert raw_request(f"{hub.cdn_url}/api/models/{repo}")[0] == 404  # nor the API on the storage one
        hub.cdn_ttl = -1
        expired = head(url, {"Authorization": f"Bearer {hub.owner_token}"})[1]["location"]
        assert raw_request(expired)[0] == 403
        assert hub.server_errors == []
