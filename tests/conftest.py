"""Fixtures shared by every test folder: isolation from the user's Hub config and a fixed console."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Set before anything imports huggingface_hub (it reads these once at import time).
os.environ["HF_HUB_DISABLE_XET"] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.pop("HF_TOKEN", None)
os.environ.pop("GITHUB_ACTIONS", None)


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
