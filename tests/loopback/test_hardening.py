"""The loopback Hub as a rehearsal server users run: hostile paths, symlinks, big or stalled bodies."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import httpx2
import pytest
from huggingface_hub import CommitOperationAdd

from hubrelease_loopback import LoopbackHub, RepoKey, connections
from hubrelease_loopback.connections import Body, ConnReader
from hubrelease_loopback.faults import RequestLog, RequestRecord
from hubrelease_loopback.lfs import upload_href
from hubrelease_loopback.server import MAX_ERRORS
from hubrelease_loopback.store import StoreError
from tests.factories.hub import api_for, raw_request, unique_repo
from tests.factories.waiting import CEILING_S, wait_until


def _ndjson(*lines: dict[str, object]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


@pytest.mark.parametrize("path", ["../../x", "/abs", "a/\x00b", "", ".git/config", "a/.git/x", "a//b", "./a"])
def test_commit_paths_the_hub_refuses_are_400(hub: LoopbackHub, path: str) -> None:
    api, repo = api_for(hub), unique_repo()
    api.create_repo(repo)
    head = api.repo_info(repo).sha
    body = _ndjson(
        {"key": "header", "value": {"summary": "x"}},
        {"key": "file", "value": {"path": path, "content": "eA==", "encoding": "base64"}},
    )
    url = f"{hub.url}/api/models/{repo}/commit/main"
    status, _, text = raw_request(url, "POST", body, {"Content-Type": "application/x-ndjson"})
    assert status == 400 and "invalid path in commit" in json.loads(text)["error"]
    assert api.repo_info(repo).sha == head


def test_symlinks_inside_the_root_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    data = os.urandom(3_000)
    sha = hashlib.sha256(data).hexdigest()
    with LoopbackHub(tmp_path / "root") as hub:
        api = api_for(hub)
        api.create_repo("acme/real")
        (tmp_path / "root" / "repos" / "models" / "acme" / "link").symlink_to(
            tmp_path / "root" / "repos" / "models" / "acme" / "real"
        )
        assert raw_request(f"{hub.url}/api/models/acme/link")[0] == 403  # read through a symlink
        (tmp_path / "root" / "lfs" / sha[:2]).symlink_to(outside)
        href = upload_href(hub, RepoKey("model", "acme/real"), sha, len(data))
        status, _, _ = raw_request(href, "PUT", data)
        assert status == 403  # write through a symlink
        assert list(outside.iterdir()) == []
        assert hub.server_errors == []


def test_stale_temp_files_are_removed_at_start(tmp_path: Path) -> None:
    (tmp_path / "root" / "tmp" / "multipart-x").mkdir(parents=True)
    stale = [tmp_path / "root" / "tmp" / "lfs.abc", tmp_path / "root" / "tmp" / "multipart-x"]
    stale[0].write_bytes(b"partial")
    fresh = tmp_path / "root" / "tmp" / "xorb.live"
    fresh.write_bytes(b"another server is writing this")
    for path in stale:
        os.utime(path, (time.time() - 86_400, time.time() - 86_400))
    LoopbackHub(tmp_path / "root").stop()
    assert sorted(p.name for p in (tmp_path / "root" / "tmp").iterdir()) == ["xorb.live"]


def test_bodies_over_the_cap_are_413_and_commits_are_streamed(tmp_path: Path) -> None:
    with LoopbackHub(tmp_path / "root", max_body=4_000) as hub:
        status, _, text = raw_request(f"{hub.url}/api/validate-yaml", "POST", b"{" + b" " * 10_000 + b"}")
        assert status == 413 and b"larger than 4000 bytes" in text
        api = api_for(hub)
        api.create_repo("acme/big")
        readme = b"# card\n" + b"x" * 20_000  # a regular file: its commit body is over the cap
        api.create_commit("acme/big", [CommitOperationAdd("notes.md", readme)], commit_message="big")
        assert api.hf_hub_download("acme/big", "notes.md", cache_dir=tmp_path / "c") is not None
        assert hub.server_errors == []


def test_malformed_content_length_is_400(hub: LoopbackHub) -> None:
    with socket.create_connection(("127.0.0.1", hub.port), timeout=CEILING_S) as conn:
        conn.sendall(b"POST /api/validate-yaml HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n")
        assert conn.makefile("rb").readline().startswith(b"HTTP/1.1 400")


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"PUT /__lfs/"
        + b"a" * 64
        + b"?size=100 HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789",
        b"POST /api/validate-yaml HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n100\r\nshort",
        b"GET /api/models/acme/x HTTP/1.1\r\nHost: x\r\n",  # headers never finished
    ],
)
def test_stalled_requests_are_cut_off(tmp_path: Path, request_bytes: bytes) -> None:
    with LoopbackHub(tmp_path / "root", request_timeout=0.3, idle_timeout=0.3, header_timeout=0.3) as hub:
        with socket.create_connection(("127.0.0.1", hub.port), timeout=CEILING_S) as conn:
            conn.sendall(request_bytes)
            while conn.recv(4096):  # the server answers or not, then closes: recv returns b""
                pass
        assert hub.server_errors == []


def test_worker_threads_are_bounded(tmp_path: Path) -> None:
    def serving() -> int:
        return sum(
            1 for t in threading.enumerate() if "process_request" in t.name or "loopback-hub_" in t.name
        )

    before = serving()
    with LoopbackHub(tmp_path / "root", max_workers=3) as hub:  # idle ones give way to queued ones
        idle = [socket.create_connection(("127.0.0.1", hub.port), timeout=CEILING_S) for _ in range(12)]
        try:
            assert wait_until(
                lambda: hub._httpd.admission.open_connections == 12
            )  # the server holds them all
            assert serving() - before <= 3
            assert raw_request(f"{hub.url}/api/models/acme/none")[0] == 404  # served: idle ones gave way
        finally:
            for conn in idle:
                conn.close()


def test_accepted_connections_disable_nagle(tmp_path: Path) -> None:
    hub = LoopbackHub(tmp_path / "root")
    try:
        with socket.create_connection(("127.0.0.1", hub.port), timeout=CEILING_S):
            accepted, _ = hub._httpd.get_request()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        hub.stop()


def test_error_and_request_records_are_capped(tmp_path: Path) -> None:
    hub = LoopbackHub(tmp_path / "root")
    try:
        for n in range(MAX_ERRORS + 50):
            hub.note_error(RuntimeError(str(n)))
        assert len(hub.server_errors) == MAX_ERRORS
    finally:
        hub.stop()
    log = RequestLog(limit=3)
    for n in range(5):
        log.add(RequestRecord("GET", f"/{n}", "x", 200, 0, 0))
    assert [r.path for r in log.records] == ["/2", "/3", "/4"]


def test_idle_connections_outlive_the_clients_keepalive(tmp_path: Path) -> None:
    # A server closing a kept-alive connection when httpx may still reuse it makes a request fail
    # with "Server disconnected without sending a response" (seen with a 5 s server timeout).
    hub = LoopbackHub(tmp_path / "root")
    try:
        expiry = httpx2.Limits().keepalive_expiry
        assert expiry is not None and hub.idle_timeout > expiry
    finally:
        hub.stop()


def _slow_client(
    hub: LoopbackHub, head: bytes = b"GET /api/models/acme/x HTTP/1.1\r\nHost: x\r\nX-Slow: "
) -> socket.socket:
    """A slowloris client: a request head begun and never finished."""
    conn = socket.create_connection(("127.0.0.1", hub.port), timeout=CEILING_S)
    conn.sendall(head)
    return conn


def test_slow_clients_do_not_starve_others(tmp_path: Path) -> None:
    with LoopbackHub(tmp_path / "root", max_workers=4) as hub:
        slow = [_slow_client(hub) for _ in range(300)]
        try:
            served = [raw_request(f"{hub.url}/api/models/acme/none")[0] for _ in range(2)]
            assert served == [404, 404]  # both served while 300 slow heads hold no worker
            assert hub.requests.count() == 2
        finally:
            for conn in slow:
                conn.close()
        assert hub.server_errors == []


def test_past_the_connection_cap_the_longest_held_connection_is_closed(tmp_path: Path) -> None:
    with LoopbackHub(tmp_path / "root", max_connections=10) as hub:
        slow = [_slow_client(hub) for _ in range(30)]
        try:
            assert raw_request(f"{hub.url}/api/models/acme/none")[0] == 404
            assert slow[0].recv(1) == b""  # the first slow client was closed to make room
        finally:
            for conn in slow:
                conn.close()
        assert hub._httpd.admission.open_connections <= 10


def test_a_request_head_must_arrive_within_the_header_deadline(tmp_path: Path) -> None:
    with LoopbackHub(tmp_path / "root", header_timeout=0.2) as hub:
        with _slow_client(hub) as conn:
            assert conn.recv(1) == b""  # closed by the server, no answer: the outcome, not the time
        with _slow_client(hub, b"GET / HTTP/1.1\r\nX-Big: " + b"x" * 70_000) as conn:
            assert conn.makefile("rb").readline().startswith(b"HTTP/1.1 431")


def test_a_body_slower_than_the_minimum_rate_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the admission thread's own clock, not the machine's: a loaded test process that pauses between bytes
    must not turn the rate refusal into a silence timeout. A ``StoreError`` reaches the wire as its
    status (the 413 above goes the same way)."""
    now = [0.0]
    monkeypatch.setattr(connections, "time", SimpleNamespace(monotonic=lambda: now[0]))
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(b"x" * 10)
        body = Body(
            ConnReader(ours, b""), 100_000, limit=1 << 20, min_rate=1_000, grace=60.0, counted=lambda _: None
        )
        view = memoryview(bytearray(4))
        now[0] = 60.0  # the grace over: 4 bytes at 1,000 bytes/s may take 4 ms more, so this read is in time
        assert body.readinto(view) == 4
        now[0] = 60.009  # 8 bytes in 60.009 s: past 60 s + 8 / 1,000 bytes/s
        with pytest.raises(StoreError, match="request body slower than 1000 bytes/s") as refused:
            body.readinto(view)
        assert refused.value.status == 408 and body.broken
