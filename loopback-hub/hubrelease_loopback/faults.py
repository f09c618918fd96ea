"""Fault injection and request accounting for the loopback Hub, driven by tests and benchmarks.

A fault matches a request by method, a regular expression searched in its URL path and one
matched in full against its route name (``repo_info``, ``paths_info``, ``tree``, ``commit``,
``validate_yaml``, ``xet_shard``... see ``handler.ROUTES``), fires ``times`` times, then disappears.
Kinds:

- ``status``: answer ``status`` without touching the store (412, 429 with RateLimit headers, 500...),
  with a JSON ``{"error"}`` body, or ``body``/``content_type`` when given (an HTML 502 page);
- ``after``: handle the request (a commit lands), then answer ``status`` anyway (the "500 but
  committed" case of datasets#7708);
- ``drop``: read ``after_bytes`` of the request body, then close the socket without an answer;
- ``corrupt``: flip one byte of an uploaded LFS body, so its sha256 no longer matches its oid;
- ``echo``: answer ``status`` with every request header (``Authorization`` included) echoed in the
  JSON error body and in ``X-Error-Message``, as a careless proxy does: for canary-token tests.

``skip`` lets that many matching requests through before the fault fires (the third commit, not
the first); ``action`` runs when it fires, before the answer (SIGKILL the client at that point).

Shorthands for the Hub's real failure modes: ``rate_limit`` (429 + ``RateLimit``/``RateLimit-Policy``
/``Retry-After``; ``route=METADATA_ROUTES`` hits repo_info, revision, paths-info and tree),
``commit_in_progress`` (409), ``forbidden`` (403), ``yaml_refusal`` (validate-yaml 400 with a JSON
error list), ``bad_gateway`` (502 HTML page), ``echo_headers``. One persistent switch:
``truncate_siblings(n)`` makes repo_info list only ``n`` siblings while paths-info and the tree stay
complete, as the real Hub does for big repos. ``clear()`` disarms everything.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

FaultKind = Literal["status", "after", "drop", "corrupt", "echo"]

METADATA_ROUTES = "repo_info|paths_info|tree|refs"
"""Route names of the metadata reads (repo_info also serves ``/revision/{rev}``) for ``route=``."""
FILE_ROUTES = "resolve|cdn"
"""Route names that send file bytes: resolve, and the storage origin it redirects LFS/Xet files to."""
DATA_ROUTES = "xet_xorb|xet_shard|lfs_upload|lfs_part"
"""Route names that carry release data (Xet xorbs and shards, LFS basic and multipart uploads)."""
COMMIT_IN_PROGRESS = "Another commit operation is in progress for this repository, please retry later."


BAD_GATEWAY_HTML = (
    b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n"
    b"<body><center><h1>502 Bad Gateway</h1></center><hr><center>cloudfront</center></body></html>\n"
)


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
    route: str | None = None
    message: str | None = None
    body: bytes | None = None
    content_type: str = "application/json"
    skip: int = 0
    action: Callable[[], None] | None = None

    def matches(self, method: str, path: str, route: str) -> bool:
        return (
            (self.method is None or self.method == method)
            and re.search(self.path, path) is not None
            and (self.route is None or re.fullmatch(self.route, route) is not None)
        )


class Faults:
    """The armed faults of one server; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self.siblings_limit: int | None = None
        """When set, repo_info lists at most this many siblings (tree and paths-info stay complete)."""
        self.xet_token_epoch = 0
        """Xet tokens minted before the last ``expire_xet_tokens()`` are refused with 401."""
        self._tripwire: tuple[int, Callable[[], None], str] | None = None

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
        route: str | None = None,
        message: str | None = None,
        body: bytes | None = None,
        content_type: str = "application/json",
        skip: int = 0,
        action: Callable[[], None] | None = None,
    ) -> Fault:
        """Arm a fault for the next ``times`` matching requests after the first ``skip``."""
        fault = Fault(
            kind,
            method,
            path,
            times,
            status,
            dict(headers or {}),
            after_bytes,
            route,
            message,
            body,
            content_type,
            skip,
            action,
        )
        with self._lock:
            self._faults.append(fault)
        return fault

    def rate_limit(
        self,
        *,
        method: str | None = None,
        path: str = "",
        times: int = 1,
        reset: int = 0,
        route: str | None = None,
    ) -> Fault:
        """A 429 with the IETF RateLimit headers the Hub sends (``t`` = seconds until reset)."""
        headers = {
            "RateLimit": f'"api";r=0;t={reset}',
            "RateLimit-Policy": '"fixed window";"api";q=1000;w=300',
            "Retry-After": str(reset),
        }
        return self.inject(
            "status",
            method=method,
            path=path,
            times=times,
            status=429,
            headers=headers,
            route=route,
            message="You have exceeded our hourly quotas for action: api. Retry later.",
        )

    def commit_in_progress(self, *, times: int = 1) -> Fault:
        """409 on the commit route: the Hub is still landing another commit on this repo."""
        return self.inject("status", route="commit", times=times, status=409, message=COMMIT_IN_PROGRESS)

    def forbidden(self, *, route: str = "commit", times: int = 1) -> Fault:
        """403: the token may read but not do this (a read token pushing, a gated or locked repo)."""
        message = "You don't have the rights to do this on this repository."
        return self.inject("status", route=route, times=times, status=403, message=message)

    def yaml_refusal(self, message: str = 'Invalid metadata: "license" must be one of [...]') -> Fault:
        """validate-yaml answers 400 with the Hub's ``{"errors": [{"message"}]}`` list, once."""
        body = json.dumps({"errors": [{"message": message}], "warnings": []}).encode()
        return self.inject("status", route="validate_yaml", status=400, message=message, body=body)

    def bad_gateway(self, *, route: str = "validate_yaml", times: int = 1) -> Fault:
        """A 502 whose body is the HTML error page of the proxy in front of the Hub, not JSON."""
        return self.inject(
            "status",
            route=route,
            times=times,
            status=502,
            body=BAD_GATEWAY_HTML,
            content_type="text/html; charset=utf-8",
        )

    def echo_headers(self, *, route: str | None = None, status: int = 400, times: int = 1000) -> Fault:
        """Answer ``status`` with every request header, ``Authorization`` included, in the error."""
        return self.inject("echo", route=route, times=times, status=status)

    def expire_xet_tokens(self) -> None:
        """Every Xet access token minted so far is refused (401) by the CAS; new ones work."""
        self.xet_token_epoch += 1

    def refuse_shard(self, *, status: int = 400, times: int = 1) -> Fault:
        """The CAS refuses the shard upload: xorbs are stored, no file becomes visible."""
        return self.inject("status", route="xet_shard", times=times, status=status, message="shard refused")

    def drop_xorb(self, *, after_bytes: int = 1000, times: int = 1) -> Fault:
        """The connection closes while a xorb uploads (hf_xet retries; ``times`` large makes it fail)."""
        return self.inject("drop", route="xet_xorb", times=times, after_bytes=after_bytes)

    def trip_after(self, nbytes: int, action: Callable[[], None], *, route: str = DATA_ROUTES) -> None:
        """Once ``nbytes`` of request bodies on ``route`` arrived, run ``action`` and drop that request.

        Fires once; the count starts now. Used to kill a push at a deterministic point of its upload.
        """
        with self._lock:
            self._tripwire = (nbytes, action, route)

    def received(self, route: str, nbytes: int) -> bool:
        """Count ``nbytes`` of a request body on ``route``; True once the tripwire fired (the request
        must then be dropped), after running its action."""
        with self._lock:
            wire = self._tripwire
            if wire is None or re.fullmatch(wire[2], route) is None:
                return False
            left, action, pattern = wire
            left -= nbytes
            self._tripwire = None if left <= 0 else (left, action, pattern)
        if left > 0:
            return False
        action()
        return True

    def truncate_siblings(self, limit: int | None) -> None:
        """repo_info lists at most ``limit`` siblings until cleared (``None`` = complete again)."""
        self.siblings_limit = limit

    def take(self, kinds: tuple[FaultKind, ...], method: str, path: str, route: str = "") -> Fault | None:
        """The first armed fault of one of ``kinds`` matching the request, consuming one firing
        (or one of its ``skip``: the request then passes), after running its ``action``."""
        fired = None
        with self._lock:
            for fault in self._faults:
                if fault.kind in kinds and fault.matches(method, path, route):
                    if fault.skip > 0:
                        fault.skip -= 1
                        continue
                    fault.times -= 1
                    if fault.times <= 0:
                        self._faults.remove(fault)
                    fired = fault
                    break
        if fired is not None and fired.action is not None:
            fired.action()
        return fired

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()
            self.siblings_limit = None
            self._tripwire = None

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
    """The requests the server answered (the last ``limit``), for tests and ``bench/remote_verify_bench.py``."""

    def __init__(self, limit: int = 100_000) -> None:
        self._lock = threading.Lock()
        self._records: deque[RequestRecord] = deque(maxlen=limit)

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
        """Requests whose route name ``route`` matches in full (a regular expression, ``FILE_ROUTES``)."""
        return sum(1 for r in self.on(route) if method is None or r.method == method)

    def on(self, route: str | None) -> list[RequestRecord]:
        return [r for r in self.records if route is None or re.fullmatch(route, r.route)]

    def bytes_in(self, route: str | None = None) -> int:
        return sum(r.bytes_in for r in self.on(route))

    def bytes_out(self, route: str | None = None) -> int:
        return sum(r.bytes_out for r in self.on(route))
