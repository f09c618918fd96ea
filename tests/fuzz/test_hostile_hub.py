"""Answers made up by a hostile server, through every command that reads the Hub.

Each case puts ``tests.factories.hostile_hub`` in front of the session's loopback Hub and forges one
route's answers (``Forged``): the real answer or a drawn body, with a drawn status, drawn headers
(lengths, ranges, waits, links, encodings, redirects, commit ids: the values the campaign broke the
client with among them), a cut body and a lying ``Content-Length``. The read command that uses the
route must end in 0, 1, 2 or 4 (the server's fault), never 3 or a traceback, an exit 2 or 4 in one
``error:`` line, within the harness's bounds and with a bounded number of requests. Remote reads get
a 2 s deadline and 1 s per read (``hub.bounds``), so a drawn stall ends at the deadline; cases are
bounded by count (``fuzz``), nothing asserts how long one took.
"""

from __future__ import annotations

import os
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hubrelease.hub.bounds import DEADLINE_ENV, TIMEOUT_ENV
from hubrelease_loopback import LoopbackHub
from tests.factories.hostile_hub import ROUTES, Forged, HostileHub, Published, publish, read_commands
from tests.factories.hub import HF_BACKOFF_SLEEP
from tests.fuzz.harness import fuzz, run_case

HEADERS = (
    "Content-Range",
    "Content-Encoding",
    "Content-Type",
    "Retry-After",
    "RateLimit",
    "RateLimit-Policy",
    "Link",
    "Location",
    "X-Repo-Commit",
    "X-Linked-Size",
    "X-Linked-Etag",
    "ETag",
    "X-Error-Code",
    "X-Error-Message",
)
NASTY_VALUES = (
    "9" * 5000,
    "bytes 0-0/" + "9" * 5000,
    "bytes 0-99/100",
    "bytes */0",
    "bytes 5-2/1",
    "gzip",
    "br",
    "deflate",
    "identity, gzip",
    "100000",
    "0",
    "-1",
    '<{self}>; rel="next"',
    "{self}",
    "http://127.0.0.1:1/nothing",
    "0" * 40,
    "",
    "x" * 5000,
    '"limit";r=0;t=100000',
    "application/json",
)
BODIES = (
    b"",
    b"{}",
    b"[]",
    b"null",
    b'{"error": "nope"}',
    b"[" * 100_000,
    b'{"a":' * 5000,
    b"\x1f\x8b\x08\x00garbage",
    b"GGUF\x03\x00\x00\x00" + b"\xff" * 16,
    b'[{"type": "file", "path": "model.gguf", "size": -1, "oid": "x"}]',
    b'[{"type": "directory", "path": "../../etc"}]',
)
STATUSES = (200, 206, 301, 302, 307, 308, 400, 401, 403, 404, 416, 429, 500, 502, 503)

header_values = st.one_of(
    st.sampled_from(NASTY_VALUES), st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=30)
)
forged_answers = st.builds(
    Forged,
    real=st.booleans(),
    status=st.one_of(st.none(), st.sampled_from(STATUSES), st.integers(100, 599)),
    headers=st.lists(st.tuples(st.sampled_from(HEADERS), header_values), max_size=4).map(tuple),
    body=st.one_of(st.sampled_from(BODIES), st.binary(max_size=64)),
    cut=st.one_of(st.none(), st.integers(0, 4096)),
    declared=st.one_of(st.none(), st.sampled_from(["0", "1", "99999999999", "9" * 5000, "-5", "abc"])),
)
route_commands = st.sampled_from(
    [(route, index) for route in ROUTES for index in range(3) if route in ("resolve", "cdn", "repo_info")]
    + [("tree", 0), ("tree", 1), ("paths_info", 0)]
)
MAX_REQUESTS = 60
"""Requests one case may send: a few per file read, huggingface_hub's retries of a 5xx included."""


@pytest.fixture(scope="module")
def published(loopback_hub: LoopbackHub, tmp_path_factory: pytest.TempPathFactory) -> Published:
    return publish(loopback_hub, tmp_path_factory.mktemp("hostile"))


@fuzz(12)
@given(forged=forged_answers, where=route_commands)
def test_forged_answers(
    loopback_hub: LoopbackHub, published: Published, forged: Forged, where: tuple[str, int]
) -> None:
    route, index = where
    command = read_commands(published, route)[index]
    published.out.unlink(missing_ok=True)
    bounds = {DEADLINE_ENV: "2", TIMEOUT_ENV: "1"}
    with (
        mock.patch.dict(os.environ, bounds),
        mock.patch(HF_BACKOFF_SLEEP, lambda _: None),
        mock.patch("hubrelease.hub.client.sleep", lambda _: None),
        HostileHub(loopback_hub, "forged", route=route, forged=forged) as hostile,
    ):
        run_case([*command, "--endpoint", hostile.url], codes=(0, 1, 2, 4))
    assert sum(hostile.requests.values()) <= MAX_REQUESTS, (command, forged, hostile.requests)


def test_a_429_without_retry_after_is_one_line_counting_the_waits(
    loopback_hub: LoopbackHub, published: Published
) -> None:
    """Found by this tier: ``verify --remote`` printed three "waiting 30s" warnings before its error line."""
    waits: list[float] = []
    with (
        mock.patch.dict(os.environ, {DEADLINE_ENV: "2", TIMEOUT_ENV: "1"}),
        mock.patch("hubrelease.hub.client.sleep", waits.append),
        HostileHub(
            loopback_hub, "forged", route="repo_info", forged=Forged(real=False, status=429)
        ) as hostile,
    ):
        result = run_case(
            ["verify", str(published.manifest), "--remote", "--endpoint", hostile.url], codes=(4,)
        )
    assert waits == [30, 30, 30]  # huggingface_hub's default when a 429 names no wait
    assert "(rate limited 4 times: waited 90s, the Hub asks for 30s more)" in result.stderr
