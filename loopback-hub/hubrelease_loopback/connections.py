"""Connections of the loopback Hub between requests: held by one thread until a request head arrives.

A worker thread is given a connection only once its request line and headers are all in, so a
client that sends them slowly (slowloris), or keeps a connection open and idle, holds a socket and
a few kilobytes here instead of a worker. Bounds, each a ``LoopbackHub`` setting:

- ``header_timeout``: a request head must arrive whole within this many seconds of its first byte
  (of the connection's accept for the first request), else the connection is closed;
- ``idle_timeout``: a kept-alive connection with nothing sent is closed after this long;
- ``max_header_bytes``: a request head larger than this is answered 431 and closed;
- ``max_connections``: open connections (held here or being served); past it the connection held
  here the longest is closed for the new one, so slow clients cannot keep others out.

Bodies (``Body``) are read by the worker with their own bounds: ``request_timeout`` of silence,
a minimum average rate, and a size cap.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from hubrelease_loopback.store import StoreError

HEAD_END = (b"\r\n\r\n", b"\n\n")
TOO_LARGE = b"HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


@dataclass
class _Held:
    """A connection waiting for its request head: what arrived so far, and since when it waits."""

    sock: socket.socket
    buffer: bytearray = field(default_factory=bytearray)
    since: float = field(default_factory=time.monotonic)
    started: float | None = None
    """When the first byte of the current request head arrived (None: idle)."""


class Admission:
    """Holds connections until their request head is complete, then hands them to ``dispatch``."""

    def __init__(
        self,
        dispatch: Callable[[socket.socket, bytes], None],
        *,
        header_timeout: float,
        idle_timeout: float,
        max_header_bytes: int,
        max_connections: int,
    ) -> None:
        self._dispatch = dispatch
        self.header_timeout = header_timeout
        self.idle_timeout = idle_timeout
        self.max_header_bytes = max_header_bytes
        self.max_connections = max_connections
        self._selector = selectors.DefaultSelector()
        self._held: dict[int, _Held] = {}
        self._incoming: list[tuple[socket.socket, bytes, bool]] = []
        self._lock = threading.Lock()
        self.active = 0
        """Connections handed to a worker and not back yet."""
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ)
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._run, name="loopback-hub-admission", daemon=True)
        self._thread.start()

    @property
    def open_connections(self) -> int:
        with self._lock:
            return len(self._held) + len(self._incoming) + self.active

    def admit(self, sock: socket.socket, leftover: bytes = b"", returning: bool = False) -> None:
        """Hold ``sock`` until its next request head arrives (``leftover``: bytes already read).

        ``returning``: a connection a worker gives back after a response (it counted as active).
        """
        with self._lock:
            if returning:
                self.active -= 1
            self._incoming.append((sock, leftover, returning))
        self._wake()

    def done(self, sock: socket.socket) -> None:
        """A worker closed a connection it was given."""
        with self._lock:
            self.active -= 1
        _close(sock)

    def close(self) -> None:
        self._closing.set()
        self._wake()
        self._thread.join()
        for held in list(self._held.values()):
            _close(held.sock)
        self._held.clear()
        for sock, _, _ in self._incoming:
            _close(sock)
        self._selector.close()
        self._wake_r.close()
        self._wake_w.close()

    def _wake(self) -> None:
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    def _run(self) -> None:
        while not self._closing.is_set():
            for key, _ in self._selector.select(timeout=0.25):
                if key.fileobj is self._wake_r:
                    with contextlib.suppress(BlockingIOError):
                        self._wake_r.recv(4096)
                else:
                    self._readable(self._held[key.fd])
            self._take_incoming()
            self._expire()

    def _take_incoming(self) -> None:
        with self._lock:
            incoming, self._incoming = self._incoming, []
        for sock, leftover, returning in incoming:
            held = _Held(sock, bytearray(leftover))
            if leftover:
                held.started = held.since
            if not returning and len(self._held) + self.active >= self.max_connections:
                self._evict_oldest()
            sock.setblocking(False)
            self._held[sock.fileno()] = held
            self._selector.register(sock, selectors.EVENT_READ)
            self._complete(held)  # a kept-alive client may have sent its next request already

    def _evict_oldest(self) -> None:
        if self._held:
            oldest = min(self._held.values(), key=lambda h: h.since)
            self._drop(oldest)

    def _readable(self, held: _Held) -> None:
        try:
            data = held.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._drop(held)
            return
        if held.started is None:
            held.started = time.monotonic()
        held.buffer += data
        self._complete(held)

    def _complete(self, held: _Held) -> None:
        """Hand the connection to a worker once its head is in; refuse an oversized head."""
        if any(end in held.buffer for end in HEAD_END):
            self._release(held)
            with self._lock:
                self.active += 1
            held.sock.setblocking(True)
            self._dispatch(held.sock, bytes(held.buffer))
        elif len(held.buffer) > self.max_header_bytes:
            with contextlib.suppress(OSError):
                held.sock.send(TOO_LARGE)
            self._drop(held)

    def _expire(self) -> None:
        now = time.monotonic()
        for held in list(self._held.values()):
            waited = now - (held.started if held.started is not None else held.since)
            limit = self.header_timeout if held.started is not None else self.idle_timeout
            if waited > limit:
                self._drop(held)

    def _release(self, held: _Held) -> None:
        self._held.pop(held.sock.fileno(), None)
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(held.sock)

    def _drop(self, held: _Held) -> None:
        self._release(held)
        _close(held.sock)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()


class ConnReader:
    """The request side of one connection: what the admission thread already read, then the socket.

    Reads straight into the caller's buffer when nothing is pending (``readinto``), so an upload
    body is copied once from the kernel. ``pending`` is what was read past the current request (a
    pipelined next request), given back to the admission thread with the connection.
    """

    def __init__(self, sock: socket.socket, prefix: bytes) -> None:
        self.sock = sock
        self.pending = bytearray(prefix)

    def _fill(self) -> bool:
        data = self.sock.recv(65536)
        self.pending += data
        return bool(data)

    def readline(self, limit: int = -1) -> bytes:
        while True:
            end = self.pending.find(b"\n")
            if end >= 0 or (0 <= limit <= len(self.pending)):
                cut = end + 1 if end >= 0 else limit
                if limit >= 0:
                    cut = min(cut, limit)
                return self._take(cut)
            if not self._fill():
                return self._take(len(self.pending))

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            while self._fill():
                pass
            return self._take(len(self.pending))
        while len(self.pending) < size and self._fill():
            pass
        return self._take(min(size, len(self.pending)))

    def readinto(self, view: memoryview) -> int:
        """At most ``len(view)`` bytes (one socket read, or what is pending); 0 at the end."""
        if self.pending:
            count = min(len(view), len(self.pending))
            view[:count] = self.pending[:count]
            del self.pending[:count]
            return count
        return self.sock.recv_into(view)

    def _take(self, count: int) -> bytes:
        out = bytes(self.pending[:count])
        del self.pending[:count]
        return out


class Body:
    """One request body as a ``readinto`` source: Content-Length or chunked framing, a size cap,
    a minimum average rate, byte counting, and the ``corrupt`` fault. ``readinto`` reads the socket
    straight into the caller's buffer; iterating yields copies, for views that keep what they read."""

    def __init__(
        self,
        reader: ConnReader,
        length: int | None,
        *,
        limit: int,
        min_rate: int,
        grace: float,
        counted: Callable[[int], None],
        corrupt: bool = False,
    ) -> None:
        self._reader = reader
        self._left = length  # None: chunked, framed by chunk-size lines
        self._chunk = 0
        self._ended = length == 0
        self._limit = limit
        self._min_rate = min_rate
        self._grace = grace
        self._counted = counted
        self._corrupt = corrupt
        self._start = time.monotonic()
        self.received = 0
        self.broken = False
        """Set once a refusal left the body half read: the connection cannot carry another request."""

    def _broken(self, status: int, message: str) -> StoreError:
        self.broken = True
        return StoreError(status, message)

    def readinto(self, view: memoryview) -> int:
        """Up to ``len(view)`` bytes of the body, 0 once it is over. ``StoreError`` for a body that
        cannot be framed (400), is over ``limit`` (413), or arrives slower than ``min_rate`` bytes/s
        on average once ``grace`` seconds have passed (408)."""
        if self._ended or not len(view):
            return 0
        want = len(view)
        if self._left is not None:
            want = min(want, self._left)
        else:
            if self._chunk == 0 and not self._next_chunk():
                return 0
            want = min(want, self._chunk)
        got = self._reader.readinto(view[:want])
        if not got:
            self._ended = True
            return 0
        if self._left is not None:
            self._left -= got
            self._ended = self._left == 0
        else:
            self._chunk -= got
            if self._chunk == 0:
                self._reader.readline(8)  # the CRLF after a chunk's data
        if self._corrupt and self.received == 0:  # the "corrupt" fault: one byte flipped in transit
            view[0] = view[0] ^ 0xFF
        self.received += got
        self._counted(got)
        if self.received > self._limit:
            raise self._broken(413, f"upload larger than {self._limit} bytes")
        elapsed = time.monotonic() - self._start
        if elapsed > self._grace + self.received / self._min_rate:
            raise self._broken(408, f"request body slower than {self._min_rate} bytes/s")
        return got

    def _next_chunk(self) -> bool:
        line = self._reader.readline(1024).split(b";")[0].strip()
        try:
            size = int(line or b"0", 16)
        except ValueError:
            raise self._broken(400, f"invalid chunk size {line[:40]!r}") from None
        if size == 0:
            while self._reader.readline(8192) not in (b"\r\n", b"\n", b""):
                pass
            self._ended = True
            return False
        self._chunk = size
        return True

    def drain(self, most: int | None = None) -> bool:
        """Read and drop the rest of the body, at most ``most`` bytes (None: all); True if it ended."""
        buffer = memoryview(bytearray(1 << 16))
        left = most
        while not self._ended and (left is None or left > 0):
            got = self.readinto(buffer if left is None else buffer[: min(left, len(buffer))])
            if not got:
                break
            if left is not None:
                left -= got
        return self._ended

    def __iter__(self) -> Iterator[bytes]:
        buffer = memoryview(bytearray(1 << 20))
        while count := self.readinto(buffer):
            yield bytes(buffer[:count])
