"""Bounds on every remote read (``inspect``/``lint hf://``, ``import``, ``verify --remote``, ``lock``).

A hostile or broken server must not keep a command waiting, fetching or looping: huggingface_hub's
own client has no timeout (``timeout=None``), follows 20 redirects, sleeps as long as a 429's
``Retry-After`` says (100,001 s for ``Retry-After: 100000``) and follows ``Link: rel="next"``
forever. Between ``start`` and ``stop`` (the CLI's, per command), huggingface_hub's shared ``httpx2``
client (every read goes through it: ``set_client_factory`` installs ours) enforces:

- a total deadline for the command's reads, ``HUBRELEASE_REMOTE_DEADLINE`` seconds (default
  ``DEFAULT_DEADLINE``), checked before each request and at each read from a socket (so a server
  that drips its status line and headers, which httpx2 reads before any hook runs, is cut off too);
- a per-read timeout, ``HUBRELEASE_REMOTE_TIMEOUT`` seconds (default ``DEFAULT_TIMEOUT``): connect,
  and each wait for the next bytes of an answer;
- at most ``MAX_REDIRECTS`` redirects per request (httpx2's ``TooManyRedirects``: a loop);
- a 429 asking for more than ``MAX_RATE_LIMIT_WAIT`` seconds, or past the deadline, ends the
  command at once with exit 4 and the time to retry at, instead of sleeping;
- a ``Link: rel="next"`` page already read (a pagination loop) ends it; so do more than
  ``MAX_REQUESTS`` requests;
- no body over ``MAX_BODY`` bytes: a larger ``Content-Length`` is refused before reading, and a
  body without one is cut off there.

Each bound ends the command with one ``HubUnavailable`` line (exit 4: the server's fault). Writes
(``push``) are not bounded here: an upload of a 50 GB file has no sensible deadline.
"""

from __future__ import annotations

import os
import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import httpcore2
import httpx2

from hubrelease.errors import HubUnavailable, InputError
from hubrelease.hub.client import MAX_RATE_LIMIT_WAIT

DEFAULT_DEADLINE = 900.0
DEFAULT_TIMEOUT = 60.0
MAX_REDIRECTS = 10
MAX_REQUESTS = 100_000
MAX_BODY = 257 << 20
"""The largest answer read: a 256 MiB header read (``remote_headers.MAX_HEADER_READ``) and change."""
DEADLINE_ENV = "HUBRELEASE_REMOTE_DEADLINE"
TIMEOUT_ENV = "HUBRELEASE_REMOTE_TIMEOUT"
_DIGITS = 15  # longest number of seconds or bytes a header may give (about 31 million years, 1 PB)


class ReadBoundExceeded(HubUnavailable):
    """A remote read crossed one of the bounds (exit 4). Not an ``httpx2`` error, so huggingface_hub's
    retry loops let it through at once instead of retrying it."""


@dataclass
class Bounds:
    """The bounds of one command's remote reads, and what they have used."""

    deadline: float
    timeout: float
    started: float = field(default_factory=time.monotonic)
    requests: int = 0
    received: int = 0
    chains: dict[str, set[str]] = field(default_factory=dict)
    """Each page a ``Link: rel="next"`` announced, to the pages of its listing read so far (a command
    may list the same tree twice: a loop is a page met again within one listing)."""

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def check_deadline(self, where: str) -> None:
        if self.left() <= 0:
            raise ReadBoundExceeded(
                f"{where}: no complete answer within the {self.deadline - self.started:g} s deadline "
                f"for remote reads (${DEADLINE_ENV})"
            )

    def wait(self, timeout: float | None) -> float:
        """The longest one connect, read or write may block: the per-read timeout, within the deadline."""
        return min(self.timeout if timeout is None else timeout, self.timeout, max(self.left(), 0.001))


_lock = threading.Lock()
_active: Bounds | None = None
_installed = False


def _seconds(name: str, default: float) -> float:
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 1e9:
        raise InputError(f"${name} must be a positive number of seconds, got {text!r}")
    return value


def start() -> Bounds:
    """Bound the remote reads of this command from now on (until ``stop``).

    A command that asks twice (``lint --target hf://... hf://...``) keeps its first deadline.
    """
    global _active
    deadline, timeout = _seconds(DEADLINE_ENV, DEFAULT_DEADLINE), _seconds(TIMEOUT_ENV, DEFAULT_TIMEOUT)
    now = time.monotonic()
    _install()
    with _lock:
        if _active is None:
            _active = Bounds(now + deadline, timeout, now)
        return _active


def stop() -> None:
    global _active
    with _lock:
        _active = None


def _install() -> None:
    """Make huggingface_hub's shared client ours: its own defaults plus the hooks below."""
    global _installed
    if _installed:
        return
    from huggingface_hub import set_client_factory

    set_client_factory(_client)
    _installed = True


def _client() -> httpx2.Client:
    # Private, hence huggingface_hub's bound below its next minor (pyproject.toml): it exports
    # set_client_factory and get_session but not the default factory, whose client ours builds on
    # (utils/_http.py hf_request_event_hook: offline mode, request ids, the download counter); a copy
    # of it here would drift silently, where a rename would fail this import at once.
    from huggingface_hub.utils._http import default_client_factory

    client = default_client_factory()
    # httpx2 has no total timeout and reads a status line and headers before any hook runs: the
    # deadline is applied to each socket read instead, through the connection pools' network backend
    # (httpcore2's ConnectionPool keeps it as ``_network_backend`` and hands it to each new connection).
    # Private attributes of both (httpx2 gives no way to pass a backend to the pools it builds), hence
    # their bounds below the next minor in pyproject.toml, tested at both ends by deps_matrix.sh.
    for transport in (client._transport, *client._mounts.values()):
        pool = getattr(transport, "_pool", None)
        if pool is not None:
            pool._network_backend = _DeadlineBackend(pool._network_backend)
    client.max_redirects = MAX_REDIRECTS
    client.event_hooks["request"].append(_on_request)
    client.event_hooks["response"].append(_on_response)
    return client


def _where(url: httpx2.URL) -> str:
    return f"{url.host}{f':{url.port}' if url.port else ''}{url.path}"


def _on_request(request: httpx2.Request) -> None:
    bounds = _active
    if bounds is None:
        return
    bounds.check_deadline(_where(request.url))
    bounds.requests += 1
    if bounds.requests > MAX_REQUESTS:
        raise ReadBoundExceeded(f"{_where(request.url)}: over {MAX_REQUESTS:,} requests for one command")
    wait = bounds.wait(None)
    request.extensions["timeout"] = {"connect": wait, "read": wait, "write": wait, "pool": wait}


def _number(text: str | None) -> int | None:
    """A header's non-negative integer, None if absent; ``-1`` for one too long to be meant."""
    if text is None:
        return None
    text = text.strip()
    if not text.isdigit():
        return None
    return int(text) if len(text) <= _DIGITS else -1


def _on_response(response: httpx2.Response) -> None:
    bounds = _active
    if bounds is None:
        return
    url = response.request.url
    if response.status_code == 429:
        _refuse_long_wait(response, bounds)
    length = _number(response.headers.get("Content-Length"))
    if length is not None and (length < 0 or length > MAX_BODY):
        raise ReadBoundExceeded(f"{_where(url)}: the answer declares more than the {MAX_BODY:,}-byte cap")
    following = response.links.get("next", {}).get("url")
    if following:
        listing = bounds.chains.pop(str(url), set()) | {str(url)}
        if following in listing:
            raise ReadBoundExceeded(f"{_where(url)}: pagination loop (the next page is one already read)")
        bounds.chains[following] = listing
    if isinstance(response.stream, httpx2.SyncByteStream):
        response.stream = _BoundedStream(response.stream, bounds, url)


def _refuse_long_wait(response: httpx2.Response, bounds: Bounds) -> None:
    """A 429 whose wait is over ``MAX_RATE_LIMIT_WAIT`` or past the deadline ends the command now."""
    from huggingface_hub.utils import parse_ratelimit_headers

    wait = _number(response.headers.get("Retry-After"))
    try:
        info = parse_ratelimit_headers(response.headers)
    except (ValueError, OverflowError):
        info, wait = None, -1
    if info is not None and info.remaining == 0:
        wait = info.reset_in_seconds
    if wait is None:
        return
    if wait < 0 or wait > MAX_RATE_LIMIT_WAIT or wait > bounds.left():
        at = "much later" if wait < 0 else _clock(wait)
        raise ReadBoundExceeded(
            f"{_where(response.request.url)}: rate limited, and the Hub asks to wait "
            f"{'too long' if wait < 0 else f'{wait:,} s'} (hubrelease waits at most {MAX_RATE_LIMIT_WAIT} s "
            f"and within ${DEADLINE_ENV}); retry {at}"
        )


def _clock(seconds: int) -> str:
    when = datetime.now(timezone.utc) + timedelta(seconds=min(seconds, 10**9))
    return f"after {when:%Y-%m-%d %H:%M:%S} UTC"


class _BoundedStream(httpx2.SyncByteStream):
    """A body read within ``MAX_BODY`` (counted raw, before any decoding)."""

    def __init__(self, inner: httpx2.SyncByteStream, bounds: Bounds, url: httpx2.URL) -> None:
        self._inner = inner
        self._bounds = bounds
        self._url = url

    def __iter__(self) -> Iterator[bytes]:
        got = 0
        for chunk in self._inner:
            got += len(chunk)
            self._bounds.received += len(chunk)
            if got > MAX_BODY:
                raise ReadBoundExceeded(
                    f"{_where(self._url)}: the answer is longer than the {MAX_BODY:,}-byte cap"
                )
            yield chunk

    def close(self) -> None:
        self._inner.close()


def _bounded(timeout: float | None, where: str) -> float | None:
    """``timeout`` for one socket operation of an active command: refused past the deadline, else capped."""
    bounds = _active
    if bounds is None:
        return timeout
    bounds.check_deadline(where)
    return bounds.wait(timeout)


class _DeadlineStream(httpcore2.NetworkStream):
    """A connection whose every read and write blocks at most ``Bounds.wait`` and none starts past
    the deadline."""

    def __init__(self, inner: httpcore2.NetworkStream, where: str) -> None:
        self._inner = inner
        self._where = where

    def _bounded(self, timeout: float | None) -> float | None:
        return _bounded(timeout, self._where)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            return self._inner.read(max_bytes, self._bounded(timeout))
        except httpcore2.ReadTimeout:
            bounds = _active
            if bounds is not None:
                bounds.check_deadline(self._where)
            raise

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._bounded(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, self._bounded(timeout)), self._where
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    """httpcore2's network backend with ``_DeadlineStream`` connections."""

    def __init__(self, inner: httpcore2.NetworkBackend) -> None:
        self._inner = inner

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.NetworkStream:
        where = f"{host}:{port}"
        inner = self._inner.connect_tcp(host, port, _bounded(timeout, where), local_address, socket_options)
        return _DeadlineStream(inner, where)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore2.SOCKET_OPTION] | None = None,
    ) -> httpcore2.NetworkStream:
        inner = self._inner.connect_unix_socket(path, _bounded(timeout, path), socket_options)
        return _DeadlineStream(inner, path)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)
