"""Who may do what on the loopback Hub: bearer tokens with a role and a scope, optional anonymity.

A rehearsal server users run must not let anyone in: with tokens configured, a request without
one is refused (401) unless ``allow_anonymous`` (or, for reads of public repos only, ``anonymous_reads``:
a browser on the repo pages, ``preview``). A token has a role (``read`` reads, ``write``
also writes) and a scope: the repos it covers (every repo when it names none), each a pattern
``[TYPE/]ns/name`` or ``[TYPE/]ns/*`` with TYPE one of ``models``, ``datasets``, ``spaces``. Without
a TYPE, ``ns/name`` is the model (a bare repo id names a model on the Hub) and ``ns/*`` every repo
of the namespace, whatever its type; so a token for the model ``acme/x`` never reaches the dataset
``acme/x``. Inside its scope a token reads private repos and, with ``write``, writes;
outside it, it is as good as no token: public repos are readable (writable when anonymous access
is allowed), private ones do not exist (404, as the Hub answers). Anonymous clients never create a
private repo. With anonymous access and no tokens configured (tests), any token is taken as a
write token for every repo, so clients holding an ``HF_TOKEN`` still work. Upload hrefs handed
out by the LFS batch, xorb fetch URLs and the storage URLs resolve redirects to are HMAC-signed
instead, because huggingface_hub sends no token to them.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hubrelease_loopback.store import RepoKey, StoreError

TokenRole = Literal["read", "write"]
ROLES: tuple[TokenRole, ...] = ("read", "write")
_SCOPE = re.compile(r"^(?:(?:models|datasets|spaces)/)?[A-Za-z0-9][\w.-]*/(?:\*|[A-Za-z0-9][\w.-]*)$")
SCOPE_SYNTAX = "TOKEN [read|write] [[TYPE/]ns/name|[TYPE/]ns/* ...]"


def scope_covers(scope: str, key: RepoKey) -> bool:
    """Whether one scope pattern (module docstring) covers ``key``: type, namespace and name."""
    *kind, namespace, name = scope.split("/")
    plural = kind[0] if kind else ("*" if name == "*" else "models")
    key_namespace, slash, key_name = key.repo_id.partition("/")
    return (
        bool(slash)
        and plural in ("*", f"{key.repo_type}s")
        and namespace == key_namespace
        and name in ("*", key_name)
    )


# Routes that carry no Hub token: signed upload/fetch URLs and the CAS (which checks Xet tokens).
UNAUTHENTICATED = frozenset(
    {
        "lfs_upload",
        "lfs_part",
        "lfs_complete",
        "xet_xorb",
        "xet_xorb_grant",
        "xet_xorb_commit",
        "xet_shard",
        "xet_dedup",
        "xet_reconstruction",
        "xet_fetch",
        "xet_telemetry",
        "cdn",
        "oidc_id_token",  # the CI job's request token (GitHub's side of trusted publishing)
        "oauth_token",  # the id token is the credential (RFC 8693 exchange)
        "favicon",
    }
)
# The duplicate routes read their own repo and check write access to their target themselves; a user
# asks a gated repo's owners for access (``gating.py``).
READ_ONLY_POSTS = frozenset({"paths_info", "validate_yaml", "lfs_duplicate", "duplicate", "ask_access"})


@dataclass(frozen=True)
class Grant:
    """What one token may do: its role, and the repos it covers (``None`` = every repo)."""

    role: TokenRole
    scopes: tuple[str, ...] | None = None

    def covers(self, key: RepoKey) -> bool:
        return self.scopes is None or any(scope_covers(scope, key) for scope in self.scopes)

    def writes(self, key: RepoKey) -> bool:
        return self.role == "write" and self.covers(key)


EVERYTHING = Grant("write")


def covers(grant: Grant | None, key: RepoKey) -> bool:
    """Whether a token's scope names ``key``: decided from the grant alone, without reading the store,
    so the answer costs the same whether or not the repo exists (``tenancy.py``)."""
    return grant is not None and grant.covers(key)


def may_read(grant: Grant | None, key: RepoKey, private: bool) -> bool:
    """Public, or private and covered by ``grant``: who sees a repo (and whether it exists)."""
    return not private or covers(grant, key)


class TokenFileError(ValueError):
    """A token file line that is not ``SCOPE_SYNTAX``."""


def read_token_file(path: Path) -> dict[str, Grant]:
    """Tokens from a file: one ``TOKEN [read|write] [SCOPE...]`` per line (write, every repo by
    default), ``#`` comments; a scope is ``[TYPE/]ns/name`` or ``[TYPE/]ns/*`` (module docstring)."""
    tokens: dict[str, Grant] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        role = fields[1] if len(fields) > 1 else "write"
        scopes = fields[2:]
        if role not in ROLES or not all(_SCOPE.match(scope) for scope in scopes):
            raise TokenFileError(f"{path}:{number}: expected '{SCOPE_SYNTAX}'")
        tokens[fields[0]] = Grant("read" if role == "read" else "write", tuple(scopes) or None)
    return tokens


class Access:
    """The token table of one server; thread-safe."""

    def __init__(
        self,
        tokens: Mapping[str, TokenRole | Grant] | None = None,
        allow_anonymous: bool = True,
        anonymous_reads: bool = False,
    ) -> None:
        self._tokens = {k: v if isinstance(v, Grant) else Grant(v) for k, v in (tokens or {}).items()}
        self._lock = threading.Lock()
        self.allow_anonymous = allow_anonymous
        self.anonymous_reads = anonymous_reads or allow_anonymous
        """Clients without a token may read public repos (a browser on the pages); writing needs
        ``allow_anonymous`` or a token."""
        self.open = allow_anonymous and not self._tokens
        """No tokens configured and anonymous allowed (tests): any bearer token writes every repo."""
        self.secret = secrets.token_bytes(32)
        """Signs upload hrefs and xorb fetch URLs."""
        self._expiry: dict[str, float] = {}
        self.clock: Callable[[], float] = time.monotonic
        """What expiring tokens are timed with (a test steps it instead of waiting)."""

    def mint(self, grant: Grant = EVERYTHING, ttl: float | None = None) -> str:
        """A new random token (for the embedded Hub's own client, or an OIDC exchange's ``expires_in``
        when ``ttl`` is given: past it the token is refused, 401); never printed."""
        token = f"hf_loopback_{secrets.token_hex(20)}"
        with self._lock:
            self._tokens[token] = grant
            if ttl is not None:
                self._expiry[token] = self.clock() + ttl
        return token

    def grant(self, authorization: str) -> Grant | None:
        """The grant behind an ``Authorization`` header; None = anonymous. 401 for an unknown token."""
        if not authorization:
            if not self.anonymous_reads:
                raise StoreError(401, "this Hub requires a token (Authorization: Bearer ...)")
            return None
        presented = authorization.removeprefix("Bearer ").strip().encode()
        with self._lock:
            tokens = list(self._tokens.items())
        found = None
        for token, grant in tokens:  # every entry compared in constant time: no early exit to time
            if hmac.compare_digest(token.encode(), presented):
                found = token, grant
        if found is not None:
            if self.clock() >= self._expiry.get(found[0], float("inf")):
                # Refused even on an open Hub, where an unknown token would pass: it was issued to expire.
                raise StoreError(401, "this token has expired")
            return found[1]
        if self.open:
            return EVERYTHING
        raise StoreError(401, "Invalid credentials in Authorization header")

    def knows(self, authorization: str) -> bool:
        """Whether ``authorization`` holds a token of this table (minted or configured), not merely
        one an open Hub would take."""
        presented = authorization.removeprefix("Bearer ").strip().encode()
        with self._lock:
            tokens = list(self._tokens)
        return any([hmac.compare_digest(token.encode(), presented) for token in tokens])

    def sign(self, value: str) -> str:
        return hmac.new(self.secret, value.encode(), hashlib.sha256).hexdigest()

    def check_signature(self, value: str, signature: str) -> None:
        if not hmac.compare_digest(signature, self.sign(value)):
            raise StoreError(403, "bad or missing signature")


def writes(route: str, method: str) -> bool:
    """Whether a request on ``route`` changes something (and so needs write access to its repo)."""
    return (
        method in ("POST", "PUT", "DELETE") and route not in READ_ONLY_POSTS
    ) or route == "xet_write_token"


def require(access: Access, route: str, method: str, authorization: str) -> Grant | None:
    """The caller's grant for ``route``; StoreError 401/403 when no repo could allow it.

    Which repo a grant covers is checked per request (``wire.Request.require_repo``).
    """
    if route in UNAUTHENTICATED:
        return None
    grant = access.grant(authorization)
    if grant is None and not access.allow_anonymous and writes(route, method):
        raise StoreError(401, "this Hub requires a token to write (Authorization: Bearer ...)")
    if writes(route, method) and grant is not None and grant.role == "read":
        raise StoreError(403, "this token is read-only")
    return grant
