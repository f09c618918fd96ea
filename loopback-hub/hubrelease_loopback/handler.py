"""HTTP plumbing of the loopback Hub: route table, body reading (chunked too), faults, accounting."""

from __future__ import annotations

import contextlib
import re
import socket
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from hubrelease_loopback import auth, gating, gguf_manifest, lfs, oidc_routes, pages, routes, xet
from hubrelease_loopback.connections import Admission, Body, ConnReader
from hubrelease_loopback.faults import Fault, RequestRecord
from hubrelease_loopback.store import StoreError
from hubrelease_loopback.wire import Request, Response, error_response, json_response
from hubrelease_loopback.xetstore import MAX_SHARD_BYTES

if TYPE_CHECKING:
    from hubrelease_loopback.served import ServedHub

View = Callable[[Request], Response]
_API = r"^/api/(?P<t>models|datasets|spaces)/(?P<ns>[^/]+)/(?P<name>[^/]+)"
_GIT = r"^/(?:(?P<t>datasets|spaces)/)?(?!api/)(?P<ns>[^/]+)/(?P<name>[^/]+)"
_OID = r"(?P<oid>[0-9a-f]{64})"
_HASH = r"(?P<hash>[0-9a-f]{64})"
# The CAS API, below the root's store id when the client built the URL from ``casUrl`` (``xet.py``).
_CAS = r"^/__xet(?:/(?P<store>[0-9a-f]{16}))?"

# (route name, methods, path pattern, view, streamed body); first match wins.
ROUTES: list[tuple[str, tuple[str, ...], re.Pattern[str], View, bool]] = [
    (name, methods, re.compile(pattern), view, streamed)
    for name, methods, pattern, view, streamed in [
        ("repo_create", ("POST",), r"^/api/repos/create$", routes.create_repo, False),
        ("repo_delete", ("DELETE",), r"^/api/repos/delete$", routes.delete_repo, False),
        ("repo_move", ("POST",), r"^/api/repos/move$", routes.move_repo, False),
        ("whoami", ("GET",), r"^/api/whoami-v2$", routes.whoami, False),
        ("oidc_id_token", ("GET",), r"^/__oidc/github$", oidc_routes.id_token, False),
        ("oauth_token", ("POST",), r"^/oauth/token$", oidc_routes.exchange, False),
        ("list_repos", ("GET",), r"^/api/(?P<t>models|datasets|spaces)$", routes.list_repos, False),
        (
            "user_repos",
            ("GET",),
            r"^/api/(?:organizations/(?P<ns>[^/]+)/)?settings/repositories$",
            routes.user_repos,
            False,
        ),
        ("duplicate", ("POST",), _API + r"/duplicate$", routes.duplicate_repo, False),
        (
            "access_requests",
            ("GET",),
            _API + r"/user-access-request/(?P<status>pending|accepted|rejected)$",
            gating.list_requests,
            False,
        ),
        ("access_handle", ("POST",), _API + r"/user-access-request/handle$", gating.handle_request, False),
        ("access_grant", ("POST",), _API + r"/user-access-request/grant$", gating.grant_access, False),
        ("ask_access", ("POST",), _GIT + r"/ask-access$", gating.ask_access, False),
        ("settings", ("PUT",), _API + r"/settings$", routes.repo_settings, False),
        ("lfs_duplicate", ("POST",), _API + r"/lfs-files/duplicate$", routes.duplicate_lfs_files, False),
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
        ("discussions_list", ("GET",), _API + r"/discussions$", routes.list_discussions, False),
        (
            "discussion_comment",
            ("POST",),
            _API + r"/discussions/(?P<num>\d+)/comment$",
            routes.comment,
            False,
        ),
        (
            "discussion_status",
            ("POST",),
            _API + r"/discussions/(?P<num>\d+)/status$",
            routes.change_status,
            False,
        ),
        (
            "discussion_title",
            ("POST",),
            _API + r"/discussions/(?P<num>\d+)/title$",
            routes.rename,
            False,
        ),
        ("discussion_merge", ("POST",), _API + r"/discussions/(?P<num>\d+)/merge$", routes.merge, False),
        ("super_squash", ("POST",), _API + r"/super-squash/(?P<rev>[^/]+)$", routes.super_squash, False),
        ("discussion", ("GET",), _API + r"/discussions/(?P<num>\d+)$", routes.discussion, False),
        ("xet_write_token", ("GET",), _API + r"/xet-write-token/(?P<rev>[^/]+)$", xet.write_token, False),
        ("xet_read_token", ("GET",), _API + r"/xet-read-token/(?P<rev>[^/]+)$", xet.read_token, False),
        ("xet_xorb", ("POST",), _CAS + r"/v1/xorbs/(?P<prefix>[^/]+)/" + _HASH + "$", xet.upload_xorb, True),
        ("xet_shard", ("POST",), _CAS + r"/v1/shards$", xet.upload_shard, False),
        # Both shard routes are "xet_shard" (faults, counts), as both xorb routes are "xet_xorb".
        ("xet_shard", ("POST",), _CAS + r"/v2/shards$", xet.upload_shard_v2, False),
        (
            "xet_xorb_grant",
            ("POST",),
            _CAS + r"/v1/xorb-grants/(?P<prefix>[^/]+)/" + _HASH + "$",
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
            _CAS + r"/v1/xorb-commits/(?P<prefix>[^/]+)/" + _HASH + r"/grant/(?P<grant>[0-9a-f]{32})$",
            xet.xorb_commit,
            False,
        ),
        (
            "xet_dedup",
            ("GET",),
            _CAS + r"/v1/chunks/(?P<prefix>[^/]+)/" + _HASH + "$",
            xet.dedup_probe,
            False,
        ),
        (
            "xet_reconstruction",
            ("GET",),
            _CAS + r"/v1/reconstructions/(?P<file>[0-9a-f]{64})$",
            xet.reconstruction,
            False,
        ),
        ("xet_fetch", ("GET",), r"^/__xet/fetch/" + _HASH + "$", xet.fetch_xorb, False),
        ("xet_telemetry", ("POST",), r"^(?:/__xet(?:/[0-9a-f]{16})?)?/v1/telemetry$", xet.telemetry, False),
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
        (
            "gguf_manifest",
            ("GET",),
            r"^/v2/(?P<ns>[^/]+)/(?P<name>[^/]+)/manifests/(?P<tag>[^/]+)$",
            gguf_manifest.manifest,
            False,
        ),
        ("favicon", ("GET",), r"^/favicon\.ico$", pages.favicon, False),
        # The repo's page, last: any other GET of a repo path matched first.
        ("page", ("GET",), _GIT + r"(?:/tree/(?P<rev>[^/]+))?/?$", pages.repo_page, False),
        # Served on the storage origin only (the Hub's CDN): where resolve redirects LFS/Xet files.
        ("cdn", ("GET", "HEAD"), r"^/" + _OID + r"/(?P<name>[^/]+)$", routes.cdn_object, False),
    ]
]
CDN_ROUTES = frozenset({"cdn"})
SIGNED_ROUTES = frozenset(
    {"lfs_upload", "lfs_part", "lfs_complete", "lfs_verify", "xet_xorb", "xet_fetch", "cdn"}
)
"""Routes whose URL carries the server's signature instead of a token (``auth.py``)."""
_AUTHORIZATION = re.compile(rb"^authorization:[ \t]*([^\r\n]*)", re.IGNORECASE | re.MULTILINE)


def match(method: str, path: str, cdn: bool = False) -> tuple[str, View, dict[str, str]] | None:
    """The first route for ``method`` and ``path``; the storage origin (``cdn``) has its routes only."""
    for name, methods, pattern, view, _ in ROUTES:
        if (name in CDN_ROUTES) != cdn:
            continue
        found = pattern.match(path)
        if found and method in methods:
            return name, view, {k: v for k, v in found.groupdict().items() if v is not None}
    return None


def _streamed(name: str) -> bool:
    return any(route[0] == name and route[4] for route in ROUTES)


KIB, MIB = 1024, 1024 * 1024
DRAIN_BYTES = 64 * KIB
"""Most of a body read after its caller was refused (401/403), to keep the connection; past it, closed."""
SMALL_BODY = MIB
"""The in-memory body of a route not in ``BODY_LIMITS``: a few fields of JSON or a form (a comment or
a pull request's description among them)."""
BODY_LIMITS = {
    # Lists of files or objects: preupload and the LFS batch in pages of 256 files (_commit_api.py
    # UPLOAD_BATCH_MAX_NUM_FILES), paths-info, a copy's file list, a multipart upload's parts, a card.
    "preupload": 8 * MIB,
    "paths_info": 8 * MIB,
    "lfs_batch": 8 * MIB,
    "lfs_duplicate": 8 * MIB,
    "lfs_complete": 8 * MIB,
    "validate_yaml": 8 * MIB,
    "xet_shard": MAX_SHARD_BYTES,
    # Streamed to disk: huggingface_hub documents create_commit as "limited to 25k LFS files and a
    # 1GB payload for regular files" (hf_api.py, create_commit docstring); base64 makes that 4/3 GB.
    "commit": 2 * 1024 * MIB,
}


def body_limit(name: str, hub: ServedHub) -> int:
    """The largest body ``name`` accepts (413 past it): a streamed upload's ``max_upload``, else the
    route's own in-memory bound, never above ``max_body``."""
    if name in BODY_LIMITS and _streamed(name):
        return min(BODY_LIMITS[name], hub.max_upload)
    if _streamed(name):
        return hub.max_upload
    return min(BODY_LIMITS.get(name, SMALL_BODY), hub.max_body)


class HubHTTPServer(ThreadingHTTPServer):
    """HTTP server that knows the hub it serves (``served.ServedHub``).

    Accepted connections wait in the ``Admission`` (one thread, no worker) until a whole request head
    has arrived; then a worker of a bounded pool serves that one request and gives a kept-alive
    connection back to the admission thread. A thread per connection let 300 slow clients hold 302 threads
    and a pool holding idle connections let them starve everyone else.
    """

    allow_reuse_address = True
    # socketserver's default backlog of 5 resets connections when huggingface_hub's thread pools
    # open many at once on a loaded machine ("Server disconnected without sending a response").
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], hub: ServedHub, cdn: bool = False) -> None:
        self.hub = hub
        self.cdn = cdn
        """This listener is the storage origin: it serves ``CDN_ROUTES`` only."""
        self.pool = ThreadPoolExecutor(max_workers=hub.max_workers, thread_name_prefix="loopback-hub")
        self.anonymous_pool = ThreadPoolExecutor(
            max_workers=hub.anonymous_workers, thread_name_prefix="loopback-hub-anonymous"
        )
        """Serves requests that carry no credential the server knows: however many of them send slow
        bodies, they hold these workers only, never ``pool``'s."""
        self.closing = threading.Event()
        # Before the bind: a port in use makes socketserver call server_close(), which closes it.
        self.admission = Admission(
            self._dispatch,
            header_timeout=hub.header_timeout,
            idle_timeout=hub.idle_timeout,
            max_header_bytes=hub.max_header_bytes,
            max_connections=hub.max_connections,
        )
        super().__init__(address, HubHandler)

    def get_request(self) -> tuple[socket.socket, Any]:
        connection, address = super().get_request()
        # Without it a kept-alive connection waits out Nagle + delayed ACK (~40 ms) per response.
        connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return connection, address

    def process_request(self, request: Any, client_address: Any) -> None:
        self.admission.admit(request)

    def _dispatch(self, sock: socket.socket, head: bytes) -> None:
        pool = self.pool if self._credentialed(head) else self.anonymous_pool
        pool.submit(self._serve, sock, head)

    def _credentialed(self, head: bytes) -> bool:
        """Whether a request head carries a credential this server issued: a Hub token it knows, a
        live Xet token, or a signature on a signed-URL route (checked by the view before a byte of
        the body is read, so a forged one is refused at once). Read in the admission thread from the head
        alone; anything else, anonymous or unknown, is served by ``anonymous_pool``."""
        line = head.split(b"\n", 1)[0].decode("latin-1").split()
        if len(line) != 3:
            return False
        split = urlsplit(line[1])
        found = match(line[0], split.path, self.cdn)
        if found is not None and found[0] in SIGNED_ROUTES and "sig" in parse_qs(split.query):
            return True
        authorization = _AUTHORIZATION.search(head)
        if authorization is None:
            return False
        value = authorization[1].decode("latin-1").strip()
        if self.hub.access.knows(value):
            return True
        try:
            self.hub.xet.check(value, False, self.hub.faults.xet_token_epoch)
        except StoreError:
            return False
        return True

    def _serve(self, sock: socket.socket, head: bytes) -> None:
        handler: HubHandler | None = None
        try:
            sock.settimeout(self.hub.request_timeout)
            handler = HubHandler(sock, ("127.0.0.1", 0), self, head)
        except Exception:
            self.handle_error(sock, None)
        if handler is not None and not handler.close_connection and not self.closing.is_set():
            self.admission.admit(sock, bytes(handler.rfile.pending), returning=True)
        else:
            self.admission.done(sock)

    def server_close(self) -> None:
        self.closing.set()
        super().server_close()
        self.admission.close()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.anonymous_pool.shutdown(wait=False, cancel_futures=True)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Keep failures for tests instead of printing them; a client hanging up is not a failure."""
        error = sys.exc_info()[1]
        if error is not None and not isinstance(error, (ConnectionError, TimeoutError)):
            self.hub.note_error(error)


class _Writer:
    """The response side of a connection: every write sent whole (``socket.sendall``)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def write(self, data: bytes) -> int:
        self.sock.sendall(data)
        return len(data)

    def flush(self) -> None:
        """Nothing is buffered."""


class HubHandler(BaseHTTPRequestHandler):
    """One request: match, maybe fault, run the view, write the response, record what moved."""

    protocol_version = "HTTP/1.1"
    server: HubHTTPServer
    rfile: ConnReader  # type: ignore[assignment]

    def __init__(self, sock: socket.socket, address: Any, server: HubHTTPServer, head: bytes = b"") -> None:
        self._head = head
        super().__init__(sock, address, server)

    def setup(self) -> None:
        self.connection = self.request
        self.rfile = ConnReader(self.connection, self._head)
        self.wfile = _Writer(self.connection)  # type: ignore[assignment]

    def handle(self) -> None:
        """Exactly one request: between requests the connection waits in the admission thread, not here."""
        self.close_connection = True
        self.handle_one_request()

    def finish(self) -> None:
        """Nothing to close: the server gives the socket back to the admission thread, or closes it."""

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

    def _body(self, counted: Callable[[int], None], limit: int, corrupt: bool = False) -> Body:
        """The request body (Content-Length or chunked), as ``connections.Body`` reads and bounds it."""
        hub = self.server.hub
        length: int | None = None
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            declared = self.headers.get("Content-Length") or "0"
            if not declared.isdigit() or len(declared) > 18:
                self.close_connection = True
                raise StoreError(400, f"invalid Content-Length {declared[:40]!r}")
            length = int(declared)
            if length > limit:
                self.close_connection = True  # refused before a byte of it is read
                raise StoreError(413, f"request body larger than {limit} bytes")
        return Body(
            self.rfile,
            length,
            limit=limit,
            min_rate=hub.min_upload_rate,
            grace=hub.request_timeout,
            counted=counted,
            corrupt=corrupt,
        )

    def _drop(self, body: Body, after_bytes: int) -> None:
        """Read a little of the body, then vanish: the client sees a connection reset, no answer."""
        with contextlib.suppress(StoreError):
            view = memoryview(bytearray(max(after_bytes, 1)))[:after_bytes]
            while view and (got := body.readinto(view)):
                view = view[got:]
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def _handle(self) -> None:
        hub = self.server.hub
        split = urlsplit(self.path)
        method = self.command
        found = match(method, split.path, self.server.cdn)
        name = found[0] if found else "unknown"
        counted = [0]

        def count(size: int) -> None:
            counted[0] += size
            if hub.faults.received(name, size):  # the tripwire: this request is not answered
                self._record(RequestRecord(method, split.path, name, 0, counted[0], 0))
                self.close_connection = True
                raise ConnectionResetError("tripwire: request dropped")

        fault = hub.faults.take(("status", "drop", "echo"), method, split.path, name)
        streamed = found is not None and _streamed(name) and fault is None
        corrupt = streamed and hub.faults.take(("corrupt",), method, split.path, name) is not None
        headers = _lower(self.headers.items())
        grant: auth.Grant | None = None
        refusal: StoreError | None = None
        try:
            if found is not None and fault is None:
                # From the headers, before a byte of the body is read: a refused caller costs no body.
                grant = auth.require(hub.access, name, method, headers.get("authorization", ""))
        except StoreError as exc:
            refusal = exc
        try:
            body = self._body(count, body_limit(name, hub), corrupt)
        except StoreError as exc:
            self._answer(error_response(refusal or exc), None, name, counted, None)
            return
        if refusal is not None:
            self._answer(error_response(refusal), body, name, counted, DRAIN_BYTES)
            return
        if fault is not None and fault.kind == "drop":
            self._drop(body, fault.after_bytes)
            self._record(RequestRecord(method, split.path, name, 0, counted[0], 0))
            return
        if fault is not None:
            response = _fault_response(fault, self.headers.items())
        elif found is None:
            response = error_response(StoreError(404, f"no route for {method} {split.path}"))
        else:
            writes = auth.writes(name, method)
            request = Request(hub, method, found[2], parse_qs(split.query), headers, body, grant, writes)
            moved = routes.moved(request, self.path)
            response = moved if moved is not None else self._run(found[1], request)
            after = hub.faults.take(("after",), method, split.path, name)
            if after is not None:
                response = _fault_response(after, self.headers.items())
        refused = response.status in (401, 403) and fault is None
        self._answer(response, body, name, counted, DRAIN_BYTES if refused else None)

    def _answer(
        self, response: Response, body: Body | None, name: str, received: list[int], drain: int | None
    ) -> None:
        """Send ``response`` once what is left of ``body`` is read (a refused caller's, at most
        ``drain`` bytes: a longer rest closes the connection instead of being read to its end)."""
        if body is None:
            self.close_connection = True
        elif not self.close_connection:
            try:
                if not body.drain(drain):
                    self.close_connection = True
            except StoreError:
                self.close_connection = True
        split = urlsplit(self.path)
        # Recorded before the answer goes out, so a client that got it finds it in the log.
        head = self.command == "HEAD"
        out = 0 if head else response.content_length
        self._record(RequestRecord(self.command, split.path, name, response.status, received[0], out))
        self._send(response, head)

    def _record(self, record: RequestRecord) -> None:
        hub = self.server.hub
        hub.requests.add(record)
        if hub.access_log is not None:
            status = record.status or "dropped"
            hub.access_log(
                f"{record.method} {_header_value(record.path)} {status} in={record.bytes_in} out={record.bytes_out}"
            )

    def _run(self, view: View, request: Request) -> Response:
        try:
            return view(request)
        except StoreError as exc:
            if exc.status == 413 or request.chunks.broken:
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
