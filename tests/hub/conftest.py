"""Per-test view of the session's loopback Hub: faults and the request log start empty."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from huggingface_hub import constants

from hubrelease.hub.server import LoopbackHub


@pytest.fixture
def hub(loopback_hub: LoopbackHub) -> Iterator[LoopbackHub]:
    loopback_hub.faults.clear()
    loopback_hub.requests.clear()
    loopback_hub.server_errors.clear()
    yield loopback_hub
    loopback_hub.faults.clear()
    assert loopback_hub.server_errors == []


@pytest.fixture
def lfs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client speaks plain git LFS (HF_HUB_DISABLE_XET) for tests that pin the LFS routes."""
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
