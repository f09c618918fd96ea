"""The browser tier: Debian's chromium driven by playwright (an installed browser through
``executable_path``; playwright never downloads one). ``scripts/browser.sh`` installs both.

Chromium's flags are the ones known to work on this kind of machine: without the background
networking ones it keeps trying hosts this closed network refuses, and as root it needs
``--no-sandbox``. Screenshots go to ``$HUBRELEASE_BROWSER_ARTIFACTS`` (default ``browser/artifacts``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.pop("HF_TOKEN", None)
CHROMIUM = os.environ.get("HUBRELEASE_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    """One browser for the run (playwright gives it a new empty profile); a page per test."""
    from playwright.sync_api import sync_playwright

    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"{CHROMIUM} is missing: run bash scripts/browser.sh, which installs it")
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    folder = Path(os.environ.get("HUBRELEASE_BROWSER_ARTIFACTS", Path(__file__).parent / "artifacts"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's HF cache or token."""
    monkeypatch.setenv("HF_HOME", str(tmp_path_factory.mktemp("hf_home")))
    monkeypatch.setenv("COLUMNS", "200")
