"""The running loopback Hub as its request handlers see it: stores, access, faults, bounds, its URLs.

A Protocol, so ``wire``, ``handler``, ``lfs`` and ``pages`` name the hub they serve without importing
``server``, which imports ``handler`` to serve it; ``server.LoopbackHub`` is the one implementation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from hubrelease_loopback.auth import Access
    from hubrelease_loopback.faults import Faults, RequestLog
    from hubrelease_loopback.oidc import TrustedPublishing
    from hubrelease_loopback.store import HubStore
    from hubrelease_loopback.xetstore import XetStore


class ServedHub(Protocol):
    """What a request may read or change of the hub serving it (``server.LoopbackHub`` documents each)."""

    store: HubStore
    xet: XetStore
    access: Access
    faults: Faults
    oidc: TrustedPublishing
    requests: RequestLog
    access_log: Callable[[str], None] | None
    max_workers: int
    anonymous_workers: int
    idle_timeout: float
    header_timeout: float
    request_timeout: float
    min_upload_rate: int
    max_connections: int
    max_header_bytes: int
    max_body: int
    max_upload: int
    page_size: int
    page_size_expand: int
    multipart_threshold: int
    multipart_chunk: int
    refuse_invalid_cards: bool

    @property
    def url(self) -> str: ...

    @property
    def cdn_url(self) -> str: ...

    def note_error(self, error: BaseException) -> None: ...

    def cdn_location(self, sha256: str, size: int, name: str) -> str: ...
