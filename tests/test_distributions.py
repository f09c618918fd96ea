"""Two distributions: the client installs without the loopback Hub's dependencies, and the commands
that start the loopback Hub say in one line how to install it when it is missing."""

from __future__ import annotations

import re
import sys
from importlib.metadata import requires
from pathlib import Path

import pytest

from hubrelease.hub.client import LOOPBACK_MISSING
from tests.factories.cli import run_cli
from tests.factories.releases import write_hand_written_release

SERVER_ONLY = {"blake3", "lz4", "markdown-it-py", "nh3", "hf-xet"}
"""What only the loopback Hub needs (hf-xet: the client gets huggingface_hub's own)."""


def _names(distribution: str) -> set[str]:
    """The names of the distribution's required (not optional) dependencies, as pip resolves them."""
    declared = requires(distribution) or []
    return {
        re.split(r"[\s<>=!~;\[(]", line, maxsplit=1)[0].lower().replace("_", "-")
        for line in declared
        if "extra ==" not in line
    }


def test_the_client_requires_none_of_the_loopback_hubs_dependencies() -> None:
    assert not _names("hubrelease") & SERVER_ONLY
    assert SERVER_ONLY | {"hubrelease"} <= _names("hubrelease-loopback")


@pytest.fixture
def without_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client as installed alone: ``import hubrelease_loopback`` finds nothing."""
    for name in [
        m for m in sys.modules if m == "hubrelease_loopback" or m.startswith("hubrelease_loopback.")
    ]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "hubrelease_loopback", None)


@pytest.mark.parametrize(
    "command",
    [
        ["hub", "serve", "--root", "{root}", "--allow-anonymous"],
        ["preview", "{manifest}", "--check"],
        ["push", "{manifest}", "--endpoint", "local"],
    ],
)
@pytest.mark.usefixtures("without_loopback")
def test_a_command_that_starts_the_loopback_hub_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setenv("HUBRELEASE_LOCAL_HUB", str(tmp_path / "hub"))
    manifest = write_hand_written_release(tmp_path / "release", "# Card\n")
    code, _, err = run_cli(*(arg.format(manifest=manifest, root=tmp_path / "hub") for arg in command))
    assert code == 2
    assert err == f"error: {LOOPBACK_MISSING}\n"
    assert "pip install ./loopback-hub" in err
