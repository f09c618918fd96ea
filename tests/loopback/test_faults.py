"""The loopback Hub's switches for the real Hub's failure modes, seen through the real client."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable

import pytest
from huggingface_hub import CommitOperationAdd
from huggingface_hub.errors import HfHubHTTPError

from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.faults import COMMIT_IN_PROGRESS, METADATA_ROUTES
from tests.factories.hub import api_for, raw_request, unique_repo, upload_files
from tests.factories.waiting import CEILING_S

FILES = {f"f{i}.txt": f"file {i}\n".encode() for i in range(5)}


def test_truncated_siblings_leave_tree_and_paths_info_complete(hub: LoopbackHub) -> None:
    api, repo = api_for(hub), unique_repo()
    upload_files(api, repo, FILES)
    hub.faults.truncate_siblings(2)
    assert [s.rfilename for s in api.model_info(repo).siblings or []] == [".gitattributes", "f0.txt"]
    assert len([e.path for e in api.list_repo_tree(repo, recursive=True)]) == 6
    assert len(api.get_paths_info(repo, list(FILES))) == 5
    hub.faults.clear()
    assert len(api.model_info(repo).siblings or []) == 6


def test_rate_limit_on_every_metadata_route_and_not_on_commits(hub: LoopbackHub) -> None:
    api, repo = api_for(hub), unique_repo()
    upload_files(api, repo, FILES)
    base = f"{hub.url}/api/models/{repo}"
    hub.faults.rate_limit(route=METADATA_ROUTES, times=4, reset=3)
    for url, method, body in [
        (base, "GET", None),
        (f"{base}/revision/main", "GET", None),
        (f"{base}/paths-info/main", "POST", b"paths=f0.txt"),
        (f"{base}/tree/main", "GET", None),
    ]:
        status, headers, _ = raw_request(url, method, body)
        assert status == 429, url
        assert headers["ratelimit"] == '"api";r=0;t=3' and headers["retry-after"] == "3"
        assert headers["ratelimit-policy"].startswith('"fixed window"')
    hub.faults.rate_limit(route=METADATA_ROUTES, times=1)
    api.create_commit(repo, [CommitOperationAdd("g.txt", b"g")], commit_message="g")
    assert len(hub.faults.pending) == 1  # the commit and its preupload were not metadata reads


@pytest.mark.parametrize(
    ("arm", "status", "message"),
    [
        (lambda hub: hub.faults.commit_in_progress(), 409, COMMIT_IN_PROGRESS),
        (lambda hub: hub.faults.forbidden(), 403, "You don't have the rights"),
    ],
)
def test_commit_refusals_change_nothing(
    hub: LoopbackHub, arm: Callable[[LoopbackHub], object], status: int, message: str
) -> None:
    api, repo = api_for(hub), unique_repo()
    head = upload_files(api, repo, FILES)
    arm(hub)
    with pytest.raises(HfHubHTTPError) as caught:
        api.create_commit(repo, [CommitOperationAdd("g.txt", b"g")], commit_message="g")
    assert caught.value.response.status_code == status
    assert message in str(caught.value)
    assert api.repo_info(repo).sha == head


def test_validate_yaml_refusals(hub: LoopbackHub) -> None:
    api, repo = api_for(hub), unique_repo()
    head = upload_files(api, repo, FILES)
    card = [CommitOperationAdd("README.md", b"---\nlicense: mit\n---\n# card\n")]
    hub.faults.yaml_refusal('"license" must be one of the Hub licenses')
    with pytest.raises(ValueError, match=r"Invalid metadata in README\.md") as caught:
        api.create_commit(repo, card, commit_message="card")
    assert "must be one of the Hub licenses" in str(caught.value)
    hub.faults.bad_gateway()
    status, headers, body = raw_request(f"{hub.url}/api/validate-yaml", "POST", b"{}")
    assert status == 502 and headers["content-type"].startswith("text/html")
    assert body.startswith(b"<!DOCTYPE html>")
    assert api.repo_info(repo).sha == head


def test_echo_headers_puts_the_authorization_header_in_the_error(hub: LoopbackHub) -> None:
    hub.faults.echo_headers(route="repo_info", status=500)
    canary = "hf_CanaryTokenForEchoTestXXXXXXXXXXXX"
    status, headers, body = raw_request(
        f"{hub.url}/api/models/acme/anything", headers={"Authorization": f"Bearer {canary}"}
    )
    assert status == 500 and canary in json.loads(body)["error"] and canary in headers["x-error-message"]


def test_create_pr_opens_from_parent_commit_without_412(hub: LoopbackHub) -> None:
    api, repo = api_for(hub), unique_repo()
    first = upload_files(api, repo, {"a.txt": b"a"})
    second = api.create_commit(repo, [CommitOperationAdd("b.txt", b"b")], commit_message="b").oid
    pr = api.create_commit(
        repo,
        [CommitOperationAdd("c.txt", b"c")],
        commit_message="c",
        create_pr=True,
        parent_commit=first[:7],
    )
    assert pr.pr_revision == "refs/pr/1"
    files = {s.rfilename for s in api.model_info(repo, revision="refs/pr/1").siblings or []}
    assert files == {".gitattributes", "a.txt", "c.txt"}
    assert api.repo_info(repo).sha == second
    history = [c.commit_id for c in api.list_repo_commits(repo, revision="refs/pr/1")]
    assert history[1] == first
    with pytest.raises(HfHubHTTPError) as caught:  # without create_pr a stale parent is still 412
        api.create_commit(repo, [CommitOperationAdd("d.txt", b"d")], commit_message="d", parent_commit=first)
    assert caught.value.response.status_code == 412


def test_no_control_characters_reach_response_headers(hub: LoopbackHub) -> None:
    repo = unique_repo()
    api_for(hub).create_repo(repo)
    with socket.create_connection(("127.0.0.1", hub.port), timeout=CEILING_S) as conn:
        conn.sendall(
            f"GET /{repo}/resolve/main/a%0Db%0Ax HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode()
        )
        head = conn.makefile("rb").read(4096).split(b"\r\n\r\n")[0]
    assert head.startswith(b"HTTP/1.1 404")
    for line in head.split(b"\r\n"):
        assert b"\r" not in line and b"\n" not in line
    assert b"X-Error-Message: Entry not found: a b x" in head


def test_a_fault_with_skip_lets_that_many_requests_through_then_fires_its_action(hub: LoopbackHub) -> None:
    api, repo = api_for(hub), unique_repo()
    upload_files(api, repo, FILES)
    url, auth = f"{hub.url}/api/models/{repo}", {"authorization": f"Bearer {hub.owner_token}"}
    fired: list[int] = []
    hub.faults.inject("status", route="repo_info", status=503, skip=2, action=lambda: fired.append(1))
    assert [raw_request(url, headers=auth)[0] for _ in range(4)] == [200, 200, 503, 200]
    assert fired == [1]  # once, as the third request came in
