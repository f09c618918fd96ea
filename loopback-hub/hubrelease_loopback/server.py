"""The loopback Hub itself: ``LoopbackHub`` runs the server (``handler``) over a store, faults and a request log
on a daemon thread, with a second listener as the storage origin (package docstring: what it speaks)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING
from urllib.parse import quote

from hubrelease_loopback.auth import Access, Grant, TokenRole
from hubrelease_loopback.faults import Faults, RequestLog
from hubrelease_loopback.oidc import TrustedPublishing
from hubrelease_loopback.store import HubStore
from hubrelease_loopback.xetstore import XetStore

if TYPE_CHECKING:
    from hubrelease_loopback.handler import HubHTTPServer
    from hubrelease_loopback.pages import Problem

MAX_ERRORS = 100
CDN_URL_TTL = 3600
"""Seconds a storage URL stays valid (the Hub's signed CDN URLs carry one hour)."""


class LoopbackHub:
    """The server plus its store, faults and request log; serves from a daemon thread."""

    def __init__(
        self,
        root: str | Path,
        *,
        port: int = 0,
        storage_port: int = 0,
        page_size: int = 1000,
        page_size_expand: int = 50,
        multipart_threshold: int = 64 * 1024 * 1024,
        multipart_chunk: int = 16 * 1024 * 1024,
        access_log: Callable[[str], None] | None = None,
        max_workers: int = 64,
        anonymous_workers: int = 8,
        idle_timeout: float = 75.0,
        header_timeout: float = 30.0,
        request_timeout: float = 60.0,
        min_upload_rate: int = 64 * 1024,
        max_connections: int = 512,
        max_header_bytes: int = 64 * 1024,
        max_body: int = 64 * 1024 * 1024,
        max_upload: int = 64 * 1024**3,
        tokens: Mapping[str, TokenRole | Grant] | None = None,
        allow_anonymous: bool = True,
        anonymous_reads: bool = True,
    ) -> None:
        from hubrelease_loopback.handler import HubHTTPServer

        self.store = HubStore(root)
        self.xet = XetStore(self.store, max_file=max_upload)
        self.access = Access(tokens, allow_anonymous, anonymous_reads)
        self.owner_token = self.access.mint()
        """A write token for the process that started the server (``--endpoint local``); never printed."""
        self.faults = Faults()
        self.oidc = TrustedPublishing()
        """Trusted publishers and CI jobs: the stand-in for GitHub's OIDC issuer (``oidc.py``)."""
        self.requests = RequestLog()
        self.server_errors: list[BaseException] = []
        """Unexpected exceptions raised while serving (answered as HTTP 500); tests assert it stays empty.
        The first ``MAX_ERRORS`` are kept, so a long-running ``hub serve`` cannot grow without bound."""
        self.max_workers = max_workers
        self.anonymous_workers = anonymous_workers
        """Workers for requests without a credential the server knows (``HubHTTPServer._credentialed``),
        apart from ``max_workers``: slow anonymous bodies never starve clients with a token."""
        self.idle_timeout = idle_timeout
        """Seconds a kept-alive connection may wait for its next request before it is closed."""
        self.header_timeout = header_timeout
        """Seconds a request head (request line and headers) may take to arrive whole (``connections.py``)."""
        self.request_timeout = request_timeout
        """Seconds a request body may go without sending a byte (a stalled upload, a malformed chunk)."""
        self.min_upload_rate = min_upload_rate
        """Bytes per second a body must average once ``request_timeout`` has passed, or 408."""
        self.max_connections = max_connections
        """Open connections; past it the one held longest waiting for a request head is closed."""
        self.max_header_bytes = max_header_bytes
        """Largest request head; larger is 431."""
        self.max_body = max_body
        """Largest body read into memory (JSON, forms, shards); each route has its own smaller bound
        (``handler.BODY_LIMITS``); larger is 413."""
        self.max_upload = max_upload
        """Largest streamed body (LFS object, xorb, multipart part; a commit has its own bound); larger is 413."""
        self.page_size = page_size
        self.page_size_expand = page_size_expand
        self.multipart_threshold = multipart_threshold
        self.multipart_chunk = multipart_chunk
        self.access_log = access_log
        """Called with one line per answered request (``hub serve`` prints them): method, path, status, bytes."""
        self._httpd = HubHTTPServer(("127.0.0.1", port), self)
        self._cdn = HubHTTPServer(("127.0.0.1", storage_port), self, cdn=True)
        self._threads: list[tuple[HubHTTPServer, threading.Thread]] = []
        self.cdn_ttl = CDN_URL_TTL
        self.refuse_invalid_cards = True
        """validate-yaml refuses (400) front matter the Hub would refuse; off, it only warns (``preview``)."""

    def note_error(self, error: BaseException) -> None:
        if len(self.server_errors) < MAX_ERRORS:
            self.server_errors.append(error)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def cdn_url(self) -> str:
        """The storage origin: another origin than ``url``, so the client treats it as the Hub's CDN
        (on the same origin, HEAD would follow the redirect and lose the file's metadata headers,
        ``utils/_http.py`` 776-780 in huggingface_hub 2.4.0); its port is ``storage_port`` (0: any)."""
        return f"http://127.0.0.1:{self._cdn.server_address[1]}"

    def cdn_location(self, sha256: str, size: int, name: str) -> str:
        """A signed, expiring storage URL for one object (``routes.cdn_object`` checks it)."""
        expires = int(time.time()) + self.cdn_ttl
        sig = self.access.sign(f"cdn|{sha256}|{size}|{expires}|{name}")
        return f"{self.cdn_url}/{sha256}/{quote(name, safe='')}?size={size}&expires={expires}&sig={sig}"

    def page_problems(self, repo_type: str, repo_id: str, revision: str) -> list[Problem]:
        """The problems of the repo's page at ``revision`` (``pages.page_parts``): what ``preview`` reports."""
        from hubrelease_loopback.pages import page_parts
        from hubrelease_loopback.store import RepoKey

        return page_parts(self, RepoKey(repo_type, repo_id), revision)[2]

    def _serve_in_thread(self, server: HubHTTPServer, name: str) -> None:
        thread = threading.Thread(target=server.serve_forever, name=name, daemon=True)
        thread.start()
        self._threads.append((server, thread))

    def start(self) -> LoopbackHub:
        """Serve in daemon threads; returns self."""
        if not self._threads:
            self._serve_in_thread(self._cdn, "loopback-cdn")
            self._serve_in_thread(self._httpd, "loopback-hub")
        return self

    def serve_forever(self) -> None:
        """Serve on the calling thread until interrupted (``hubrelease hub serve``); storage in a thread."""
        if not self._threads:
            self._serve_in_thread(self._cdn, "loopback-cdn")
        self._httpd.serve_forever()

    def stop(self) -> None:
        for server, thread in self._threads:
            server.shutdown()
            thread.join()
        self._threads = []
        self._httpd.server_close()
        self._cdn.server_close()

    def __enter__(self) -> LoopbackHub:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
