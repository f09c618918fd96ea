"""The loopback Hub's repo pages without a browser: widgets, card HTML, files, pins, refs, problems,
escaping and the headers that keep a card's content from running (the browser tier runs them)."""

from __future__ import annotations

import hashlib
import html
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd

from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.pages import content_security_policy
from tests.factories.hub import api_for, head, raw_request, unique_repo

CARD = """---
license: apache-2.0
base_model: acme/base-model
base_model_relation: finetune
library_name: sglang
tags: [dflash, speculative-decoding]
---
# Drafter card

| Configuration | tok/s |
|---|---:|
| DFlash2 | 114.2 |

![chart](charts/throughput.svg)

See [the evaluation](evaluation.json) and [the table](#drafter-card).
"""
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20"/></svg>'
MANIFEST = b"""schema_version: 1
pins:
  targets:
    - repo_id: acme/target
      revision: 0123456789abcdef0123456789abcdef01234567
  engines:
    - name: sglang
      repository: https://github.com/sgl-project/sglang
      commit: 710267dc4c817b38d9965346390cd56b59b54eda
  hardware:
    - id: h200
      name: NVIDIA H200
      count: 1
"""
HOSTILE = """---
license: apache-2.0
tags: ["<script>window.pwned=1</script>"]
---
# Hostile <img src=x onerror="window.pwned=2">

<script>window.pwned=3</script>

<img src="charts/throughput.svg" onerror="window.pwned=4"><iframe src="/"></iframe>
<a href="javascript:window.pwned=5">click</a> <div style="position:fixed">x</div>

![off](https://example.invalid/track.png) [up](../../etc/passwd) [gone](missing.json) [nowhere](#nope)
"""


def _publish(hub: LoopbackHub, files: dict[str, bytes], repo_type: str = "model") -> tuple[str, str]:
    api, repo = api_for(hub), unique_repo("page")
    api.create_repo(repo, repo_type=repo_type, space_sdk="static" if repo_type == "space" else None)
    ops = [CommitOperationAdd(path, data) for path, data in files.items()]
    return repo, api.create_commit(repo, ops, commit_message="publish", repo_type=repo_type).oid


class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


def _elements(page: str) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """Every element of the page as a browser's parser sees it: tag and attributes."""
    parser = _Elements()
    parser.feed(page)
    return parser.found


def _page(url: str) -> tuple[dict[str, str], str]:
    status, headers, body = raw_request(url)
    assert status == 200, body[:300]
    return headers, body.decode()


@pytest.fixture
def release(hub: LoopbackHub) -> tuple[str, str, bytes]:
    weights = os.urandom(70_000)
    repo, commit = _publish(
        hub,
        {
            "README.md": CARD.encode(),
            "charts/throughput.svg": SVG,
            "evaluation.json": b'{"tok_s": 114.2}\n',
            "model.safetensors": weights,
            "hubrelease.yaml": MANIFEST,
        },
    )
    return repo, commit, weights


def test_the_page_shows_widgets_card_files_pins_and_refs(
    hub: LoopbackHub, release: tuple[str, str, bytes]
) -> None:
    repo, commit, weights = release
    headers, page = _page(f"{hub.url}/{repo}")
    assert headers["content-type"] == "text/html; charset=utf-8" and headers["x-repo-commit"] == commit
    widgets = dict(re.findall(r'data-widget="(\w+)"><dt>[^<]+</dt><dd>(.*?)</dd>', page))
    assert "apache-2.0" in widgets["license"] and "acme/base-model" in widgets["base_model"]
    assert "finetune" in widgets["base_model_relation"] and "sglang" in widgets["library_name"]
    assert re.search(r"<td>DFlash2</td>\s*<td align=\"right\">114\.2</td>", page)
    assert f'src="/{repo}/resolve/{commit}/charts/throughput.svg"' in page
    assert f'href="/{repo}/resolve/{commit}/evaluation.json"' in page
    assert 'href="#drafter-card"' in page and 'id="drafter-card"' in page
    sha = hashlib.sha256(weights).hexdigest()
    row = re.search(r'<tr data-path="model.safetensors">(.*?)</tr>', page)
    assert row is not None and f'data-size="{len(weights)}"' in row[1]
    assert "70.0 kB" in row[1] and ">Xet<" in row[1] and sha in row[1]
    svg_row = re.search(r'<tr data-path="charts/throughput.svg">(.*?)</tr>', page)
    assert svg_row is not None and hashlib.sha256(SVG).hexdigest() in svg_row[1] and "<td></td>" in svg_row[1]
    pins = re.search(r'<section id="pins">(.*?)</section>', page)
    assert pins is not None
    assert "0123456789abcdef0123456789abcdef01234567" in pins[1] and "NVIDIA H200" in pins[1]
    assert "710267dc4c817b38d9965346390cd56b59b54eda" in pins[1]
    assert f"<code>{commit[:12]}</code> publish" in page and 'id="problems"' not in page


def test_the_headers_let_nothing_run_and_nothing_load_from_off_the_machine(
    hub: LoopbackHub, release: tuple[str, str, bytes]
) -> None:
    repo, commit, _ = release
    headers, _ = _page(f"{hub.url}/{repo}")
    csp = headers["content-security-policy"]
    assert csp == content_security_policy(hub.url, hub.cdn_url)
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["default-src"] == "'none'" and directives["script-src"] == "'none'"
    assert directives["img-src"].split() == ["'self'", hub.url, hub.cdn_url]
    assert directives["style-src"].startswith("'sha256-") and "unsafe" not in csp
    assert headers["x-content-type-options"] == "nosniff"
    status, file_headers, body = raw_request(f"{hub.url}/{repo}/resolve/{commit}/charts/throughput.svg")
    assert (status, body, file_headers["content-type"]) == (200, SVG, "image/svg+xml")
    assert "sandbox" in file_headers["content-security-policy"] and file_headers["x-content-type-options"]
    _, lfs = head(f"{hub.url}/{repo}/resolve/{commit}/model.safetensors")
    status, cdn_headers, _ = raw_request(lfs["location"], headers={"Range": "bytes=0-9"})
    assert status == 206 and cdn_headers["content-type"] == "application/octet-stream"


def test_a_hostile_card_is_escaped_and_sanitized(hub: LoopbackHub) -> None:
    name = 'notes/<img src=x onerror="window.pwned=6">.md'
    manifest = b"pins:\n  engines:\n    - name: '<script>window.pwned=7</script>'\n"
    repo, commit = _publish(
        hub,
        {
            "README.md": HOSTILE.encode(),
            "charts/throughput.svg": SVG,
            name: b"x",
            "hubrelease.yaml": manifest,
        },
    )
    _, page = _page(f"{hub.url}/{repo}")
    elements = _elements(page)
    assert {tag for tag, _ in elements} & {"script", "iframe", "object", "embed", "form"} == set()
    attributes = [(tag, name, value or "") for tag, attrs in elements for name, value in attrs]
    assert [a for a in attributes if a[1].startswith("on")] == []
    assert [a for a in attributes if a[1] in ("src", "href") and ":" in a[2].split("/")[0]] == []
    assert [a for a in attributes if a[1] == "style"] == []  # the page's policy allows no inline style
    assert "example.invalid" not in re.sub(r"<li[^>]*>.*?</li>", "", page)  # only in the problems list
    assert html.escape(name, quote=True) in page and "&lt;script&gt;window.pwned=7" in page
    assert f'<img src="/{repo}/resolve/{commit}/charts/throughput.svg">' in page
    problems = re.findall(r'<li data-kind="(\w+)">(.*?)</li>', page)
    assert [kind for kind, _ in problems] == ["image", "image", "link", "link", "link"]
    assert "image x: no file x" in problems[0][1] and "off the machine" in problems[1][1]
    assert "outside the repo" in problems[2][1] and "no file missing.json" in problems[3][1]
    assert "#nope: no such heading" in problems[4][1]


def test_front_matter_the_hub_refuses_is_refused_at_commit_and_shown_on_the_page(hub: LoopbackHub) -> None:
    card = b"---\nlicense: not-a-licence\nbase_model: [acme/ok, 'not a repo id']\n---\n# Card\n"
    with pytest.raises(ValueError, match=r"Invalid metadata in README\.md"):
        _publish(hub, {"README.md": card})
    hub.refuse_invalid_cards = False
    try:
        with pytest.warns(UserWarning, match="not one of the Hub's licence ids"):
            repo, _ = _publish(hub, {"README.md": card})
    finally:
        hub.refuse_invalid_cards = True
    _, page = _page(f"{hub.url}/{repo}")
    problems = re.findall(r'<li data-kind="metadata">(.*?)</li>', page)
    assert (
        len(problems) == 2
        and "licence" in problems[0]
        and "not a valid model id" in html.unescape(problems[1])
    )


def test_revisions_datasets_and_private_repos(hub: LoopbackHub, tmp_path: Path) -> None:
    api = api_for(hub)
    repo, first = _publish(
        hub, {"README.md": b"---\nlicense: cc-by-4.0\npretty_name: Gen\n---\n# v1\n"}, repo_type="dataset"
    )
    api.create_tag(repo, tag="v1", repo_type="dataset")
    second = api.create_commit(
        repo, [CommitOperationAdd("README.md", b"# v2\n")], commit_message="two", repo_type="dataset"
    ).oid
    _, page = _page(f"{hub.url}/datasets/{repo}")
    assert f"<code>{second}</code>" in page and '<h1 id="v2">v2</h1>' in page
    _, old = _page(f"{hub.url}/datasets/{repo}/tree/v1")
    assert f"<code>{first}</code>" in old and 'data-widget="pretty_name"' in old and "cc-by-4.0" in old
    assert raw_request(f"{hub.url}/{repo}")[0] == 404  # a dataset is not a model
    space, _ = _publish(hub, {"README.md": b"---\nsdk: static\n---\n# A space\n"}, repo_type="space")
    _, space_page = _page(f"{hub.url}/spaces/{space}")
    assert '<h1 id="a-space">A space</h1>' in space_page and "space · revision" in space_page
    with LoopbackHub(
        tmp_path / "hub", tokens={"hf_w": "write"}, allow_anonymous=False, anonymous_reads=True
    ) as own:
        writer = api_for(own)
        writer.create_repo("acme/open")
        writer.create_repo("acme/closed", private=True)
        assert raw_request(f"{own.url}/acme/open")[0] == 200  # a browser reads public pages
        assert raw_request(f"{own.url}/acme/closed")[0] == 404  # and never learns a private one exists
        assert raw_request(f"{own.url}/acme/closed", headers={"Authorization": "Bearer hf_w"})[0] == 200
        body = b'{"name": "x", "organization": "acme"}'
        status, _, _ = raw_request(f"{own.url}/api/repos/create", method="POST", data=body)
        assert status == 401  # reading without a token is not writing without one
        assert raw_request(f"{own.url}/favicon.ico")[1]["content-type"] == "image/svg+xml"
