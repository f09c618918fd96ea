"""HTML pages of the loopback Hub: a repo at a revision as a reader sees it on the Hub.

``GET /{ns}/{name}`` (``/datasets/...``, ``/spaces/...``; ``/tree/{rev}`` for another revision)
shows the card as the Hub renders it (front matter as widgets; the body by ``cardhtml.py``, images
and SVG charts served from the repo at that revision), what the Hub would say of it (front-matter
errors as validate-yaml gives them, broken links and images), the file list with sizes, LFS/Xet
flags and digests, the release's pins when a ``hubrelease.yaml`` is there, refs and recent commits.

Static, server-rendered HTML: every value is escaped, the card sanitized, and the page is served
with a Content-Security-Policy that allows no script at all, styles only the page's own (by hash),
and images only from this Hub and its storage origin, so nothing from a card runs and no asset
comes from off the machine.
"""

from __future__ import annotations

import base64
import hashlib
import html
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

import yaml

from hubrelease.card.filters import bytes_
from hubrelease_loopback import cardcheck
from hubrelease_loopback.cardhtml import RenderedCard, render_card
from hubrelease_loopback.store import RepoKey, StoreError
from hubrelease_loopback.wire import Request, Response

if TYPE_CHECKING:
    from hubrelease_loopback.served import ServedHub

CARD = "README.md"
MANIFEST = "hubrelease.yaml"
RECENT_COMMITS = 10
REGULAR_SHA256_LIMIT = 16 * 1024 * 1024
"""Regular files up to this size get their sha256 computed for the list (LFS files carry theirs)."""
MODEL_WIDGETS = (
    ("license", "License"),
    ("base_model", "Base model"),
    ("base_model_relation", "Relation to base model"),
    ("datasets", "Datasets"),
    ("library_name", "Library"),
    ("pipeline_tag", "Task"),
    ("language", "Language"),
    ("tags", "Tags"),
)
DATASET_WIDGETS = (
    ("license", "License"),
    ("pretty_name", "Name"),
    ("task_categories", "Task categories"),
    ("size_categories", "Size"),
    ("source_datasets", "Source datasets"),
    ("language", "Language"),
    ("tags", "Tags"),
)
STYLE = (
    "body{font-family:system-ui,sans-serif;margin:1.5rem auto;max-width:72rem;padding:0 1rem;color:#1f2328}"
    "header h1{margin-bottom:.2rem}.meta,.flag{font-size:.85em;color:#57606a}"
    "table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #d0d7de;padding:.25rem .5rem}"
    "#widgets{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;margin:1rem 0}#widgets dt{font-weight:600}"
    "#widgets dd{margin:0}.chip{display:inline-block;background:#f6f8fa;border:1px solid #d0d7de;"
    "border-radius:1rem;padding:.05rem .55rem;margin:.1rem}img{max-width:100%}"
    "code,pre{background:#f6f8fa}pre{padding:.5rem;overflow:auto}#card{border-top:1px solid #d0d7de}"
    "#problems{background:#fff8c5;border:1px solid #d4a72c;padding:.5rem 1rem}"
    "td.num{text-align:right}td.digest{font-family:monospace;font-size:.8em;word-break:break-all}"
)
_STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
ProblemKind = Literal["metadata", "image", "link"]


@dataclass(frozen=True)
class Problem:
    """Something the Hub would refuse, or a reader would find broken."""

    kind: ProblemKind
    message: str


def content_security_policy(hub_origin: str, storage_origin: str) -> str:
    """No script, frame, form or plugin; the page's own style only; images from this Hub alone."""
    return (
        "default-src 'none'; script-src 'none'; object-src 'none'; frame-src 'none'; "
        f"style-src 'sha256-{_STYLE_HASH}'; img-src 'self' {hub_origin} {storage_origin}; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _scalar(value: Any) -> str:
    """A front-matter or pin value as text; containers become '…' (a hostile YAML could nest deep)."""
    if isinstance(value, (str, int, float, bool)):
        return str(value)
    return "…"


def _repo_base(key: RepoKey) -> str:
    return f"/{key.url_prefix}{quote(key.repo_id)}"


def _resolver(key: RepoKey, commit_id: str) -> Any:
    base = f"{_repo_base(key)}/resolve/{commit_id}/"
    return lambda path: base + quote(path)


def card_problems(rendered: RenderedCard, tree: Mapping[str, Any], metadata: Iterable[str]) -> list[Problem]:
    """Front-matter errors, then each image and link a reader of the page would find broken."""
    problems = [Problem("metadata", m) for m in metadata]
    folders = {p.rsplit("/", 1)[0] for p in tree if "/" in p}
    seen = set()
    for ref in rendered.references:
        if ref.target in seen:
            continue
        seen.add(ref.target)
        what = "image" if ref.kind == "image" else "link"
        if ref.external and ref.kind == "image":
            problems.append(Problem("image", f"image {ref.target} is off the machine: not loaded here"))
        elif ref.outside:
            problems.append(Problem(ref.kind, f"{what} {ref.target} points outside the repo"))
        elif ref.path is not None and ref.path not in tree and ref.path not in folders and ref.path != ".":
            problems.append(Problem(ref.kind, f"{what} {ref.target}: no file {ref.path} in the repo"))
        elif ref.path is None and ref.target.startswith("#") and ref.fragment not in rendered.anchors:
            problems.append(Problem(ref.kind, f"{what} {ref.target}: no such heading in the card"))
    return problems


def _widgets(meta: Mapping[str, Any], repo_type: str, store_has: Any) -> str:
    names = DATASET_WIDGETS if repo_type == "dataset" else MODEL_WIDGETS
    items = []
    for name, label in names:
        value = meta.get(name)
        if value in (None, "", []):
            continue
        values = value if isinstance(value, list) else [value]
        chips = []
        for item in values:
            text = _e(_scalar(item))
            kind = "dataset" if name in ("datasets", "source_datasets") else "model"
            if name in ("base_model", "datasets", "source_datasets") and store_has(kind, item):
                prefix = "datasets/" if kind == "dataset" else ""
                text = f'<a href="/{prefix}{_e(quote(str(item)))}">{text}</a>'
            chips.append(f'<span class="chip">{text}</span>')
        items.append(f'<div data-widget="{_e(name)}"><dt>{_e(label)}</dt><dd>{"".join(chips)}</dd></div>')
    return f'<dl id="widgets">{"".join(items)}</dl>'


def _files(hub: ServedHub, key: RepoKey, commit_id: str, tree: Mapping[str, Any]) -> str:
    link = _resolver(key, commit_id)
    rows = []
    for path in sorted(tree):
        entry = tree[path]
        size = int(entry["size"])
        if entry["lfs"]:
            xet = hub.xet.xet_hash_for(entry["lfs"]) is not None
            storage, sha256 = ("Xet" if xet else "LFS"), entry["lfs"]
        else:
            storage, sha256 = "", ""
            if size <= REGULAR_SHA256_LIMIT:
                sha256 = hashlib.sha256(hub.store.git_path(entry["oid"]).read_bytes()).hexdigest()
        rows.append(
            f'<tr data-path="{_e(path)}"><td><a href="{_e(link(path))}">{_e(path)}</a></td>'
            f'<td class="num" data-size="{size}">{_e(bytes_(size))}</td><td>{storage}</td>'
            f'<td class="digest">{_e(sha256)}</td><td class="digest">{_e(entry["oid"])}</td></tr>'
        )
    return (
        '<section><h2>Files</h2><table id="files"><thead><tr><th>File</th><th>Size</th>'
        "<th>Storage</th><th>sha256</th><th>git blob</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></section>"
    )


_PIN_COLUMNS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("targets", "Targets", ("repo_id", "revision", "unpinned")),
    ("base_drafters", "Base drafters", ("repo_id", "revision", "unpinned")),
    ("datasets", "Datasets", ("repo_id", "revision", "role", "license")),
    ("engines", "Engines", ("name", "repository", "commit")),
    ("hardware", "Hardware", ("id", "name", "accelerator", "count", "memory")),
)


def _pins(manifest_text: str) -> str:
    try:
        data = yaml.load(manifest_text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return f'<section id="pins"><h2>Release pins</h2><p>{MANIFEST} does not parse.</p></section>'
    pins = data.get("pins") if isinstance(data, dict) else None
    if not isinstance(pins, dict):
        return ""
    parts = ['<section id="pins"><h2>Release pins</h2>']
    for kind, title, columns in _PIN_COLUMNS:
        items = [item for item in pins.get(kind) or [] if isinstance(item, dict)]
        if not items:
            continue
        head = "".join(f"<th>{_e(c)}</th>" for c in columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{_e(_scalar(item.get(c, '')))}</td>" for c in columns) + "</tr>"
            for item in items
        )
        parts.append(f'<h3>{title}</h3><table data-pins="{kind}"><tr>{head}</tr>{body}</table>')
    parts.append("</section>")
    return "".join(parts)


def _refs(hub: ServedHub, key: RepoKey, commit_id: str) -> str:
    store = hub.store
    refs = store.refs(key)
    base = _repo_base(key)

    def ref_list(names: Mapping[str, str]) -> str:
        return ", ".join(
            f'<a href="{base}/tree/{_e(quote(n, safe=""))}">{_e(n)}</a> <code>{_e(c[:12])}</code>'
            for n, c in sorted(names.items())
        )

    commits = "".join(
        f"<li><code>{_e(c['id'][:12])}</code> {_e(c['title'])} <span class='flag'>{_e(c['date'])}</span></li>"
        for c in store.history(key, commit_id, limit=RECENT_COMMITS)
    )
    return (
        f'<section id="refs"><h2>Refs</h2><p>Branches: {ref_list(refs["branches"]) or "none"}</p>'
        f"<p>Tags: {ref_list({n: t['commit'] for n, t in refs['tags'].items()}) or 'none'}</p>"
        f'<h3>Recent commits</h3><ol id="commits">{commits}</ol></section>'
    )


def page_parts(hub: ServedHub, key: RepoKey, revision: str) -> tuple[str, dict[str, Any], list[Problem]]:
    """The card's HTML, its front matter and its problems at ``revision`` (also what ``preview`` reports)."""
    store = hub.store
    commit_id, tree = store.tree(key, revision)
    if CARD not in tree:
        return "<p>No card (README.md) in this repo.</p>", {}, []
    content = store.text(tree, CARD)
    errors = cardcheck.metadata_errors(content, key.repo_type)
    try:
        meta, body = cardcheck.parse_card(content, key.repo_type)
    except ValueError:
        meta, body = {}, content
    rendered = render_card(body, _resolver(key, commit_id))
    return rendered.html, meta, card_problems(rendered, tree, errors)


FAVICON = (
    b'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    b'<circle cx="8" cy="8" r="7" fill="#ffd21e"/></svg>'
)


def favicon(request: Request) -> Response:
    """The browser asks for it on every page; without it each page load logs a 404."""
    return Response(200, {"Content-Type": "image/svg+xml", "Cache-Control": "max-age=86400"}, FAVICON)


def repo_page(request: Request) -> Response:
    """The page of one repo at one revision (``main`` unless ``/tree/{rev}``)."""
    key = request.require_repo()
    store = request.hub.store
    revision = request.arg("rev", "main")
    commit_id, tree = store.tree(key, revision)
    card, meta, problems = page_parts(request.hub, key, revision)
    problem_list = "".join(f'<li data-kind="{p.kind}">{_e(p.message)}</li>' for p in problems)
    private = store.refs(key)["private"]

    def has(kind: str, repo_id: object) -> bool:
        """A repo this caller may read (a private one's existence is never revealed)."""
        if not isinstance(repo_id, str):
            return False
        try:
            other = RepoKey(kind, repo_id)
            return store.exists(other) and request.can_read(other)
        except StoreError:  # not a repo id at all: the problems list says so
            return False

    title = _e(key.repo_id)
    page = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f'<meta name="viewport" content="width=device-width"><style>{STYLE}</style></head><body>'
        f'<header><h1>{title}</h1><p class="meta">{_e(key.repo_type)} · revision '
        f"<code>{_e(revision)}</code> = <code>{commit_id}</code>{' · private' if private else ''}</p></header>"
        + (f'<section id="problems"><h2>Problems</h2><ul>{problem_list}</ul></section>' if problems else "")
        + _widgets(meta, key.repo_type, has)
        + f'<article id="card">{card}</article>'
        + _files(request.hub, key, commit_id, tree)
        + (_pins(store.text(tree, MANIFEST)) if MANIFEST in tree else "")
        + _refs(request.hub, key, commit_id)
        + "</body></html>"
    )
    headers = {
        "Content-Type": "text/html; charset=utf-8",
        "Content-Security-Policy": content_security_policy(request.hub.url, request.hub.cdn_url),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "X-Repo-Commit": commit_id,
    }
    return Response(200, headers, page.encode())
