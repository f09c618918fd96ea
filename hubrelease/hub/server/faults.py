"""Fault injection and request accounting for the loopback Hub, driven by tests and benchmarks.

A fault matches a request by method and a regular expression searched in its URL path, fires
``times`` times, then disappears. Kinds:

- ``status``: answer ``status`` without touching the store (412, 429 with RateLimit headers, 500...);
- ``after``: handle the request (a commit lands), then answer ``status`` anyway (the "500 but
  committed" case of datasets#7708);
- ``drop``: read ``after_bytes`` of the request body, then close the socket without an answer;
- ``corrupt``: flip one byte of an uploaded LFS body, so its sha256 no longer matches its oid.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Literal

FaultKind = Literal["status", "after", "drop", "corrupt"]


@dataclass
class Fault:
    """One armed fault; ``times`` counts down as it fires."""

    kind: FaultKind
    method: str | None
    path: str
    times: int
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    after_bytes: int = 0

    def matches(self, method: str, path: str) -> bool:
        return (self.method is None or self.method == method) and re.search(self.path, path) is not None


class Faults:
    """The armed faults of one server; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def inject(
        self,
        kind: FaultKind,
        *,
        method: str | None = None,
        path: str = "",
        times: int = 1,
        status: int = 500,
        headers: dict[str, str] | None = None,
        after_bytes: int = 0,
    ) -> Fault:
        """Arm a fault for the next ``times`` matching requests."""
        fault = Fault(kind, method, path, times, status, dict(headers or {}), after_bytes)
        with self._lock:
            self._faults.append(fault)
        return fault

    def rate_limit(
        self, *, method: str | None = None, path: str = "", times: int = 1, reset: int = 0
    ) -> Fault:
        """A 429 with the IETF RateLimit headers the Hub sends (``t`` = seconds until reset)."""
        headers = {
            "RateLimit": f'"api";r=0;t={reset}',
            "RateLimit-Policy": '"fixed window";"api";q=1000;w=300',
            "Retry-After": str(reset),
        }
        return self.inject("status", method=method, path=path, times=times, status=429, headers=headers)

    def take(self, kinds: tuple[FaultKind, ...], method: str, path: str) -> Fault | None:
        """The first armed fault of one of ``kinds`` matching the request, consuming one firing."""
        with self._lock:
            for fault in self._faults:
                if fault.kind in kinds and fault.matches(method, path):
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                    return fault
        return None

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    @property
    def pending(self) -> list[Fault]:
        with self._lock:
            return list(self._faults)


@dataclass(frozen=True)
class RequestRecord:
    """What one request moved over the wire (bodies only, headers excluded)."""

    method: str
    path: str
    route: str
    status: int
    bytes_in: int
    bytes_out: int


class RequestLog:
    """Every request the server answered, for tests and ``bench/remote_verify_bench.py``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[RequestRecord] = []

    def add(self, record: RequestRecord) -> None:
        with self._lock:
            self._records.append(record)

    def clear(self) -> None:
        with self._lock:
            self._records.clear()

    @property
    def records(self) -> list[RequestRecord]:
        with self._lock:
            return list(self._records)

    def count(self, route: str | None = None, method: str | None = None) -> int:
        return sum(
            1
            for r in self.records
            if (route is None or r.route == route) and (method is None or r.method == method)
        )

    def bytes_in(self, route: str | None = None) -> int:
        return sum(r.bytes_in for r in self.records if route is None or r.route == route)

    def bytes_out(self, route: str | None = None) -> int:
        return sum(r.bytes_out for r in self.records if route is None or r.route == route)
