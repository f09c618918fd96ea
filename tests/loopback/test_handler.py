"""The loopback Hub's request plumbing against hostile clients: who is refused before their body is
read, how much of a body each route holds, and which workers a client without a credential may use."""

from __future__ import annotations

import json
import socket
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.handler import DRAIN_BYTES, SMALL_BODY
from hubrelease_loopback.routes import COMMIT_LINE_BYTES
from tests.factories.hub import logged, ndjson_commit, raw_request
from tests.factories.waiting import CEILING_S

TOKEN = "hf_test_writer"


def _send(hub: LoopbackHub, head: bytes, body: bytes) -> None:
    """Send a request head and body on a raw socket, as a client that does not wait for an answer
    would; the server may close the connection before the body is all in (that is the point)."""
    with socket.create_connection(("127.0.0.1", hub.port), timeout=CEILING_S) as conn:
        try:
            conn.sendall(head + body)
            conn.shutdown(socket.SHUT_WR)
            while conn.recv(65536):
                pass
        except OSError:
            pass


def _post(path: str, length: int, headers: str = "") -> bytes:
    return f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n{headers}\r\n".encode()


@pytest.fixture
def guarded(tmp_path: Path) -> Iterator[LoopbackHub]:
    """A Hub as ``hub serve --token-file`` runs it: a token needed for everything."""
    with LoopbackHub(tmp_path / "root", tokens={TOKEN: "write"}, allow_anonymous=False) as hub:
        yield hub


@pytest.mark.parametrize("authorization", ["", "Authorization: Bearer hf_not_a_token\r\n"])
def test_a_caller_without_a_valid_token_is_refused_before_its_body_is_read(
    guarded: LoopbackHub, authorization: str
) -> None:
    body = b"{" + b" " * (8 << 20) + b"}"
    _send(guarded, _post("/api/repos/create", len(body), authorization), body)
    [record] = logged(guarded, "repo_create", 1)
    assert record.status == 401
    assert record.bytes_in <= DRAIN_BYTES  # on main: all 8 MiB were read, then the token checked


def test_a_xet_route_checks_its_token_before_the_body(guarded: LoopbackHub) -> None:
    body = b"\0" * (4 << 20)
    _send(guarded, _post("/__xet/v1/shards", len(body), "Authorization: Bearer xet_forged\r\n"), body)
    [record] = logged(guarded, "xet_shard", 1)
    assert record.status == 401 and record.bytes_in <= DRAIN_BYTES


def test_each_route_has_its_own_bound_on_a_body_in_memory(guarded: LoopbackHub) -> None:
    auth = f"Authorization: Bearer {TOKEN}\r\n"
    _send(guarded, _post("/api/repos/create", SMALL_BODY + 1, auth), b" " * (SMALL_BODY + 1))
    [record] = logged(guarded, "repo_create", 1)
    assert record.status == 413 and record.bytes_in == 0  # refused from Content-Length (main: 64 MiB)


@contextmanager
def _traced() -> Iterator[list[int]]:
    """The peak of bytes Python allocated meanwhile, in every thread (the server's included)."""
    peak = [0]
    tracemalloc.start()
    try:
        yield peak
        peak[0] = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_commit_holds_one_line_of_regular_files_in_memory(guarded: LoopbackHub) -> None:
    files = {f"data/{n}.txt": bytes([65 + n]) * (512 << 10) for n in range(24)}  # 12 MiB of regular files
    body = ndjson_commit(files)
    api_url = f"{guarded.url}/api/models/acme/regular"
    headers = {"Authorization": f"Bearer {TOKEN}"}
    assert (
        raw_request(f"{guarded.url}/api/repos/create", "POST", b'{"name": "acme/regular"}', headers)[0] == 200
    )
    with _traced() as peak:
        status, _, _ = raw_request(f"{api_url}/commit/main", "POST", body, headers)
    assert status == 200
    assert peak[0] < 8 << 20  # main held every file's bytes at once: over 24 MiB
    download = f"{guarded.url}/acme/regular/resolve/main/data/3.txt"
    assert raw_request(download, headers=headers)[2] == files["data/3.txt"]


def test_a_regular_file_past_the_lfs_threshold_is_refused(guarded: LoopbackHub) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    raw_request(f"{guarded.url}/api/repos/create", "POST", b'{"name": "acme/big"}', headers)
    body = ndjson_commit({"big.txt": b"x" * (COMMIT_LINE_BYTES * 3 // 4 + 1)})
    status, _, text = raw_request(f"{guarded.url}/api/models/acme/big/commit/main", "POST", body, headers)
    assert status == 413 and b"go to LFS" in text  # main decoded and stored it whole


def _slow_body(hub: LoopbackHub, path: str) -> socket.socket:
    """A client that announces a body and sends 10 bytes of it, then nothing."""
    conn = socket.create_connection(("127.0.0.1", hub.port), timeout=CEILING_S)
    conn.sendall(_post(path, 1_000) + b'{"content"')
    return conn


def test_slow_anonymous_bodies_do_not_hold_the_workers_of_token_holders(tmp_path: Path) -> None:
    with LoopbackHub(
        tmp_path / "root",
        tokens={TOKEN: "write"},
        allow_anonymous=False,
        anonymous_reads=True,  # validate-yaml takes anonymous bodies: a reader's page checks its card
        max_workers=2,
        anonymous_workers=2,
        request_timeout=CEILING_S * 4,  # the slow bodies are never cut off while this test runs
    ) as hub:
        slow = [_slow_body(hub, "/api/validate-yaml") for _ in range(8)]
        try:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            # On main these 8 held both workers until request_timeout: the token holder waited.
            assert raw_request(f"{hub.url}/api/whoami-v2", headers=headers)[0] == 200
            assert (
                raw_request(f"{hub.url}/api/repos/create", "POST", b'{"name": "acme/a"}', headers)[0] == 200
            )
        finally:
            for conn in slow:
                conn.close()


def test_who_counts_as_credentialed(tmp_path: Path) -> None:
    with LoopbackHub(tmp_path / "root", tokens={TOKEN: "write"}, allow_anonymous=False) as hub:
        server = hub._httpd

        def head(line: str, *headers: str) -> bytes:
            return (line + "\r\n" + "".join(h + "\r\n" for h in headers) + "\r\n").encode()

        assert server._credentialed(head("GET /api/whoami-v2 HTTP/1.1", f"Authorization: Bearer {TOKEN}"))
        assert server._credentialed(head("GET /api/whoami-v2 HTTP/1.1", f"authorization:Bearer {TOKEN}"))
        assert not server._credentialed(
            head("GET /api/whoami-v2 HTTP/1.1", "Authorization: Bearer hf_forged")
        )
        assert not server._credentialed(head("GET /api/whoami-v2 HTTP/1.1"))
        assert not server._credentialed(head("garbage"))
        # A signed-URL route: the view checks the signature before reading a byte.
        assert server._credentialed(head(f"PUT /__lfs/{'a' * 64}?size=1&sig=x HTTP/1.1"))
        assert not server._credentialed(head(f"PUT /__lfs/{'a' * 64}?size=1 HTTP/1.1"))
        # A live Xet token is a credential; a forged one is not.
        headers = {"Authorization": f"Bearer {TOKEN}"}
        raw_request(f"{hub.url}/api/repos/create", "POST", b'{"name": "acme/x"}', headers)
        _, _, text = raw_request(f"{hub.url}/api/models/acme/x/xet-write-token/main", headers=headers)
        xet = json.loads(text)["accessToken"]
        assert server._credentialed(head("POST /__xet/v1/shards HTTP/1.1", f"Authorization: Bearer {xet}"))
        assert not server._credentialed(head("POST /__xet/v1/shards HTTP/1.1", "Authorization: Bearer xet_0"))


def test_a_refused_upload_keeps_the_connection_when_its_body_is_small(guarded: LoopbackHub) -> None:
    """Up to ``DRAIN_BYTES`` of a refused body are read, so a kept-alive client gets its answer and
    can send the next request on the same connection."""
    with socket.create_connection(("127.0.0.1", guarded.port), timeout=CEILING_S) as conn:
        reader = conn.makefile("rb")
        for _ in range(2):
            conn.sendall(_post("/api/repos/create", 2) + b"{}")
            assert reader.readline().startswith(b"HTTP/1.1 401")
            length = 0
            while (line := reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            assert len(reader.read(length)) == length > 0
    assert [r.status for r in logged(guarded, "repo_create", 2)] == [401, 401]
