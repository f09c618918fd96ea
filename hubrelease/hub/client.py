"""One place that builds ``HfApi`` objects, for a real Hub URL or the embedded loopback Hub.

The token is left to huggingface_hub's usual sources (``HF_TOKEN``, ``hf auth login``); this module
never reads, prints or logs it. ``--endpoint local`` starts (once per process) a loopback Hub on a
free port, disk-backed in a per-user folder, and sends no token at all.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
from huggingface_hub import HfApi
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError, RevisionNotFoundError

from hubrelease.errors import HubError, InputError, NotFoundError
from hubrelease.hub.server import LoopbackHub

LOCAL = "local"
_embedded: dict[Path, LoopbackHub] = {}
_embedded_lock = threading.Lock()


def local_hub_root() -> Path:
    """Folder of the embedded Hub: ``$HUBRELEASE_LOCAL_HUB``, else ``$XDG_CACHE_HOME/hubrelease/local-hub``."""
    override = os.environ.get("HUBRELEASE_LOCAL_HUB")
    if override:
        return Path(override).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "hubrelease" / "local-hub"


def embedded_hub() -> LoopbackHub:
    """The process-wide embedded loopback Hub, started on first use."""
    root = local_hub_root().resolve()
    with _embedded_lock:
        hub = _embedded.get(root)
        if hub is None:
            hub = LoopbackHub(root).start()
            _embedded[root] = hub
        return hub


def hub_api(endpoint: str | None = None) -> HfApi:
    """An ``HfApi`` for ``endpoint``: None (HF_ENDPOINT or huggingface.co), a URL, or ``'local'``."""
    if endpoint is None:
        return HfApi()
    if endpoint == LOCAL:
        return HfApi(endpoint=embedded_hub().url, token=False)
    try:
        parts = urlsplit(endpoint)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise InputError(f"--endpoint must be an http(s) URL or 'local', got {endpoint!r}", field="endpoint")
    return HfApi(endpoint=endpoint.rstrip("/"))


def http_status(exc: BaseException) -> int | None:
    """The HTTP status behind a huggingface_hub error, looking through its ``RuntimeError`` wrappers."""
    current: BaseException | None = exc
    while current is not None:
        if isinstance(current, HfHubHTTPError) and current.response is not None:
            return int(current.response.status_code)
        current = current.__cause__
    return None


def describe(exc: BaseException) -> str:
    """One line for the innermost huggingface_hub/httpx error: HTTP status and server message, no headers."""
    current: BaseException = exc
    while current.__cause__ is not None and isinstance(current, RuntimeError):
        current = current.__cause__
    if isinstance(current, HfHubHTTPError) and current.response is not None:
        detail = (current.server_message or "").strip().splitlines()
        return f"HTTP {current.response.status_code}" + (f": {detail[0]}" if detail else "")
    text = str(current).strip().splitlines()
    return text[0] if text else type(current).__name__


def to_hub_error(exc: BaseException, repo_id: str, revision: str | None = None) -> HubError:
    """The ``HubError`` for a huggingface_hub or transport error (looking through RuntimeError wrappers)."""
    current: BaseException = exc
    while isinstance(current, RuntimeError) and current.__cause__ is not None:
        current = current.__cause__
    if isinstance(current, RepositoryNotFoundError):
        return NotFoundError(f"{repo_id}: repository not found", repo_id=repo_id, status=404)
    if isinstance(current, RevisionNotFoundError):
        return NotFoundError(f"{repo_id}: revision {revision!r} not found", repo_id=repo_id, status=404)
    if isinstance(current, httpx2.TransportError):
        return HubError(f"{repo_id}: cannot reach the Hub: {describe(current)}", repo_id=repo_id)
    return HubError(f"{repo_id}: {describe(current)}", repo_id=repo_id, status=http_status(current))


@contextlib.contextmanager
def hub_errors(repo_id: str, revision: str | None = None) -> Iterator[None]:
    """Translate huggingface_hub and transport errors into ``HubError``s (the one boundary for them)."""
    try:
        yield
    except (HfHubHTTPError, httpx2.TransportError) as exc:
        raise to_hub_error(exc, repo_id, revision) from None
