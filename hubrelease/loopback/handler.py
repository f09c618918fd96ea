"""HTTP plumbing of the loopback Hub: route table, body reading (chunked too), faults, accounting."""

from __future__ import annotations

import contextlib
import re
import select
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from hubrelease.loopback import auth, lfs, routes, xet
from hubrelease.loopback.faults import Fault, RequestRecord
from hubrelease.loopback.store import CHUNK, StoreError
from hubrelease.loopback.wire import Request, Response, error_response, json_response

if TYPE_CHECKING:
    from hubrelease.loopback import LoopbackHub

View = Callable[[Request], Response]
_API = r"^/api/(?P<t>models|datasets|spaces)/(?P<ns>[^/]+)/(?P<name>[^/]+)"
_GIT = r"^/(?:(?P<t>datasets|spaces)/)?(?!api/)(?P<ns>[^/]+)/(?P<name>[^/]+)"
_OID = r"(?P<oid>[0-9a-f]{64})"
BUSY_IDLE = 1.0
IDLE_POLL = 0.25
_HASH = r"(?P<hash>[0-9a-f]{64})"

# (route name, methods, path pattern, view, streamed body); first match wins.
ROUTES: list[tuple[str, tuple[str, ...], re.Pattern[str], View, bool]] = [
    (name, methods, re.compile(pattern), view, streamed)
    for name, methods, pattern, view, streamed in [
        ("repo_create", ("POST",), r"^/api/repos/create$", routes.create_repo, False),
        ("repo_delete", ("DELETE",), r"^/api/repos/delete$", routes.delete_repo, False),
        ("repo_move", ("POST",), r"^/api/repos/move$", routes.move_repo, False),
        ("whoami", ("GET",), r"^/api/whoami-v2$", routes.whoami, False),
        ("list_repos", ("GET",), r"^/api/(?P<t>models|datasets|spaces)$", routes.list_repos, False),
        ("settings", ("PUT",), _API + r"/settings$", routes.repo_settings, False),
        ("validate_yaml", ("POST",), r"^/api/validate-yaml$", routes.validate_yaml, False),
        ("repo_info", ("GET",), _API + r"(?:/revision/(?P<rev>[^/]+))?$", routes.repo_info, False),
        ("refs", ("GET",), _API + r"/refs$", routes.list_refs, False),
        ("commits", ("GET",), _API + r"/commits/(?P<rev>[^/]+)$", routes.list_commits, False),
        ("preupload", ("POST",), _API + r"/preupload/(?P<rev>[^/]+)$", routes.preupload, False),
        ("commit", ("POST",), _API + r"/commit/(?P<rev>[^/]+)$", routes.commit, True),
        ("paths_info", ("POST",), _API + r"/paths-info/(?P<rev>[^/]+)$", routes.paths_info, False),
        ("tree", ("GET",), _API + r"/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?$", routes.list_tree, False),
        ("branch", ("POST", "DELETE"), _API + r"/branch/(?P<rev>[^/]+)$", routes.branch, False),
        ("tag", ("POST", "DELETE"), _API + r"/tag/(?P<rev>[^/]+)$", routes.tag, False),
        ("discussions", ("POST",), _API + r"/discussions$", routes.create_discussion, False),
        ("discussion", ("GET",), _API + r"/discussions/(?P<num>\d+)$", routes.discussion, False),
        ("xet_write_token", ("GET",), _API + r"/xet-write-token/(?P<rev>[^/]+)$", xet.write_token, False),
        ("xet_read_token", ("GET",), _API + r"/xet-read-token/(?P<rev>[^/]+)$", xet.read_token, False),
        ("xet_xorb", ("POST",), r"^/__xet/v1/xorbs/(?P<prefix>[^/]+)/" + _HASH + "$", xet.upload_xorb, True),
        ("xet_shard", ("POST",), r"^/__xet/v1/shards$", xet.upload_shard, False),
        # Both shard routes are "xet_shard" (faults, counts), as both xorb routes are "xet_xorb".
        ("xet_shard", ("POST",), r"^/__xet/v2/shards$", xet.upload_shard_v2, False),
        (
            "xet_xorb_grant",
            ("POST",),
            r"^/__xet/v1/xorb-grants/(?P<prefix>[^/]+)/" + _HASH + "$",
            xet.xorb_grant,
            False,
        ),
        # The grant URL of a xorb upload: named like the direct upload, so faults and byte counts on
        # "xet_xorb" see a xorb's bytes whichever way hf_xet sends them.
        (
            "xet_xorb",
            ("PUT",),
            r"^/__xet/grant-uploads/(?P<grant>[0-9a-f]{32})$",
            xet.xorb_grant_upload,
            True,
        ),
        (
            "xet_xorb_commit",
            ("POST",),
            r"^/__xet/v1/xorb-commits/(?P<prefix>[^/]+)/" + _HASH + r"/grant/(?P<grant>[0-9a-f]{32})$",
            xet.xorb_commit,
            False,
        ),
        (
            "xet_dedup",
            ("GET",),
            r"^/__xet/v1/chunks/(?P<prefix>[^/]+)/" + _HASH + "$",
            xet.dedup_probe,
            False,
        ),
        (
            "xet_reconstruction",
            ("GET",),
            r"^/__xet/v1/reconstructions/(?P<file>[0-9a-f]{64})$",
            xet.reconstruction,
            False,
        ),
        ("xet_fetch", ("GET",), r"^/__xet/fetch/" + _HASH + "$", xet.fetch_xorb, False),
        ("xet_telemetry", ("POST",), r"^(?:/__xet)?/v1/telemetry$", xet.telemetry, False),
        ("lfs_batch", ("POST",), _GIT + r"\.git/info/lfs/objects/batch$", lfs.batch, False),
        ("lfs_verify", ("POST",), r"^/__lfs/verify$", lfs.verify, False),
        ("lfs_upload", ("PUT",), r"^/__lfs/" + _OID + r"$", lfs.put_object, True),
        (
            "lfs_part",
            ("PUT",),
            r"^/__lfs/" + _OID + r"/(?P<upload>[0-9a-f]{32})/(?P<part>\d+)$",
            lfs.put_part,
            True,
        ),
        ("lfs_complete", ("POST",), r"^/__lfs/" + _OID + r"/(?P<upload>[0-9a-f]{32})$", lfs.complete, False),
        ("resolve", ("GET", "HEAD"), _GIT + r"/resolve/(?P<rev>[^/]+)/(?P<path>.+)$", routes.resolve, False),
    ]
]


def match(method: str, path: str) -> tuple[str, View, dict[str, str]] | None:
    for name, methods, pattern, view, _ in ROUTES:
        found = pattern.match(path)
        if found and method in methods:
            return name, view, {k: v for k, v in found.groupdict().items() if v is not None}
    return None


def _streamed(name: str) -> bool:
    return any(route[0] == name and route[4] for route in ROUTES)


class HubHTTPServer(ThreadingHTTPServer):
    """HTTP server that knows its ``LoopbackHub``; connections are served by a bounded thread pool."""

    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog of 5 resets connections when huggingface_hub's thread pools
    # open many at once on a loaded machine ("Server disconnected without sending a response").
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], hub: LoopbackHub) -> None:
        self.hub = hub
        # At most ``max_workers`` connections are served at once; the others wait in the queue (a
        # thread per connection let 300 slow clients hold 302 threads).
        self.pool = ThreadPoolExecutor(max_workers=hub.max_workers, thread_name_prefix="loopback-hub")
        self.waiting = 0
        """Accepted connections queued for a worker: idle kept-alive ones then give way (HubHandler)."""
        self._waiting_lock = threading.Lock()
        self.closing = threading.Event()
        """Set by ``server_close``: idle kept-alive connections give their workers up at once."""
        super().__init__(address, HubHandler)

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = super().get_request()
        # Without it a kept-alive connection waits out Nagle + delayed ACK (~40 ms) per response.
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._waiting_lock:
            self.waiting += 1
        self.pool.submit(self._serve, request, client_address)

    def _serve(self, request: Any, client_address: Any) -> None:
        with self._waiting_lock:
            self.waiting -= 1
        self.process_request_thread(request, client_address)

    def server_close(self) -> None:
        # The pool's workers are joined at interpreter exit: one still waiting out ``idle_timeout``
        # on a client's idle kept-alive connection held every `--endpoint local` command for 75 s.
        self.closing.set()
        super().server_close()
        self.pool.shutdown(wait=False, cancel_futures=True)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Keep failures for tests instead of printing them; a client hanging up is not a failure."""
        error = sys.exc_info()[1]
        if error is not None and not isinstance(error, (ConnectionError, TimeoutError)):
            self.hub.note_error(error)


class HubHandler(BaseHTTPRequestHandler):
    """One request: match, maybe fault, run the view, write the response, record what moved."""

    protocol_version = "HTTP/1.1"
    server: HubHTTPServer

    def handle_one_request(self) -> None:
        if not self._next_request_arrives():
            self.close_connection = True
            return
        super().handle_one_request()

    def _next_request_arrives(self) -> bool:
        """Wait on a kept-alive connection for its next request, holding the worker.

        Up to ``idle_timeout``, longer than clients keep idle connections (httpx: 5 s), so a client
        never sends on a connection the server is closing. But while other connections wait for a
        worker, an idle one gives its worker up after ``BUSY_IDLE`` seconds.
        """
        hub = self.server.hub
        start = time.monotonic()
        while True:
            waited = time.monotonic() - start
            if waited >= hub.idle_timeout or (self.server.waiting and waited >= BUSY_IDLE):
                return False
            if self.server.closing.is_set():
                return False
            slice_ = min(IDLE_POLL, hub.idle_timeout - waited)
            if select.select([self.connection], [], [], slice_)[0]:
                self.connection.settimeout(hub.request_timeout)
                return True

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: tests and the embedded hub must not write to the terminal."""

    def do_GET(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def _body_chunks(self, limit: int | None = None) -> Iterator[bytes]:
        """The request body in pieces, from Content-Length or chunked transfer encoding."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            while True:
                line = self.rfile.readline().split(b";")[0].strip()
                try:
                    size = int(line or b"0", 16)
                except ValueError:
                    self.close_connection = True  # the rest of the stream cannot be framed
                    raise StoreError(400, f"invalid chunk size {line!r}") from None
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return
                yield self.rfile.read(size)
                self.rfile.readline()
        length = self.headers.get("Content-Length") or "0"
        if not length.isdigit():
            self.close_connection = True
            raise StoreError(400, f"invalid Content-Length {length!r}")
        remaining = int(length)
        if limit is not None:
            remaining = min(remaining, limit)
        while remaining > 0:
            piece = self.rfile.read(min(CHUNK, remaining))
            if not piece:
                return
            remaining -= len(piece)
            yield piece

    def _drop(self, after_bytes: int) -> None:
        """Read a little of the body, then vanish: the client sees a connection reset, no answer."""
        for _ in self._body_chunks(limit=after_bytes):
            pass
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _handle(self) -> None:
        hub = self.server.hub
        split = urlsplit(self.path)
        method = self.command
        found = match(method, split.path)
        name = found[0] if found else "unknown"
        counted = {"in": 0}

        def counting(chunks: Iterator[bytes]) -> Iterator[bytes]:
            for chunk in chunks:
                counted["in"] += len(chunk)
                yield chunk

        fault = hub.faults.take(("status", "drop", "echo"), method, split.path, name)
        if fault is not None and fault.kind == "drop":
            self._drop(fault.after_bytes)
            self._record(RequestRecord(method, split.path, name, 0, fault.after_bytes, 0))
            return
        streamed = found is not None and _streamed(name) and fault is None
        unreadable = None
        try:
            body = b"" if streamed else self._read_body(counting(self._body_chunks()), keep=found is not None)
        except StoreError as exc:
            body, unreadable = b"", exc
        chunks = counting(_capped(self._body_chunks(), hub.max_upload)) if streamed else iter(())
        if streamed and hub.faults.take(("corrupt",), method, split.path, name) is not None:
            chunks = _corrupt(chunks)
        if unreadable is not None:
            response = error_response(unreadable)
        elif fault is not None:
            response = _fault_response(fault, self.headers.items())
        elif found is None:
            response = error_response(StoreError(404, f"no route for {method} {split.path}"))
        else:
            headers = _lower(self.headers.items())
            try:
                grant = auth.require(hub.access, name, method, headers.get("authorization", ""))
            except StoreError as exc:
                response = error_response(exc)
            else:
                writes = auth.writes(name, method)
                query = parse_qs(split.query)
                request = Request(hub, method, found[2], query, headers, body, chunks, grant, writes)
                response = self._run(found[1], request)
            if streamed and not self.close_connection:
                with contextlib.suppress(StoreError):
                    for _ in chunks:  # drain what a failing view did not read, to keep the connection usable
                        pass
            after = hub.faults.take(("after",), method, split.path, name)
            if after is not None:
                response = _fault_response(after, self.headers.items())
        # Recorded before the answer goes out, so a client that got it finds it in the log.
        head = method == "HEAD"
        out = 0 if head else response.content_length
        self._record(RequestRecord(method, split.path, name, response.status, counted["in"], out))
        self._send(response, head)

    def _record(self, record: RequestRecord) -> None:
        hub = self.server.hub
        hub.requests.add(record)
        if hub.access_log is not None:
            status = record.status or "dropped"
            hub.access_log(
                f"{record.method} {_header_value(record.path)} {status} in={record.bytes_in} out={record.bytes_out}"
            )

    def _read_body(self, chunks: Iterator[bytes], keep: bool) -> bytes:
        """A small body in memory (JSON, forms, shards), or drained unkept; over ``max_body`` is 413."""
        limit = self.server.hub.max_body
        kept: list[bytes] = []
        size = 0
        for chunk in chunks:
            size += len(chunk)
            if size > limit:
                self.close_connection = True  # the rest is not read: the connection cannot be reused
                raise StoreError(413, f"request body larger than {limit} bytes")
            if keep:
                kept.append(chunk)
        return b"".join(kept)

    def _run(self, view: View, request: Request) -> Response:
        try:
            return view(request)
        except StoreError as exc:
            if exc.status == 413:
                self.close_connection = True
            return error_response(exc)
        except (ConnectionError, TimeoutError):
            self.close_connection = True
            raise  # the client went away or stalled: nothing to answer
        except Exception as exc:  # a bug in the loopback Hub: answer 500 like the Hub would, and keep it
            self.server.hub.note_error(exc)
            return error_response(StoreError(500, f"internal error: {type(exc).__name__}: {exc}"))

    def _send(self, response: Response, head: bool) -> None:
        self.send_response(response.status)
        for key, value in response.headers.items():
            self.send_header(key, _header_value(value))
        self.send_header("Content-Length", str(response.content_length))
        self.end_headers()
        if head:
            return
        if response.stream is not None:
            for piece in response.stream:
                self.wfile.write(piece)
            return
        if response.file is None:
            self.wfile.write(response.body)
            return
        if response.length == 0:  # an empty file: socket.sendfile refuses count=0 (socket.py:463)
            return
        self.wfile.flush()
        with response.file.open("rb") as handle:  # zero-copy: the kernel moves file pages to the socket
            self.connection.sendfile(handle, response.offset, response.length)


def _fault_response(fault: Fault, request_headers: Any) -> Response:
    """The answer of an injected fault: its own body, an echo of the request headers, or a JSON error."""
    if fault.kind == "echo":
        echoed = "; ".join(f"{k}: {v}" for k, v in request_headers)
        message = f"request refused, headers were: {echoed}"
        return json_response({"error": message}, fault.status, {**fault.headers, "X-Error-Message": message})
    if fault.body is not None:
        headers = {"Content-Type": fault.content_type, **fault.headers}
        if fault.message:
            headers["X-Error-Message"] = fault.message
        return Response(fault.status, headers, fault.body)
    message = fault.message or f"injected HTTP {fault.status}"
    return json_response({"error": message}, fault.status, {"X-Error-Message": message, **fault.headers})


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _header_value(value: str) -> str:
    """Latin-1 with every control character (CR and LF above all) replaced: no header injection."""
    return _CONTROL.sub(" ", value.encode("latin-1", "replace").decode("latin-1"))


def _lower(items: Any) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in items}


def _capped(chunks: Iterator[bytes], limit: int) -> Iterator[bytes]:
    """A streamed body, refused with 413 once it passes ``limit`` bytes (chunked bodies have no length)."""
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise StoreError(413, f"upload larger than {limit} bytes")
        yield chunk


def _corrupt(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Flip the first byte in transit: the object's sha256 no longer matches its oid."""
    first = True
    for chunk in chunks:
        if first and chunk:
            chunk = bytes([chunk[0] ^ 0xFF]) + chunk[1:]
            first = False
        yield chunk
