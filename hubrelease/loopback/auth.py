"""Who may do what on the loopback Hub: bearer tokens with a read or write role, optional anonymity.

A rehearsal server users run must not let anyone in: with tokens configured, a request without
one is refused (401) unless ``allow_anonymous``; a read token reads, a write token also writes.
Anonymous requests (tests, ``--allow-anonymous``) may write public repos but never see a private
one (404, as the Hub answers), and cannot create one; with anonymous access and no tokens
configured, any token is taken as a write token (so clients holding an ``HF_TOKEN`` still work). Upload hrefs handed out by the LFS batch and
xorb fetch URLs are HMAC-signed instead, because huggingface_hub sends no token to them.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from pathlib import Path
from typing import Literal

from hubrelease.loopback.store import StoreError

Role = Literal["read", "write"]
ROLES: tuple[Role, ...] = ("read", "write")

# Routes that carry no Hub token: signed upload/fetch URLs and the CAS (which checks Xet tokens).
UNAUTHENTICATED = frozenset(
    {
        "lfs_upload",
        "lfs_part",
        "lfs_complete",
        "xet_xorb",
        "xet_shard",
        "xet_dedup",
        "xet_reconstruction",
        "xet_fetch",
        "xet_telemetry",
    }
)
READ_ONLY_POSTS = frozenset({"paths_info", "validate_yaml"})


class TokenFileError(ValueError):
    """A token file line that is not ``TOKEN [read|write]``."""


def read_token_file(path: Path) -> dict[str, Role]:
    """Tokens from a file: one ``TOKEN [read|write]`` per line (write by default), ``#`` comments."""
    tokens: dict[str, Role] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        role = fields[1] if len(fields) > 1 else "write"
        if len(fields) > 2 or role not in ROLES:
            raise TokenFileError(f"{path}:{number}: expected 'TOKEN [read|write]'")
        tokens[fields[0]] = "read" if role == "read" else "write"
    return tokens


class Access:
    """The token table of one server; thread-safe."""

    def __init__(self, tokens: dict[str, Role] | None = None, allow_anonymous: bool = True) -> None:
        self._tokens = dict(tokens or {})
        self._lock = threading.Lock()
        self.allow_anonymous = allow_anonymous
        self.open = allow_anonymous and not self._tokens
        """No tokens configured and anonymous allowed (tests): any bearer token counts as a write token."""
        self.secret = secrets.token_bytes(32)
        """Signs upload hrefs and xorb fetch URLs."""

    def mint(self, role: Role) -> str:
        """A new random token with ``role`` (for the embedded Hub's own client; never printed)."""
        token = f"hf_loopback_{secrets.token_hex(20)}"
        with self._lock:
            self._tokens[token] = role
        return token

    def role(self, authorization: str) -> Role | None:
        """The role behind an ``Authorization`` header; None = anonymous. 401 for an unknown token."""
        if not authorization:
            if not self.allow_anonymous:
                raise StoreError(401, "this Hub requires a token (Authorization: Bearer ...)")
            return None
        presented = authorization.removeprefix("Bearer ").strip().encode()
        with self._lock:
            tokens = list(self._tokens.items())
        for token, role in tokens:
            if hmac.compare_digest(token.encode(), presented):
                return role
        if self.open:
            return "write"
        raise StoreError(401, "Invalid credentials in Authorization header")

    def sign(self, value: str) -> str:
        return hmac.new(self.secret, value.encode(), hashlib.sha256).hexdigest()

    def check_signature(self, value: str, signature: str) -> None:
        if not hmac.compare_digest(signature, self.sign(value)):
            raise StoreError(403, "bad or missing signature")


def require(access: Access, route: str, method: str, authorization: str) -> Role | None:
    """The caller's role for ``route``; StoreError 401/403 when it may not call it."""
    if route in UNAUTHENTICATED:
        return None
    role = access.role(authorization)
    writes = method in ("POST", "PUT", "DELETE") and route not in READ_ONLY_POSTS
    if (writes and role == "read") or (route == "xet_write_token" and role == "read"):
        raise StoreError(403, "this token is read-only")
    return role
