"""Request and response values passed between the HTTP handler and the route functions."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote

from hubrelease.safe_parse import ScreenError, parse_json
from hubrelease_loopback.auth import may_read
from hubrelease_loopback.store import REPO_TYPES, RepoKey, StoreError

if TYPE_CHECKING:
    from hubrelease_loopback.auth import Grant
    from hubrelease_loopback.connections import Body
    from hubrelease_loopback.served import ServedHub


@dataclass
class Request:
    """One parsed request. Its body is read only when a view asks for it (``body``, ``json``,
    ``form``, or ``chunks`` for a streamed upload), so a view checks the caller first and a refused
    request costs no body read."""

    hub: ServedHub
    method: str
    params: dict[str, str]
    query: dict[str, list[str]]
    headers: dict[str, str]
    chunks: Body
    """The body (``connections.Body``, capped at the route's limit): ``readinto`` it, or iterate it for copies."""
    grant: Grant | None = None
    """The caller's token grant; None = anonymous (``auth.py``)."""
    writes: bool = False
    """The route changes its repo: ``require_repo`` then also checks write access."""
    _body: bytes | None = field(default=None, repr=False)

    @property
    def body(self) -> bytes:
        """The whole body in memory, read on first use (``chunks`` caps it at the route's limit)."""
        if self._body is None:
            self._body = b"".join(self.chunks)
        return self._body

    def arg(self, name: str, default: str = "") -> str:
        """Path parameter, percent-decoded once (revisions arrive as ``quote(rev, safe='')``)."""
        value = self.params.get(name)
        return unquote(value) if value is not None else default

    def flag(self, name: str) -> bool:
        return self.query.get(name, [""])[0].lower() in ("1", "true")

    def json(self) -> dict[str, Any]:
        """The JSON object body, read through the input screen (``safe_parse.parse_json``: nesting,
        digits, surrogates); anything else is the client's error (400), not the server's (500)."""
        try:
            data = parse_json(self.body or b"{}")
        except ScreenError as exc:
            raise StoreError(400, f"invalid JSON body: {exc.problem}") from None
        if not isinstance(data, dict):
            raise StoreError(400, "the JSON body must be an object")
        return data

    def typed(self, body: dict[str, Any], name: str, kind: type[Any], default: Any = None) -> Any:
        """``body[name]`` when it is a ``kind`` (or absent: ``default``); any other type is a 400
        naming the field, so a string where an object belongs is the client's error."""
        value = body.get(name, default)
        if value is not default and not isinstance(value, kind):
            raise StoreError(400, f"{name!r} must be {kind.__name__}, not {type(value).__name__}")
        return value

    def form(self) -> dict[str, list[str]]:
        try:
            return parse_qs(self.body.decode(), keep_blank_values=True)
        except UnicodeDecodeError:
            raise StoreError(400, "the form body is not UTF-8") from None

    def number(self, value: object, what: str) -> int:
        """A non-negative integer from a client-supplied value, or a 400 naming ``what``."""
        try:
            number = int(str(value))
        except ValueError:
            raise StoreError(400, f"invalid {what}: {value!r}") from None
        if number < 0:
            raise StoreError(400, f"invalid {what}: {value!r}")
        return number

    @property
    def repo(self) -> RepoKey:
        """The repo named by the path: ``{t}s/{ns}/{name}`` (API) or ``[{t}s/]{ns}/{name}`` (git, resolve)."""
        plural = self.params.get("t") or "models"
        repo_type = plural[:-1]
        if repo_type not in REPO_TYPES:
            raise StoreError(404, f"unknown repo type {plural}")
        return RepoKey(repo_type, f"{unquote(self.params['ns'])}/{unquote(self.params['name'])}")

    def can_read(self, key: RepoKey) -> bool:
        """Public, or private and covered by the caller's token (``auth.may_read``)."""
        return may_read(self.grant, key, self.hub.store.refs(key)["private"])

    def can_write(self, key: RepoKey) -> bool:
        """Covered by a write token, or public on a Hub that lets anonymous clients write."""
        if self.grant is not None and self.grant.writes(key):
            return True
        return self.hub.access.allow_anonymous and not self.hub.store.refs(key)["private"]

    def can_write_new(self, key: RepoKey, private: bool) -> bool:
        """Whether the caller may create (or move a repo to) ``key``.

        Outside its token's scope, a caller may not create in a namespace that holds a repo it cannot
        read: else a 409 for a private repo's name beside a 200 for a free one would tell that the
        repo exists. Every name there is refused alike (403), as the Hub refuses a namespace one may
        not write (huggingface_hub 2.4.0 ``create_repo`` takes that 403 as "may exist", ``hf_api.py``
        4766-4781). An open test Hub (no tokens configured: any token reads everything) hides nothing.
        """
        if self.grant is not None and self.grant.writes(key):
            return True
        if not self.hub.access.allow_anonymous or private:
            return False
        namespace = key.repo_id.partition("/")[0]
        return self.hub.access.open or all(
            self.can_read(held)
            for held in self.hub.store.repos()
            if held.repo_id.partition("/")[0] == namespace
        )

    def require_repo(self, key: RepoKey | None = None) -> RepoKey:
        """The repo, which must exist and be readable by the caller (else 404, as the Hub: a private
        repo's existence is never revealed) and, on a route that writes, writable (else 403)."""
        key = key or self.repo
        self.hub.store.require(key)
        if not self.can_read(key):
            raise StoreError(
                404, f"Repository Not Found for url: {key.repo_type}s/{key.repo_id}.", "RepoNotFound"
            )
        if self.writes and not self.can_write(key):
            raise StoreError(403, "You don't have the rights to write to this repository.")
        return key


@dataclass
class Response:
    """Status, headers and one of: in-memory bytes, a slice of a file on disk, or ``length`` bytes
    from an iterator (a file decoded from its xorbs)."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    file: Path | None = None
    offset: int = 0
    length: int = 0
    stream: Iterator[bytes] | None = None

    @property
    def content_length(self) -> int:
        return self.length if self.file is not None or self.stream is not None else len(self.body)


_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
_HUGE = 1 << 63  # a position past any file: 5,000 digits are a number too, not an internal error


def _position(digits: str) -> int:
    return int(digits) if len(digits) <= 18 else _HUGE


def parse_range(spec: str, size: int) -> tuple[int, int] | None:
    """The inclusive byte span a ``Range`` header asks of a ``size``-byte file, None for the whole
    file (no header, or one that does not parse or names several ranges: ignored, RFC 9110 14.2).
    A span that starts past the end is a 416 ``StoreError``."""
    found = _RANGE.match(spec.strip())
    if found is None or not (found[1] or found[2]):
        return None
    first, last = found[1], found[2]
    if not first:  # a suffix: the last N bytes
        return max(size - _position(last), 0), size - 1
    start = _position(first)
    end = min(_position(last), size - 1) if last else size - 1
    if start >= size or (last and _position(last) < start):
        raise StoreError(416, f"range {spec!r} is not satisfiable for {size} bytes")
    return start, end


def json_response(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(payload).encode()
    return Response(status, {"Content-Type": "application/json", **(headers or {})}, body)


def error_response(exc: StoreError) -> Response:
    """The Hub's error shape: JSON ``{"error"}`` plus ``X-Error-Code``/``X-Error-Message``."""
    headers = {"X-Error-Message": exc.message}
    if exc.code:
        headers["X-Error-Code"] = exc.code
    return json_response({"error": exc.message}, exc.status, headers)
