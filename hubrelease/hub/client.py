"""One place that builds ``HfApi`` objects, for a real Hub URL or the embedded local Hub.

The token is left to huggingface_hub's usual sources (``HF_TOKEN``, ``hf auth login``); this module
never reads, prints or logs it. ``--endpoint local`` starts (once per process) a loopback Hub on a
free port, disk-backed in a per-user folder; it answers only a token it minted for this process,
so the user needs none and nothing else on the machine can read or write it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

import httpx2
from huggingface_hub import HfApi
from huggingface_hub.errors import (
    HfHubHTTPError,
    HFValidationError,
    OIDCError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.utils import parse_ratelimit_headers

from hubrelease.errors import HubError, HubReleaseError, HubUnavailable, InputError, NotFoundError

if TYPE_CHECKING:
    from hubrelease.local_hub import LocalHub

T = TypeVar("T")
log = logging.getLogger("hubrelease.hub")
"""Notices for the user: warnings the CLI prints on stderr; info (a rate-limit wait as it starts)
only on a terminal, since a command that gives up says in its one error line how often it waited."""
DEFAULT_RATE_LIMIT_WAIT = 30
# A metadata read waits at most this long in total for rate limits before giving up with exit 4:
# the Hub's API window is 5 minutes (huggingface.co/docs/hub/rate-limits, hub-api.md 5).
MAX_RATE_LIMIT_WAIT = 300
MAX_RATE_LIMIT_RETRIES = 3
FOREVER = 10**9
"""The wait a 429 asks for when its number is too long to be meant (past any bound)."""
sleep: Callable[[float], None] = time.sleep
"""Module-level so tests can replace the wait (they assert on what was asked, never on timing)."""

LOCAL = "local"
_embedded: dict[Path, LocalHub] = {}
_embedded_lock = threading.Lock()


def local_hub_root() -> Path:
    """Folder of the embedded Hub: ``$HUBRELEASE_LOCAL_HUB``, else ``$XDG_CACHE_HOME/hubrelease/local-hub``."""
    override = os.environ.get("HUBRELEASE_LOCAL_HUB")
    if override:
        return Path(override).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "hubrelease" / "local-hub"


def embedded_hub() -> LocalHub:
    """The process-wide embedded local Hub, started on first use.

    Found through ``local_hub`` when first asked for: a command against the real Hub never loads
    the server (blake3, lz4, numpy); tests/hub/test_client.py checks it.
    """
    from hubrelease.local_hub import provider

    root = local_hub_root().resolve()
    with _embedded_lock:
        hub = _embedded.get(root)
        if hub is None:
            hub = provider().start(root)
            _embedded[root] = hub
        return hub


def stop_embedded() -> None:
    """Stop the embedded Hubs this process started (the CLI calls it when a command ends).

    Their worker threads are joined at interpreter exit, so an embedded Hub left serving would keep
    the process alive until its idle kept-alive connections time out.
    """
    with _embedded_lock:
        hubs = list(_embedded.values())
        _embedded.clear()
    for hub in hubs:
        hub.stop()


def hub_api(endpoint: str | None = None, token: str | None = None) -> HfApi:
    """An ``HfApi`` for ``endpoint``: None (HF_ENDPOINT or huggingface.co), a URL, or ``'local'``.

    ``token`` (``--token``) replaces huggingface_hub's own sources; the embedded Hub gets none.
    """
    if endpoint is None:
        return HfApi(token=token)
    if endpoint == LOCAL:
        hub = embedded_hub()  # offline and token-free for the user: it answers its own token only
        return HfApi(endpoint=hub.url, token=hub.owner_token)
    try:
        parts = urlsplit(endpoint)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"--endpoint must be an http(s) URL or 'local', got {endpoint!r}", field="endpoint")
    return HfApi(endpoint=endpoint.rstrip("/"), token=token)


def http_status(exc: BaseException) -> int | None:
    """The HTTP status behind a huggingface_hub error, looking through its ``RuntimeError`` wrappers."""
    current: BaseException | None = exc
    while current is not None:
        if isinstance(current, HfHubHTTPError) and current.response is not None:
            return int(current.response.status_code)
        current = current.__cause__
    return None


def _innermost(exc: BaseException) -> BaseException:
    """``exc`` with its ``RuntimeError`` wrappers (raised ... from the real error) looked through."""
    current = exc
    while isinstance(current, RuntimeError) and current.__cause__ is not None:
        current = current.__cause__
    return current


def describe(exc: BaseException) -> str:
    """One line for the innermost huggingface_hub/httpx error: HTTP status and server message, no headers."""
    current = _innermost(exc)
    if isinstance(current, HfHubHTTPError) and current.response is not None:
        detail = (current.server_message or "").strip().splitlines()
        return f"HTTP {current.response.status_code}" + (f": {detail[0]}" if detail else "")
    text = str(current).strip().splitlines()
    return text[0] if text else type(current).__name__


def answer_fault(exc: BaseException) -> str | None:
    """What is wrong with an answer that arrived (as opposed to a Hub that could not be reached)."""
    if isinstance(exc, httpx2.TooManyRedirects):
        return "is a redirect loop"
    if isinstance(exc, httpx2.DecodingError):
        return "cannot be decoded"
    if isinstance(exc, httpx2.RemoteProtocolError):
        return "broke off"
    return None


def is_transport_failure(exc: BaseException) -> bool:
    """A dropped connection, timeout or refused socket, from httpx2 or from hf_xet (built-in errors)."""
    current: BaseException | None = exc
    while current is not None:
        if isinstance(current, httpx2.TransportError | ConnectionError | TimeoutError):
            return True
        current = current.__cause__
    return False


def xet_auth_failure(exc: BaseException) -> bool:
    """hf_xet's own refusal of its token (``hf_xet.XetAuthenticationError``, a ``PermissionError``),
    told by its type without importing hf_xet (untyped, and absent where LFS is used)."""
    return isinstance(exc, PermissionError) and type(exc).__module__.startswith("hf_xet")


def to_hub_error(exc: BaseException, repo_id: str, revision: str | None = None) -> HubError:
    """The ``HubError`` for a huggingface_hub or transport error (looking through RuntimeError wrappers).

    A missing repo or revision is invalid input (exit 2); anything else the Hub answered, and any
    failure to reach it, is ``HubUnavailable`` (exit 4).
    """
    current = _innermost(exc)
    status = http_status(current)
    if isinstance(current, OIDCError):
        return HubUnavailable(
            f"{repo_id}: no Hub token from OIDC (HF_OIDC_RESOURCE is set): {describe(current)}; in GitHub "
            "Actions the job needs `permissions: id-token: write` and a trusted publisher on the repo",
            repo_id=repo_id,
        )
    if isinstance(current, RepositoryNotFoundError):
        return NotFoundError(f"{repo_id}: repository not found", repo_id=repo_id, status=404)
    if isinstance(current, RevisionNotFoundError):
        return NotFoundError(f"{repo_id}: revision {revision!r} not found", repo_id=repo_id, status=404)
    if status in (401, 403):
        return HubUnavailable(
            f"{repo_id}: the Hub refused the token ({describe(current)}); check --token / HF_TOKEN "
            "and its write access",
            repo_id=repo_id,
            status=status,
        )
    fault = answer_fault(current)
    if fault is not None:
        return HubUnavailable(f"{repo_id}: the Hub's answer {fault} ({describe(current)})", repo_id=repo_id)
    if status is None and is_transport_failure(current):
        return HubUnavailable(f"{repo_id}: cannot reach the Hub: {describe(current)}", repo_id=repo_id)
    return HubUnavailable(f"{repo_id}: {describe(current)}", repo_id=repo_id, status=status)


_HUB_FAILURES = (HfHubHTTPError, httpx2.RequestError, ConnectionError, TimeoutError, OIDCError)
# What huggingface_hub raises when an answer is not the shape it parses (a tree listing that is an
# object, ``{}`` for repo info, JSON nested 100,000 deep): the server's fault, never exit 3.
_MALFORMED = (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError)


def malformed_answer(exc: BaseException, repo_id: str) -> HubReleaseError:
    """The one line for an answer huggingface_hub could not parse (or a repo id it refused to send)."""
    if isinstance(exc, HFValidationError):
        return InputError(f"{repo_id}: {describe(exc)}")
    return HubUnavailable(
        f"{repo_id}: the Hub's answer is malformed ({type(exc).__name__}: {describe(exc)})", repo_id=repo_id
    )


@contextlib.contextmanager
def hub_errors(repo_id: str, revision: str | None = None) -> Iterator[None]:
    """Translate huggingface_hub and transport errors into ``HubError``s (the one boundary for them)."""
    try:
        yield
    except _HUB_FAILURES as exc:
        raise to_hub_error(exc, repo_id, revision) from None


@contextlib.contextmanager
def read_errors(repo_id: str, revision: str | None = None) -> Iterator[None]:
    """``hub_errors`` for reads, where a malformed answer is also the server's fault (``malformed_answer``)."""
    try:
        with hub_errors(repo_id, revision):
            yield
    except _MALFORMED as exc:
        raise malformed_answer(exc, repo_id) from None


def rate_limit_wait(exc: BaseException) -> int:
    """Seconds to wait after a 429, from the IETF ``RateLimit`` header, else ``Retry-After``."""
    current: BaseException | None = exc
    while current is not None and not isinstance(current, HfHubHTTPError):
        current = current.__cause__
    if current is None or current.response is None:
        return DEFAULT_RATE_LIMIT_WAIT
    headers = current.response.headers
    try:  # int() of the header's numbers: one past Python's 4,300-digit limit raises ValueError
        info = parse_ratelimit_headers(headers)
    except ValueError:
        return FOREVER
    if info is not None and info.remaining == 0:
        return max(info.reset_in_seconds, 0)
    retry_after = headers.get("Retry-After", "").strip()
    if not retry_after.isdigit():
        return DEFAULT_RATE_LIMIT_WAIT
    return int(retry_after) if len(retry_after) <= 9 else FOREVER


def metadata(repo_id: str, revision: str | None, call: Callable[[], T]) -> T:
    """Run one metadata read (repo_info, paths-info, tree, refs), waiting out 429s as the Hub says.

    huggingface_hub sends these requests without its backoff (plain session GET/POST), so one
    429 would end a remote verify. The wait is bounded (``MAX_RATE_LIMIT_RETRIES`` waits,
    ``MAX_RATE_LIMIT_WAIT`` seconds in total), each wait announced through ``log`` at info level;
    past the bound the rate limit is ``HubUnavailable`` (exit 4), one line counting the 429s and
    the seconds waited.
    """
    waited = attempt = 0
    while True:
        try:
            return call()
        except HfHubHTTPError as exc:
            wait = rate_limit_wait(exc) if http_status(exc) == 429 else None
            if wait is None or attempt >= MAX_RATE_LIMIT_RETRIES or waited + wait > MAX_RATE_LIMIT_WAIT:
                error = to_hub_error(exc, repo_id, revision)
                if wait is not None:
                    times = f"{attempt + 1} times" if attempt else "once"
                    error.message += (
                        f" (rate limited {times}: waited {waited}s, the Hub asks for {wait}s more)"
                    )
                raise error from None
        except _HUB_FAILURES as exc:
            raise to_hub_error(exc, repo_id, revision) from None
        except _MALFORMED as exc:
            raise malformed_answer(exc, repo_id) from None
        log.info("rate limited by the Hub (%s): waiting %ds before retrying", repo_id, wait)
        sleep(wait)
        waited += wait
        attempt += 1
