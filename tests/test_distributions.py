"""Two distributions: the client installs without the loopback Hub's dependencies, and the commands
that start the loopback Hub say in one line how to install it when it is missing."""

from __future__ import annotations

from importlib.metadata import requires
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from hubrelease.local_hub import MISSING
from tests.factories.cli import run_cli
from tests.factories.releases import write_hand_written_release

SERVER_ONLY = {"blake3", "lz4", "markdown-it-py", "nh3", "hf-xet"}
"""What the client needs only for the loopback Hub: it declares none of them."""
NEVER_PULLED = {"blake3", "lz4", "nh3"}
"""Of those, what no dependency of the client pulls in either (rich requires markdown-it-py, and
huggingface_hub hf-xet, for themselves)."""


def _requirements(distribution: str) -> list[Requirement]:
    """The distribution's runtime requirements on this machine: extras off, markers evaluated."""
    found = [Requirement(line) for line in requires(distribution) or []]
    return [r for r in found if r.marker is None or r.marker.evaluate({"extra": ""})]


def _pulled(distribution: str) -> set[str]:
    """Every distribution ``pip install`` of ``distribution`` installs, by the installed metadata."""
    seen: set[str] = set()
    todo = [distribution]
    while todo:
        name = canonicalize_name(todo.pop())
        if name not in seen:
            seen.add(name)
            todo += [r.name for r in _requirements(name)]
    return seen - {canonicalize_name(distribution)}


def test_the_client_requires_none_of_the_loopback_hubs_dependencies() -> None:
    declared = {canonicalize_name(r.name) for r in _requirements("hubrelease")}
    assert not declared & SERVER_ONLY
    assert not _pulled("hubrelease") & NEVER_PULLED
    assert SERVER_ONLY | {"hubrelease"} <= {
        canonicalize_name(r.name) for r in _requirements("hubrelease-loopback")
    }


@pytest.mark.parametrize(
    "command",
    [
        ["hub", "serve", "--root", "{root}", "--allow-anonymous"],
        ["preview", "{manifest}", "--check"],
        ["push", "{manifest}", "--endpoint", "local"],
    ],
)
@pytest.mark.usefixtures("without_local_hub")
def test_a_command_that_starts_the_loopback_hub_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setenv("HUBRELEASE_LOCAL_HUB", str(tmp_path / "hub"))
    manifest = write_hand_written_release(tmp_path / "release", "# Card\n")
    code, _, err = run_cli(*(arg.format(manifest=manifest, root=tmp_path / "hub") for arg in command))
    assert code == 2
    assert err == f"error: {MISSING}\n"
    assert "pip install ./loopback-hub" in err
