"""Fixtures shared by every test folder: isolation from the user's Hub config and a fixed console."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

# Set before anything imports huggingface_hub (it reads these once at import time). Uploads and
# downloads go through hf_xet, as for real users; the plain-LFS tests opt out (tests/loopback/test_server.py).
os.environ.pop("HF_HUB_DISABLE_XET", None)
# hf_xet retries failed transfers for minutes (3 s base delay); injected faults must fail in moments.
os.environ.setdefault("HF_XET_CLIENT_RETRY_BASE_DELAY", "10ms")
os.environ.setdefault("HF_XET_CLIENT_RETRY_MAX_DURATION", "200ms")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.pop("HF_TOKEN", None)
os.environ.pop("GITHUB_ACTIONS", None)

# Tests reach no host but this machine: a name other than the loopback's fails at once, as it does
# on a machine without a network, instead of a client waiting out its timeouts (or, on a CI runner
# with a network, reaching huggingface.co). Child processes (pip's own venvs) resolve as usual.
_resolve = socket.getaddrinfo
_LOOPBACK = {"127.0.0.1", "::1", "localhost", None, ""}
_reached: list[str] = []
"""Names a test tried to resolve beyond the loopback (``_no_network`` fails that test)."""


def _loopback_only(host: bytes | str | None, *args: Any, **kwargs: Any) -> Any:
    name = host.decode() if isinstance(host, bytes) else host
    if name not in _LOOPBACK:
        _reached.append(str(name))
        raise socket.gaierror(socket.EAI_NONAME, f"the test session resolves loopback names only, not {name}")
    return _resolve(host, *args, **kwargs)


socket.getaddrinfo = _loopback_only


@pytest.fixture(autouse=True)
def _no_network() -> Iterator[None]:
    """A test that tried to reach a host beyond this machine fails, even where the code under test
    took the failure in its stride (a warning, a retry): the test depended on the network."""
    _reached.clear()
    yield
    assert _reached == [], f"the test tried to reach {sorted(set(_reached))}"


# One fixed hypothesis profile: derandomized and without an example database, so every run (CI
# included) draws the same cases and a failure reproduces. HYPOTHESIS_PROFILE=dev explores.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("dev", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

if TYPE_CHECKING:
    from hubrelease_loopback import LoopbackHub


@pytest.fixture
def no_backoff_sleep(monkeypatch: pytest.MonkeyPatch) -> None:
    """huggingface_hub's and hubrelease's waits between retries skipped: the retries still happen."""
    from tests.factories.hub import HF_BACKOFF_SLEEP

    monkeypatch.setattr(HF_BACKOFF_SLEEP, lambda _: None)
    monkeypatch.setattr("hubrelease.hub.client.sleep", lambda _: None)


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's HF cache, token, or CI annotations; console width is fixed."""
    home = tmp_path_factory.mktemp("hf_home")
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HUBRELEASE_LOCAL_HUB", str(home / "local-hub"))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("HUBRELEASE_DEBUG", raising=False)


@pytest.fixture
def repo_root() -> Path:
    """The checkout (for the committed manifests under manifests/)."""
    return Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def loopback_hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackHub]:
    """One loopback Hub on 127.0.0.1:0 for the run; small multipart and page sizes exercise both paths.

    Use unique repo ids (``tests.factories.hub.unique_repo``); the ``hub``
    fixture below also clears faults and the request log around each test.
    """
    from hubrelease_loopback import LoopbackHub  # after the env above: it imports huggingface_hub

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
    """The session's loopback Hub with faults and the request log empty; no server error may be left."""
    loopback_hub.faults.clear()
    loopback_hub.requests.clear()
    loopback_hub.server_errors.clear()
    yield loopback_hub
    loopback_hub.faults.clear()
    assert loopback_hub.server_errors == []


@pytest.fixture
def without_local_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client installed alone: no local Hub is registered (``tests.factories.hub.hide_local_hub``)."""
    from tests.factories.hub import hide_local_hub

    hide_local_hub(monkeypatch)


@pytest.fixture
def lfs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The client speaks plain git LFS (HF_HUB_DISABLE_XET) for tests that pin the LFS routes."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)


@pytest.fixture(scope="session")
def built_releases(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``release/`` built by every builder and ``dataset/`` with a built card (tests/factories/built_releases.py).

    Shared by the rebuild and BOM tests, read only: a test that changes a file works on a copy.
    """
    from tests.factories.built_releases import write_built_release, write_dataset_release

    root = tmp_path_factory.mktemp("built")
    write_built_release(root)
    write_dataset_release(root)
    return root
