"""The seam the loopback Hub plugs into: found by its entry point, never imported by name."""

from __future__ import annotations

from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from hubrelease.errors import InputError
from hubrelease.local_hub import GROUP, MISSING, installed, provider
from tests.factories.hub import api_for, hide_local_hub, unique_repo


def test_the_loopback_distribution_registers_the_local_hub(tmp_path: Path) -> None:
    """Its pyproject's entry point is what ``--endpoint local`` and ``preview`` start."""
    assert installed()
    hub = provider().start(tmp_path / "hub")
    try:
        repo = unique_repo()
        api_for(hub).create_repo(repo)
        assert (tmp_path / "hub" / "repos" / "models" / repo / "refs.json").is_file()
        assert hub.page_problems("model", repo, "main") == []  # no card, nothing broken
    finally:
        hub.stop()


def test_without_a_registered_local_hub_it_says_how_to_install_one(monkeypatch: pytest.MonkeyPatch) -> None:
    hide_local_hub(monkeypatch)
    assert not installed()
    with pytest.raises(InputError) as caught:
        provider()
    assert caught.value.message == MISSING


def test_a_registered_local_hub_that_cannot_load_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry point left behind by a removed package: one line, exit 2, not a traceback."""
    gone = EntryPoint(name="loopback", value="hubrelease_loopback_gone.provider:PROVIDER", group=GROUP)
    hide_local_hub(monkeypatch, gone)
    assert installed()
    with pytest.raises(InputError, match=r"installed but cannot be loaded \(No module named") as caught:
        provider()
    assert caught.value.exit_code == 2
    assert "pip install ./loopback-hub" in caught.value.message
