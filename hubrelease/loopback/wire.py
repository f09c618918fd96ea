"""Request and response values passed between the HTTP handler and the route functions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote

from hubrelease.loopback.store import REPO_TYPES, RepoKey, StoreError

if TYPE_CHECKING:
    from hubrelease.loopback import LoopbackHub
    from hubrelease.loopback.auth import Role


@dataclass
class Request:
    """One parsed request. ``body`` is empty for streamed uploads, which read ``chunks`` instead."""

    hub: LoopbackHub
    method: str
    params: dict[str, str]
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    chunks: Iterator[bytes] = field(default_factory=lambda: iter(()))
    role: Role | None = None
    """The caller's token role; None = anonymous (``auth.py``)."""

    def arg(self, name: str, default: str = "") -> str:
        """Path parameter, percent-decoded once (revisions arrive as ``quote(rev, safe='')``)."""
        value = self.params.get(name)
        return unquote(value) if value is not None else default

    def flag(self, name: str) -> bool:
        return self.query.get(name, [""])[0].lower() in ("1", "true")

    def json(self) -> dict[str, Any]:
        """The JSON object body; anything else is the client's error (400), not the server's (500)."""
        try:
            data = json.loads(self.body or b"{}")
        except ValueError as exc:
            raise StoreError(400, f"invalid JSON body: {exc}") from None
        if not isinstance(data, dict):
            raise StoreError(400, "the JSON body must be an object")
        return data

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

    def require_repo(self) -> RepoKey:
        """The repo, which must exist and, when private, be asked for with a token (else 404, as the Hub)."""
        key = self.repo
        self.hub.store.require(key)
        if self.role is None and self.hub.store.refs(key)["private"]:
            raise StoreError(
                404, f"Repository Not Found for url: {key.repo_type}s/{key.repo_id}.", "RepoNotFound"
            )
        return key


@dataclass
class Response:
    """Status, headers and either in-memory bytes or a slice of a file on disk."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    file: Path | None = None
    offset: int = 0
    length: int = 0

    @property
    def content_length(self) -> int:
        return self.length if self.file is not None else len(self.body)


def json_response(payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(payload).encode()
    return Response(status, {"Content-Type": "application/json", **(headers or {})}, body)


def error_response(exc: StoreError) -> Response:
    """The Hub's error shape: JSON ``{"error"}`` plus ``X-Error-Code``/``X-Error-Message``."""
    headers = {"X-Error-Message": exc.message}
    if exc.code:
        headers["X-Error-Code"] = exc.code
    return json_response({"error": exc.message}, exc.status, headers)
