"""A hostile Hub in process on 127.0.0.1: a proxy to a real loopback Hub that misbehaves on one route.

Every request is forwarded to ``upstream`` (the loopback Hub, so the real huggingface_hub client
gets real answers; its storage origin, where ``resolve`` redirects LFS and Xet files, has a listener
of its own, route ``cdn``) except those of ``route``, which get the misbehaviour named by ``kind``: the
cases of a hostile-input campaign against the client's remote reads. ``requests`` and ``sent`` count
what the client asked for and was sent (body bytes), so a test can bound the work done; nothing
is timed. The server's own pacing (``drip``: one byte every ``interval`` seconds, ``stall``) is
the hostile behaviour itself, bounded by ``MAX_DRIP`` bytes and by ``stop()``.
"""

from __future__ import annotations

import hashlib
import http.client
import re
import struct
import threading
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING
from urllib.parse import SplitResult, urlsplit

import yaml

from tests.factories.drafters import write_ik_mixed_gguf
from tests.factories.hub import api_for, unique_repo, upload_files

if TYPE_CHECKING:
    from hubrelease_loopback import LoopbackHub

ROUTES = {
    "resolve": re.compile(r"^/(?:(?:datasets|spaces)/)?[^/]+/[^/]+/resolve/"),
    "repo_info": re.compile(r"^/api/(?:models|datasets|spaces)/[^/]+/[^/]+(?:/revision/[^/?]+)?(?:\?.*)?$"),
    "tree": re.compile(r"^/api/(?:models|datasets|spaces)/[^/]+/[^/]+/tree/"),
    "paths_info": re.compile(r"^/api/(?:models|datasets|spaces)/[^/]+/[^/]+/paths-info/"),
    "refs": re.compile(r"^/api/(?:models|datasets|spaces)/[^/]+/[^/]+/refs"),
    "cdn": re.compile(r"^/"),  # every request to the storage origin resolve redirects LFS/Xet files to
}
KINDS = (
    "content_range_digits",  # 206 with a 5000-digit Content-Range total
    "bad_gzip",  # Content-Encoding: gzip over bytes that are not gzip
    "redirect_loop",  # 302 to itself
    "short_body",  # a body shorter than its Content-Length, then the connection closes
    "deep_json",  # JSON nested 100,000 deep
    "tree_object",  # a tree listing that is an object, not a list
    "redirect_elsewhere",  # 302 to another host that answers {} to everything
    "drip",  # the real answer, headers and all, one byte every `interval` seconds
    "stall",  # headers, then nothing
    "retry_after",  # 429 with Retry-After: 100000
    "link_loop",  # the real page with Link: rel="next" pointing at itself
    "huge_array",  # a GGUF whose header declares 2^40 strings (and a file large enough to hold them)
    "huge_count",  # a GGUF whose header declares 2^36 keys (and a file large enough to hold them)
    "forged",  # the answer ``Forged`` describes (the fuzz tier draws them)
)
MAX_DRIP = 4096
DEEP = 100_000


def huge_gguf_prefix(kind: str) -> bytes:
    """GGUF v3 without tensors. ``huge_array``: one key, ``tokenizer.ggml.tokens``, declared as 2^40
    strings; ``huge_count``: 2^36 keys declared, the first of them a small string. Zeros follow."""
    key = b"tokenizer.ggml.tokens"
    keys = 1 if kind == "huge_array" else 1 << 36
    value = struct.pack("<IIQ", 9, 8, 1 << 40) if kind == "huge_array" else struct.pack("<IQ", 8, 1) + b"x"
    return b"GGUF" + struct.pack("<IQQ", 3, 0, keys) + struct.pack("<Q", len(key)) + key + value


HUGE_ARRAY_SIZE = 1 << 44


@dataclass(frozen=True)
class Forged:
    """An answer made up by the fuzz tier: the real one (``real``) or ``body``, with ``status`` if
    given, ``headers`` added or replacing the real ones (``{self}`` in a value is the URL asked
    for), the body cut to ``cut`` bytes, and a ``Content-Length`` of ``declared`` (default: the bytes
    sent)."""

    real: bool = True
    status: int | None = None
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    cut: int | None = None
    declared: str | None = None


@dataclass(frozen=True)
class Published:
    """A repo on the loopback Hub (a GGUF and a config), a release manifest of it (``manifest``),
    one pinning it as a target (``locked``) and where ``import`` writes (``out``)."""

    repo: str
    manifest: Path
    locked: Path
    out: Path


def publish(hub: LoopbackHub, folder: Path) -> Published:
    """The repo and manifests every read command of ``read_commands`` reads."""
    gguf = write_ik_mixed_gguf(folder / "model.gguf").read_bytes()
    files = {"model.gguf": gguf, "config.json": b'{"architectures": ["DFlashDraftModel"]}\n'}
    repo = unique_repo()
    upload_files(api_for(hub), repo, files)
    release = {"repo_id": repo, "license": "mit"}
    manifest = folder / "rel" / "hubrelease.yaml"
    manifest.parent.mkdir()
    for name, data in files.items():
        (manifest.parent / name).write_bytes(data)
    artifacts = [_entry(name, data) for name, data in files.items()]
    manifest.write_text(yaml.safe_dump({"schema_version": 1, "release": release, "artifacts": artifacts}))
    locked = folder / "pins" / "hubrelease.yaml"
    locked.parent.mkdir()
    (locked.parent / "notes.md").write_bytes(b"n\n")
    pinning = {
        "schema_version": 1,
        "release": {**release, "repo_id": unique_repo()},
        "artifacts": [_entry("notes.md", b"n\n")],
        "pins": {"targets": [{"repo_id": repo, "revision": "main"}]},
    }
    locked.write_text(yaml.safe_dump(pinning))
    return Published(repo, manifest, locked, folder / "imported.yaml")


def _entry(name: str, data: bytes) -> dict[str, object]:
    return {"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def read_commands(p: Published, route: str) -> list[list[str]]:
    """The read commands that send requests to ``route`` (without ``--endpoint``)."""
    inspect_gguf = ["inspect", f"hf://{p.repo}/model.gguf"]
    lint_gguf = ["lint", f"hf://{p.repo}/model.gguf"]
    verify = ["verify", str(p.manifest), "--remote"]
    lock = ["lock", str(p.locked), "--dry-run"]
    import_ = ["import", p.repo, "--out", str(p.out)]
    return {
        "resolve": [inspect_gguf, lint_gguf, import_],
        "cdn": [inspect_gguf, lint_gguf, import_],
        "repo_info": [verify, lock, import_],
        "tree": [verify, import_],
        "paths_info": [lock],
    }[route]


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        """A client that gives up mid-answer is what these cases provoke: nothing to report (socketserver
        would print a traceback on the stderr the CLI under test is writing to)."""


class HostileHub:
    """``with HostileHub(loopback_hub, "drip", route="tree") as hostile: ... hostile.url ...``"""

    def __init__(
        self,
        upstream: LoopbackHub,
        kind: str,
        *,
        route: str = "resolve",
        interval: float = 0.2,
        forged: Forged | None = None,
    ) -> None:
        if kind not in KINDS or route not in ROUTES or (kind == "forged") != (forged is not None):
            raise ValueError(
                f"unknown kind {kind!r} or route {route!r}, or a Forged answer without kind 'forged'"
            )
        self.kind = kind
        self.forged = forged
        self.route = route
        self.interval = interval
        self.requests: Counter[str] = Counter()
        self.sent = 0
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        # The Hub's origin and its storage origin, each behind a listener of its own.
        self._servers = [
            _Server(("127.0.0.1", 0), _handler(self, urlsplit(upstream.url), None)),
            _Server(("127.0.0.1", 0), _handler(self, urlsplit(upstream.cdn_url), "cdn")),
        ]
        self._origins = {upstream.url: self.url, upstream.cdn_url: self.cdn_url}
        self._elsewhere: _Server | None = None
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._servers[0].server_address[1]}"

    @property
    def cdn_url(self) -> str:
        return f"http://127.0.0.1:{self._servers[1].server_address[1]}"

    def start(self) -> HostileHub:
        servers = list(self._servers)
        if self.kind == "redirect_elsewhere":
            self._elsewhere = _Server(("127.0.0.1", 0), _EmptyObject)
            servers.append(self._elsewhere)
        for server in servers:
            thread = threading.Thread(target=server.serve_forever, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        self._stopped.set()
        for server in (*self._servers, self._elsewhere):
            if server is not None:
                server.shutdown()
                server.server_close()
        for thread in self._threads:
            thread.join()

    def proxied(self, value: str) -> str:
        """A header value with the upstream origins in it replaced by the hostile ones."""
        for own, hostile in self._origins.items():
            value = value.replace(own, hostile)
        return value

    def __enter__(self) -> HostileHub:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def count(self, nbytes: int) -> None:
        with self._lock:
            self.sent += nbytes

    def route_of(self, path: str) -> str:
        return next((n for n, pattern in ROUTES.items() if n != "cdn" and pattern.match(path)), "other")


class _EmptyObject(BaseHTTPRequestHandler):
    """The host an API redirect leads to: ``{}`` for every request."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_POST = do_HEAD = do_GET

    def log_message(self, format: str, *args: object) -> None:
        pass


def _handler(hub: HostileHub, upstream: SplitResult, route_name: str | None) -> type[BaseHTTPRequestHandler]:
    """Requests to one origin: ``route_name`` names all of them (the storage origin), else the path does."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            self._serve()

        do_POST = do_HEAD = do_PUT = do_DELETE = do_GET

        def _serve(self) -> None:
            route = route_name or hub.route_of(self.path)
            with hub._lock:
                hub.requests[route] += 1
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if route != hub.route:
                self._reply(*self._forward(body))
                return
            getattr(self, f"_{hub.kind}")(body)

        # -- plumbing

        def _forward(self, body: bytes) -> tuple[int, dict[str, str], bytes]:
            connection = http.client.HTTPConnection(upstream.hostname or "", upstream.port, timeout=30)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "accept-encoding")}
            connection.request(self.command, self.path, body=body or None, headers=headers)
            answer = connection.getresponse()
            data = answer.read()
            connection.close()
            kept = {
                k: hub.proxied(v)
                for k, v in answer.getheaders()
                if k.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server")
            }
            return answer.status, kept, data

        def _reply(
            self, status: int, headers: dict[str, str], data: bytes, *, length: int | None = None
        ) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data) if length is None else length))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
                hub.count(len(data))

        def _close_after(self) -> None:
            self.close_connection = True

        # -- the misbehaviours

        def _content_range_digits(self, body: bytes) -> None:
            self._reply(206, {"Content-Range": "bytes 0-0/" + "9" * 5000, "X-Repo-Commit": "0" * 40}, b"G")

        def _bad_gzip(self, body: bytes) -> None:
            status, headers, _ = self._forward(body)
            headers["Content-Encoding"] = "gzip"
            self._reply(status, headers, b"this is not gzip data at all" * 10)

        def _redirect_loop(self, body: bytes) -> None:
            origin = hub.cdn_url if route_name == "cdn" else hub.url
            self._reply(302, {"Location": f"{origin}{self.path}"}, b"")

        def _short_body(self, body: bytes) -> None:
            status, headers, data = self._forward(body)
            headers["Connection"] = "close"
            self._close_after()
            self._reply(status, headers, data[: len(data) // 2], length=len(data) + 1000)

        def _deep_json(self, body: bytes) -> None:
            self._reply(200, {"Content-Type": "application/json"}, b"[" * DEEP + b"]" * DEEP)

        def _tree_object(self, body: bytes) -> None:
            self._reply(200, {"Content-Type": "application/json"}, b'{"path": "a.bin", "type": "file"}')

        def _redirect_elsewhere(self, body: bytes) -> None:
            assert hub._elsewhere is not None
            port = hub._elsewhere.server_address[1]
            self._reply(307, {"Location": f"http://localhost:{port}{self.path}"}, b"")

        def _drip(self, body: bytes) -> None:
            """The whole answer, status line and headers included (a redirect has little else)."""
            status, headers, data = self._forward(body)
            self._close_after()
            head = [f"HTTP/1.1 {status} Dripping", *(f"{k}: {v}" for k, v in headers.items())]
            head += [f"Content-Length: {len(data)}", "Connection: close", "", ""]
            for byte in ("\r\n".join(head).encode() + data)[:MAX_DRIP]:
                if hub._stopped.wait(hub.interval):
                    return
                try:
                    self.wfile.write(bytes([byte]))
                    self.wfile.flush()
                except OSError:
                    return
                hub.count(1)

        def _stall(self, body: bytes) -> None:
            self._close_after()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.flush()
            hub._stopped.wait(60)

        def _retry_after(self, body: bytes) -> None:
            self._reply(429, {"Retry-After": "100000", "Content-Type": "text/plain"}, b"slow down")

        def _link_loop(self, body: bytes) -> None:
            status, headers, data = self._forward(body)
            headers["Link"] = f'<{hub.url}{self.path}>; rel="next"'
            self._reply(status, headers, data)

        def _forged(self, body: bytes) -> None:
            forged = hub.forged
            assert forged is not None
            status, headers, data = self._forward(body) if forged.real else (200, {}, forged.body)
            here = f"{hub.cdn_url if route_name == 'cdn' else hub.url}{self.path}"
            headers.update((k, v.replace("{self}", here)) for k, v in forged.headers)
            data = data[: forged.cut]
            self._close_after()
            self.send_response(forged.status or status)
            for key, value in {**headers, "Connection": "close"}.items():
                self.send_header(key, value)
            self.send_header("Content-Length", forged.declared or str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
                hub.count(len(data))

        def _huge_count(self, body: bytes) -> None:
            self._huge_array(body)

        def _huge_array(self, body: bytes) -> None:
            prefix = huge_gguf_prefix(hub.kind)
            match = re.match(r"bytes=(\d+)-(\d+)", self.headers.get("Range", ""))
            start, end = (int(match[1]), int(match[2])) if match else (0, 1 << 20)
            end = min(end, start + (64 << 20))  # the server's own bound on one answer
            data = (prefix + bytes(max(0, end + 1 - len(prefix))))[start : end + 1]
            headers = {
                "Content-Range": f"bytes {start}-{start + len(data) - 1}/{HUGE_ARRAY_SIZE}",
                "X-Repo-Commit": "0" * 40,
                "Accept-Ranges": "bytes",
            }
            self._reply(206, headers, data)

    return Handler
