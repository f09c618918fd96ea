"""Request bodies a hostile client sends the loopback Hub, on every route that reads one.

Each case takes a route's valid body and breaks it one way: a drawn value at a drawn place (a
string where an object belongs, a number of 5,000 digits, ``false`` for a list), the whole body
replaced by a drawn value or by raw JSON no ``json.dumps`` writes (nesting 100,000 deep, lone
surrogates: ``tests/fuzz/values.py``), or a hostile card for validate-yaml (an alias bomb, deep
front matter, ``eval_results: false``). The server must answer it, below 500 (the client's
error is 4xx, never an internal one), in at most ``MAX_ANSWER`` bytes, with no server error kept.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hubrelease_loopback import LoopbackHub
from tests.factories.cards import HOSTILE_FRONT_MATTER
from tests.factories.hub import api_for, raw_request, unique_repo
from tests.fuzz.harness import fuzz
from tests.fuzz.values import fragments, values

MAX_ANSWER = 1 << 20
"""Largest answer to one broken body: an error line, or a small listing."""


@dataclass(frozen=True)
class Target:
    """The repo the cases write to, and a Xet write token for it."""

    hub: LoopbackHub
    repo: str
    xet_token: str


@pytest.fixture(scope="module")
def target(loopback_hub: LoopbackHub) -> Target:
    api, repo = api_for(loopback_hub), unique_repo("fuzz-bodies")
    api.create_repo(repo)
    api.create_discussion(repo, "first")
    url = f"{loopback_hub.url}/api/models/{repo}/xet-write-token/main"
    _, _, text = raw_request(url, headers={"Authorization": f"Bearer {loopback_hub.owner_token}"})
    return Target(loopback_hub, repo, json.loads(text)["accessToken"])


# Route name -> (method, path under the Hub's URL, a valid body). "{repo}" is the target repo.
ROUTES: dict[str, tuple[str, str, Any]] = {
    "repo_create": (
        "POST",
        "/api/repos/create",
        {"name": "fuzz-made", "organization": "acme", "type": "model"},
    ),
    "repo_delete": ("DELETE", "/api/repos/delete", {"name": "fuzz-none", "organization": "acme"}),
    "repo_move": ("POST", "/api/repos/move", {"fromRepo": "acme/fuzz-none", "toRepo": "acme/fuzz-x"}),
    "settings": ("PUT", "/api/models/{repo}/settings", {"private": False, "gated": False}),
    "branch": ("POST", "/api/models/{repo}/branch/fuzz", {"startingPoint": "main"}),
    "tag": ("POST", "/api/models/{repo}/tag/main", {"tag": "fuzz", "message": "m"}),
    "discussions": ("POST", "/api/models/{repo}/discussions", {"title": "t", "description": "d"}),
    "discussion_comment": ("POST", "/api/models/{repo}/discussions/1/comment", {"comment": "c"}),
    "discussion_status": ("POST", "/api/models/{repo}/discussions/1/status", {"status": "open"}),
    "super_squash": ("POST", "/api/models/{repo}/super-squash/main", {"message": "m"}),
    "preupload": (
        "POST",
        "/api/models/{repo}/preupload/main",
        {"files": [{"path": "a.bin", "sample": "", "size": 3}], "gitIgnore": ""},
    ),
    "lfs_duplicate": (
        "POST",
        "/api/models/{repo}/lfs-files/duplicate",
        {"target": {"type": "model", "name": "{repo}"}, "files": [{"sha256": "0" * 64}]},
    ),
    "validate_yaml": (
        "POST",
        "/api/validate-yaml",
        {"content": "---\nlicense: mit\n---\n", "repoType": "model"},
    ),
    "lfs_batch": (
        "POST",
        "/{repo}.git/info/lfs/objects/batch",
        {"operation": "upload", "transfers": ["basic"], "objects": [{"oid": "0" * 64, "size": 3}]},
    ),
    "xet_xorb_grant": ("POST", "/__xet/v1/xorb-grants/default/" + "0" * 64, {"length": 10}),
    "commit": (
        "POST",
        "/api/models/{repo}/commit/main",
        [
            {"key": "header", "value": {"summary": "fuzz"}},
            {"key": "file", "value": {"path": "f.txt", "content": "eA==", "encoding": "base64"}},
        ],
    ),
}


def _filled(data: Any, repo: str) -> Any:
    return json.loads(json.dumps(data).replace("{repo}", repo))


def _put(body: Any, path: tuple[str, ...], value: Any) -> Any:
    """``body`` with ``value`` at ``path`` (a list is entered at its first item), or as the whole body."""
    if not path:
        return value
    if isinstance(body, list):
        return [_put(body[0] if body else {}, path, value), *body[1:]]
    if not isinstance(body, dict):
        body = {}
    return {**body, path[0]: _put(body.get(path[0], {}), path[1:], value)}


def _encode(route: str, body: Any) -> bytes:
    if route == "commit" and isinstance(body, list):
        return b"".join(json.dumps(line).encode() + b"\n" for line in body)
    return json.dumps(body).encode()


broken = st.one_of(
    st.tuples(
        st.just("set"),
        st.lists(
            st.sampled_from(["value", "files", "target", "path", "name", "size", "content"]),
            min_size=1,
            max_size=3,
        ),
        values,
    ),
    st.tuples(st.just("whole"), st.just(()), values),
    st.tuples(st.just("raw"), st.just(()), fragments),
)


def _send(target: Target, route: str, payload: bytes) -> tuple[int, bytes]:
    method, path, _ = ROUTES[route]
    url = target.hub.url + path.replace("{repo}", target.repo)
    token = target.xet_token if route.startswith("xet_") else target.hub.owner_token
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    status, _, answer = raw_request(url, method, payload, headers)
    return status, answer


def _check(target: Target, route: str, payload: bytes) -> None:
    target.hub.server_errors.clear()
    status, answer = _send(target, route, payload)
    where = f"{route}: {payload[:200]!r} -> {status} {answer[:300]!r}"
    assert status < 500, where
    assert len(answer) <= MAX_ANSWER, where
    assert target.hub.server_errors == [], where


@fuzz(60)
@given(route=st.sampled_from(sorted(ROUTES)), change=broken)
def test_broken_bodies_are_client_errors(target: Target, route: str, change: tuple[str, Any, Any]) -> None:
    how, path, value = change
    body = _filled(ROUTES[route][2], target.repo)
    if how == "set":
        payload = _encode(route, _put(body, tuple(path), value))
    elif how == "whole":
        payload = json.dumps(value).encode()
    else:
        payload = str(value).encode("utf-8", "surrogatepass")
    _check(target, route, payload)


ODD_VALUES: tuple[Any, ...] = (None, False, "text", -1, 10**30, [], {}, [1], 1.5)
"""One of each JSON type and the sizes no field takes (10**30 once hung an LFS batch building its URLs)."""


def _fields(body: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every key path of a body (a list's first item stands for all)."""
    if isinstance(body, list):
        yield from _fields(body[0], path) if body else ()
    elif isinstance(body, dict):
        for key, value in body.items():
            yield (*path, key)
            yield from _fields(value, (*path, key))


@pytest.mark.parametrize("route", sorted(ROUTES))
def test_every_field_takes_a_value_of_every_type(target: Target, route: str) -> None:
    """The drawn cases above, made exhaustive where it is cheap: each field of the route's body set to
    each of ``ODD_VALUES`` in turn (a list of files that is ``null`` was a 500)."""
    body = _filled(ROUTES[route][2], target.repo)
    for path in _fields(body):
        for value in ODD_VALUES:
            _check(target, route, _encode(route, _put(body, path, value)))


@pytest.mark.parametrize("card", sorted(HOSTILE_FRONT_MATTER))
def test_hostile_cards_are_refused_in_a_line(target: Target, card: str) -> None:
    content = HOSTILE_FRONT_MATTER[card]
    _check(target, "validate_yaml", json.dumps({"content": content}).encode())
    line = {
        "key": "file",
        "value": {"path": "README.md", "content": base64.b64encode(content.encode()).decode()},
    }
    commit = [{"key": "header", "value": {"summary": card}}, line]
    _check(target, "commit", _encode("commit", commit))
    status, _, answer = raw_request(f"{target.hub.url}/api/models/{target.repo}")
    assert status == 200 and len(answer) <= MAX_ANSWER
    assert raw_request(f"{target.hub.url}/{target.repo}")[0] == 200  # the repo page renders it
    assert target.hub.server_errors == []
