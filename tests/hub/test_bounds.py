"""The private names ``hub.bounds`` builds on are where it expects them.

huggingface_hub exports ``set_client_factory`` but not the default factory it replaces
(huggingface_hub 2.4.0 utils/_http.py:341), and httpx2's ``HTTPTransport`` takes no network backend
for the ``httpcore2.ConnectionPool`` it builds (httpx2 2.16.2 _transports/default.py:149), so
``bounds._client`` reaches ``utils._http.default_client_factory``, the client's ``_transport`` /
``_mounts``, each transport's ``_pool`` and the pool's ``_network_backend``.
``_client`` skips a transport without a pool (a mount may have none), so a renamed ``_pool`` would
drop every read deadline without an error: these tests fail instead.
"""

from __future__ import annotations

from typing import Any

from hubrelease.hub import bounds


def _pools(client: Any) -> list[Any]:
    transports = [client._transport, *client._mounts.values()]
    return [transport._pool for transport in transports]


def test_huggingface_hubs_default_client_factory_is_where_bounds_imports_it() -> None:
    from huggingface_hub.utils._http import default_client_factory

    client = default_client_factory()
    try:
        pools = _pools(client)
        assert pools and all(hasattr(pool, "_network_backend") for pool in pools)
    finally:
        client.close()


def test_every_connection_pool_of_the_bounded_client_reads_through_the_deadline_backend() -> None:
    client = bounds._client()
    try:
        backends = [pool._network_backend for pool in _pools(client)]
        assert backends and all(isinstance(backend, bounds._DeadlineBackend) for backend in backends)
        assert client.max_redirects == bounds.MAX_REDIRECTS
    finally:
        client.close()
