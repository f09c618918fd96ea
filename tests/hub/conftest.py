"""Per-test view of the session's loopback Hub: faults and the request log start empty."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hubrelease.hub.server import LoopbackHub


@pytest.fixture(scope="session")
def loopback_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackHub]:
    """One loopback Hub on 127.0.0.1:0 for the whole run (small multipart and page sizes to exercise them)."""
    with LoopbackHub(
        tmp_path_factory.mktemp("loopback-hub"),
        multipart_threshold=200_000,
        multipart_chunk=64_000,
        page_size=4,
        page_size_expand=4,
    ) as hub:
        yield hub


@pytest.fixture
def hub(loopback_hub: LoopbackHub) -> Iterator[LoopbackHub]:
    loopback_hub.faults.clear()
    loopback_hub.requests.clear()
    yield loopback_hub
    loopback_hub.faults.clear()
