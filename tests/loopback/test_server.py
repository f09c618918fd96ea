"""The loopback Hub's plain git-LFS path, driven by the real huggingface_hub client (HF_HUB_DISABLE_XET)."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
from pathlib import Path
from urllib.parse import quote

import httpx2
import pytest
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, RepoFile
from huggingface_hub.errors import (
    HfHubHTTPError,
    RemoteEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from hubrelease_loopback import LoopbackHub, RepoKey
from hubrelease_loopback.lfs import upload_href
from tests.factories.cli import run_program
from tests.factories.hub import api_for, head, hf_env, raw_request, unique_repo
from tests.factories.waiting import CEILING_S

BIG = os.urandom(300_000)  # above the test server's multipart threshold: 5 parts of 64 kB
SMALL_LFS = os.urandom(5_000)
pytestmark = pytest.mark.usefixtures("lfs_only")  # the Xet path has its own tests (test_xet.py)


def _push_basic(hub: LoopbackHub, repo_id: str, repo_type: str = "model") -> str:
    api = api_for(hub)
    api.create_repo(repo_id, repo_type=repo_type)
    head = api.repo_info(repo_id, repo_type=repo_type).sha
    assert head is not None
    ops = [
        CommitOperationAdd("config.json", b'{"a": 1}\n'),
        CommitOperationAdd("weights/model.safetensors", BIG),
        CommitOperationAdd("weights/small.gguf", SMALL_LFS),
        CommitOperationAdd("README.md", b"---\nlicense: mit\n---\n# card\n"),
    ]
    return api.create_commit(
        repo_id, ops, commit_message="release", parent_commit=head, repo_type=repo_type
    ).oid


def _empty_repo(hub: LoopbackHub) -> tuple[HfApi, str, str | None]:
    """A new repo holding only the Hub's initial commit: (api, repo id, head)."""
    repo = unique_repo()
    api = api_for(hub)
    api.create_repo(repo)
    return api, repo, api.repo_info(repo).sha


def test_commit_lands_with_lfs_multipart_and_metadata(hub: LoopbackHub) -> None:
    repo = unique_repo()
    oid = _push_basic(hub, repo)
    api = api_for(hub)
    assert hub.requests.count("lfs_part") == 5
    assert hub.requests.count("lfs_complete") == 1
    info = api.model_info(repo, files_metadata=True)
    assert info.sha == oid
    siblings = {s.rfilename: s for s in info.siblings or []}
    assert set(siblings) == {
        ".gitattributes",
        "README.md",
        "config.json",
        "weights/model.safetensors",
        "weights/small.gguf",
    }
    big = siblings["weights/model.safetensors"]
    assert big.lfs is not None and big.lfs.sha256 == hashlib.sha256(BIG).hexdigest() and big.size == len(BIG)
    paths = api.get_paths_info(repo, ["config.json", "weights/small.gguf", "weights", "missing.txt"])
    assert [p.path for p in paths] == ["config.json", "weights/small.gguf", "weights"]
    assert (
        isinstance(paths[0], RepoFile)
        and paths[0].blob_id == hashlib.sha1(b'blob 9\x00{"a": 1}\n').hexdigest()
    )


def test_tree_is_paginated_with_link_header(hub: LoopbackHub) -> None:
    repo = unique_repo()
    _push_basic(hub, repo)
    entries = [e.path for e in api_for(hub).list_repo_tree(repo, recursive=True, expand=True)]
    assert entries == [
        ".gitattributes",
        "README.md",
        "config.json",
        "weights",
        "weights/model.safetensors",
        "weights/small.gguf",
    ]
    assert hub.requests.count("tree") == 2  # page size 4 on the test server
    with pytest.raises(RemoteEntryNotFoundError):
        list(api_for(hub).list_repo_tree(repo, path_in_repo="nope"))


def test_stale_parent_is_412_and_changes_nothing(hub: LoopbackHub) -> None:
    api, repo, first = _empty_repo(hub)
    assert first is not None
    api.create_commit(repo, [CommitOperationAdd("a.txt", b"a")], commit_message="a", parent_commit=first)
    second = api.repo_info(repo).sha
    with pytest.raises(HfHubHTTPError) as caught:
        api.create_commit(repo, [CommitOperationAdd("b.txt", b"b")], commit_message="b", parent_commit=first)
    assert caught.value.response.status_code == 412
    assert api.repo_info(repo).sha == second


def test_resolve_headers_and_range(hub: LoopbackHub) -> None:
    repo = unique_repo()
    oid = _push_basic(hub, repo)
    url = f"{hub.url}/{repo}/resolve/main/weights/small.gguf"
    status, headers = head(url)
    sha = hashlib.sha256(SMALL_LFS).hexdigest()
    assert status == 302 and headers["location"].startswith(f"{hub.cdn_url}/{sha}/small.gguf?")
    assert headers["x-repo-commit"] == oid
    assert headers["x-linked-etag"] == f'"{sha}"' and headers["etag"] == f'"{sha}"'
    assert headers["x-linked-size"] == str(len(SMALL_LFS))
    status, headers, body = raw_request(url, headers={"Range": "bytes=10-19"})  # across the redirect
    assert status == 206 and body == SMALL_LFS[10:20]
    assert headers["content-range"] == f"bytes 10-19/{len(SMALL_LFS)}"


def test_an_empty_file_is_served_and_its_connection_stays_usable(hub: LoopbackHub) -> None:
    """A 0-byte download used to raise in sendfile after its headers went out: the server dropped
    the kept-alive connection, and the client's next request on it got no response (a flake)."""
    import http.client

    api, repo, _ = _empty_repo(hub)
    api.upload_file(path_or_fileobj=b"", path_in_repo="empty.txt", repo_id=repo)
    connection = http.client.HTTPConnection("127.0.0.1", hub.port, timeout=CEILING_S)
    try:
        for _ in range(3):  # one connection, kept alive between the requests
            connection.request("GET", f"/{repo}/resolve/main/empty.txt")
            response = connection.getresponse()
            assert (response.status, response.read()) == (200, b"")
    finally:
        connection.close()
    assert hub.server_errors == []


def test_error_codes_map_to_client_exceptions(hub: LoopbackHub) -> None:
    repo = unique_repo()
    api = api_for(hub)
    api.create_repo(repo)
    with pytest.raises(RepositoryNotFoundError):
        api.model_info(unique_repo("missing"))
    with pytest.raises(RevisionNotFoundError):
        api.model_info(repo, revision="no-such-branch")
    with pytest.raises(RemoteEntryNotFoundError):
        api.get_hf_file_metadata(url=f"{hub.url}/{repo}/resolve/main/none.bin")
    status, headers, _ = raw_request(f"{hub.url}/api/models/{repo}/xet-write-token/no-such-branch")
    assert status == 404 and headers["x-error-code"] == "RevisionNotFound"
    status, headers, _ = raw_request(f"{hub.url}/api/models/{repo}/revision/nope")
    assert headers["x-error-code"] == "RevisionNotFound"


def test_branches_tags_and_pull_requests(hub: LoopbackHub) -> None:
    repo = unique_repo()
    oid = _push_basic(hub, repo)
    api = api_for(hub)
    api.create_tag(repo, tag="v1", tag_message="first")
    api.create_branch(repo, branch="dev")
    with pytest.raises(HfHubHTTPError) as caught:
        api.create_tag(repo, tag="v1")
    assert caught.value.response.status_code == 409
    pr = api.create_commit(
        repo, [CommitOperationAdd("pr.txt", b"pr")], commit_message="via pr", create_pr=True
    )
    assert pr.pr_num == 1 and pr.pr_revision == "refs/pr/1"
    discussion = api.create_pull_request(repo, title="second")
    assert discussion.git_reference == "refs/pr/2"
    api.create_commit(repo, [CommitOperationDelete("config.json")], commit_message="rm", revision="refs/pr/2")
    refs = api.list_repo_refs(repo, include_pull_requests=True)
    assert {b.name: b.target_commit for b in refs.branches} == {"main": oid, "dev": oid}
    assert [t.target_commit for t in refs.tags] == [oid]
    assert [p.ref for p in refs.pull_requests or []] == ["refs/pr/1", "refs/pr/2"]
    files = {f.rfilename for f in api.model_info(repo, revision="refs/pr/2").siblings or []}
    assert "config.json" not in files
    assert api.model_info(repo).sha == oid  # main untouched by PR commits


def test_corrupted_lfs_upload_is_rejected(hub: LoopbackHub) -> None:
    api, repo, head = _empty_repo(hub)
    hub.faults.inject("corrupt", method="PUT", path="^/__lfs/", times=10)
    data = os.urandom(2_000)
    with pytest.raises(RuntimeError) as caught:  # huggingface_hub wraps upload errors
        api.create_commit(repo, [CommitOperationAdd("x.gguf", data)], commit_message="x")
    cause = caught.value.__cause__
    assert isinstance(cause, HfHubHTTPError) and cause.response.status_code == 400
    assert not hub.store.has_lfs(hashlib.sha256(data).hexdigest(), len(data))
    assert api.repo_info(repo).sha == head


def test_lfs_put_with_wrong_bytes_is_rejected_directly(hub: LoopbackHub) -> None:
    claimed = hashlib.sha256(b"right").hexdigest()
    assert raw_request(f"{hub.url}/__lfs/{claimed}?size=5", "PUT", b"right")[0] == 403  # unsigned href
    _, repo, _ = _empty_repo(hub)
    status, _, body = raw_request(upload_href(hub, RepoKey("model", repo), claimed, 5), "PUT", b"wrong")
    assert status == 400 and b"do not match" in body
    assert not hub.store.has_lfs(claimed, 5)


def test_requests_cannot_reach_files_outside_the_root(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_bytes(b"outside the hub root\n")
    with LoopbackHub(tmp_path / "root") as hub:
        for body in (
            {"name": "../../../escaped", "organization": "x"},
            {"name": "n", "organization": ".."},
            {"name": "n", "type": "../../../evil"},
        ):
            status, _, text = raw_request(f"{hub.url}/api/repos/create", "POST", json.dumps(body).encode())
            assert status == 400, text
        api, repo = api_for(hub), "acme/safe"
        api.create_repo(repo)
        traversal = os.path.relpath(secret, tmp_path / "root" / "lfs" / "xx")
        lines = [
            {"key": "header", "value": {"summary": "leak"}},
            {"key": "lfsFile", "value": {"path": "leak.txt", "algo": "sha256", "oid": traversal, "size": 21}},
        ]
        payload = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
        status, _, text = raw_request(
            f"{hub.url}/api/models/{repo}/commit/main",
            "POST",
            payload,
            {"Content-Type": "application/x-ndjson"},
        )
        assert status == 400 and b"invalid LFS oid" in text
        assert api.file_exists(repo, "leak.txt") is False
        fake = "../" * 6 + "c" * 22  # 40 characters, like a commit id: root/repos/models/acme/safe/commits/..
        (tmp_path / f"{'c' * 22}.json").write_text(json.dumps({"date": "", "tree": {"x": {}}}))
        status, _, _ = raw_request(f"{hub.url}/api/models/{repo}/revision/{quote(fake, safe='')}")
        assert status == 404
        assert hub.server_errors == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{'c' * 22}.json", "root", "secret.txt"]


def test_malformed_requests_are_400_not_server_errors(hub: LoopbackHub) -> None:
    _, repo, _ = _empty_repo(hub)
    api, oid, upload = f"{hub.url}/api/models/{repo}", "a" * 64, "b" * 32
    bad = [
        (f"{api}/preupload/main", b'{"files": [{"path": "a"}]}', "invalid size: None"),
        (f"{api}/preupload/main", b'{"files": [5]}', "malformed preupload entry: 5"),
        (f"{api}/preupload/main", b"[1]", "the JSON body must be an object"),
        (f"{api}/commit/main", b"null", "malformed commit payload"),
        (f"{api}/paths-info/main", b"\xff\xfe", "the form body is not UTF-8"),
        (f"{hub.url}/api/repos/create", b"[]", "the JSON body must be an object"),
        (f"{api}/tag/main", b"[]", "the JSON body must be an object"),
        (
            f"{hub.url}/__lfs/{oid}/{upload}?size=3&repo=models%2F{repo.replace('/', '%2F')}"
            f"&sig={hub.access.sign(hub.store.tenant(RepoKey('model', repo)) + f'|{oid}:{upload}:3')}",
            b'{"oid": "%s", "parts": [{"partNumber": "x"}]}' % oid.encode(),
            "invalid partNumber: 'x'",
        ),
    ]
    for url, body, message in bad:
        status, _, text = raw_request(url, "POST", body)
        assert status == 400 and message in json.loads(text)["error"], (url, text)
    status, _, text = raw_request(f"{api}/tree/main?cursor=abc")
    assert status == 400 and json.loads(text)["error"] == "invalid cursor: 'abc'"
    status, _, text = raw_request(
        f"{hub.url}/{repo}/resolve/main/.gitattributes", headers={"Range": "bytes=x-"}
    )
    assert status == 200 and text.startswith(b"*.safetensors")  # an unparsable Range is ignored
    status, _, _ = raw_request(
        f"{hub.url}/{repo}/resolve/main/.gitattributes", headers={"Range": "bytes=5-2"}
    )
    assert status == 416
    with socket.create_connection(("127.0.0.1", hub.port), timeout=CEILING_S) as conn:
        conn.sendall(
            b"POST /api/validate-yaml HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
        )
        assert conn.makefile("rb").readline().startswith(b"HTTP/1.1 400")
    assert hub.server_errors == []


def test_dropped_commit_leaves_repo_unchanged(hub: LoopbackHub) -> None:
    api, repo, head = _empty_repo(hub)
    hub.faults.inject("drop", method="POST", path="/commit/", after_bytes=10)
    with pytest.raises(httpx2.TransportError):
        api.create_commit(repo, [CommitOperationAdd("a.txt", b"a")], commit_message="a")
    assert api.repo_info(repo).sha == head


def test_500_after_commit_landed(hub: LoopbackHub) -> None:
    api, repo, head = _empty_repo(hub)
    hub.faults.inject("after", method="POST", path="/commit/", status=500)
    with pytest.raises(HfHubHTTPError) as caught:
        api.create_commit(repo, [CommitOperationAdd("a.txt", b"a")], commit_message="a")
    assert caught.value.response.status_code == 500
    assert api.repo_info(repo).sha != head


def test_rate_limit_fault_sends_ratelimit_headers(hub: LoopbackHub) -> None:
    hub.faults.rate_limit(path="/api/models/", reset=7)
    status, headers, _ = raw_request(f"{hub.url}/api/models/acme/anything")
    assert status == 429
    assert headers["ratelimit"] == '"api";r=0;t=7' and headers["retry-after"] == "7"
    status, _, _ = raw_request(f"{hub.url}/api/models/acme/anything")
    assert status == 404  # the fault fired once


def test_validate_yaml(hub: LoopbackHub) -> None:
    good = json.dumps({"content": "---\nlicense: mit\n---\n", "repoType": "model"}).encode()
    bad = json.dumps({"content": "---\nlicense: [mit\n---\n", "repoType": "model"}).encode()
    headers = {"Content-Type": "application/json"}
    assert raw_request(f"{hub.url}/api/validate-yaml", "POST", good, headers)[0] == 200
    status, _, body = raw_request(f"{hub.url}/api/validate-yaml", "POST", bad, headers)
    assert status == 400 and json.loads(body)["errors"]


def test_store_survives_restart(hub: LoopbackHub, tmp_path: Path) -> None:
    with LoopbackHub(tmp_path / "root") as first:
        repo = unique_repo()
        oid = _push_basic(first, repo)
    with LoopbackHub(tmp_path / "root") as second:
        assert api_for(second).model_info(repo).sha == oid
        assert second.store.resolve(RepoKey("model", repo), "main") == oid


def test_snapshot_download_and_verify_repo_checksums(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    oid = _push_basic(hub, repo)
    api = api_for(hub)
    snapshot = Path(api.snapshot_download(repo, cache_dir=tmp_path / "hub"))
    assert (snapshot / "weights/model.safetensors").read_bytes() == BIG
    result = api.verify_repo_checksums(repo, cache_dir=tmp_path / "hub")
    assert result.revision == oid and result.checked_count == 5 and not result.mismatches
    (snapshot / "weights/small.gguf").resolve().write_bytes(b"\xff" + SMALL_LFS[1:])
    broken = api.verify_repo_checksums(repo, cache_dir=tmp_path / "hub")
    assert [m["path"] for m in broken.mismatches] == ["weights/small.gguf"]


def test_datasets_load_dataset_through_hf_endpoint(hub: LoopbackHub, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    repo = unique_repo("data")
    api = api_for(hub)
    api.create_repo(repo, repo_type="dataset")
    table = pa.table({"prompt": ["a", "b", "c"], "tokens": [1, 2, 3]})
    pq.write_table(table, tmp_path / "train.parquet")
    api.create_commit(
        repo,
        [CommitOperationAdd("data/train-00000-of-00001.parquet", tmp_path / "train.parquet")],
        commit_message="data",
        repo_type="dataset",
    )
    script = (
        "import datasets, json, sys\n"
        f"ds = datasets.load_dataset({repo!r}, split='train')\n"
        "print(json.dumps(ds.to_dict()))\n"
    )
    done = run_program(
        [sys.executable, "-c", script],
        env=hf_env(hub, tmp_path / "hf"),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "prompt": ["a", "b", "c"],
        "tokens": [1, 2, 3],
    }


def test_a_part_url_is_signed_for_the_object_size_and_takes_exactly_its_share(hub: LoopbackHub) -> None:
    oid, upload, size = hashlib.sha256(BIG).hexdigest(), "c" * 32, len(BIG)  # parts of 64,000 bytes
    sig = hub.access.sign(f"{oid}:{upload}:{size}")
    part = f"{hub.url}/__lfs/{oid}/{upload}/2"
    assert raw_request(f"{part}?size={size + 1}&sig={sig}", "PUT", BIG[64_000:128_000])[0] == 403
    status, _, text = raw_request(f"{part}?size={size}&sig={sig}", "PUT", BIG[64_000:128_001])
    assert status == 400 and b"part 2 must be 64000 bytes" in text
    status, headers, _ = raw_request(f"{part}?size={size}&sig={sig}", "PUT", BIG[64_000:128_000])
    assert status == 200 and len(headers["etag"].strip('"')) == 32
