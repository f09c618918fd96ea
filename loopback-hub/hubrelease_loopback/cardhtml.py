"""A card's markdown as the Hub shows it, safe to serve: CommonMark with GFM tables and strikethrough
(markdown-it-py), the raw HTML a card may hold kept only as far as a sanitizer allows, and every
image and link resolved in the repo at one revision.

A card is untrusted input. The HTML markdown-it produces goes through nh3 (the Ammonia sanitizer):
no ``<script>``, ``<style>``, ``<iframe>``, form or event handler (``onerror=``...) survives, nor a
``javascript:`` or ``data:`` URL; comments are dropped, as the Hub hides them. An image from outside
the machine loses its ``src`` (never fetched) and is reported. Headings get GitHub-style ids, so
``#section`` links can be checked. Not rendered as on the Hub: autolinked bare URLs (GFM linkify)
and math.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

import nh3
from markdown_it import MarkdownIt

ReferenceKind = Literal["image", "link"]
_HEADINGS = {f"h{n}" for n in range(1, 7)}
_ATTRIBUTES: dict[str, set[str]] = {
    **{tag: set(values) for tag, values in nh3.ALLOWED_ATTRIBUTES.items()},
    **{tag: {"id", "align"} for tag in _HEADINGS},
    "img": {"src", "alt", "title", "width", "height", "align"},
    "td": {"align", "colspan", "rowspan"},
    "th": {"align", "colspan", "rowspan"},
    "p": {"align"},
    "div": {"align"},
}
_SLUG_DROP = re.compile(r"[^\w\- ]", re.UNICODE)


@dataclass(frozen=True)
class Reference:
    """One image or link of a card: where it points, as written and as resolved."""

    kind: ReferenceKind
    target: str
    """As the card wrote it (after markdown-it's URL normalisation)."""
    path: str | None = None
    """The repo path a relative reference names (None: external, in-page or site-absolute)."""
    fragment: str = ""
    external: bool = False
    outside: bool = False
    """A relative reference that climbs out of the repo (``../``)."""


@dataclass(frozen=True)
class RenderedCard:
    html: str
    references: tuple[Reference, ...]
    anchors: frozenset[str] = field(default_factory=frozenset)
    """The ids of the card's headings (``#fragment`` targets)."""


def slug(text: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces as dashes."""
    return _SLUG_DROP.sub("", text.strip().lower()).replace(" ", "-")


def _prepared(renderer: MarkdownIt, text: str) -> tuple[list[Any], set[str]]:
    """Tokens with GitHub-style heading ids, and GFM column alignment as ``align`` rather than the
    ``style`` markdown-it writes: the page's policy allows no inline style."""
    tokens = renderer.parse(text)
    seen: dict[str, int] = {}
    for index, token in enumerate(tokens):
        style = str(token.attrGet("style") or "")
        if token.type in ("th_open", "td_open") and style.startswith("text-align:"):
            token.attrs.pop("style")
            token.attrSet("align", style.removeprefix("text-align:"))
        if token.type != "heading_open" or index + 1 >= len(tokens):
            continue
        words = [c.content for c in tokens[index + 1].children or [] if c.type in ("text", "code_inline")]
        base = slug("".join(words))
        count = seen.get(base, 0)
        seen[base] = count + 1
        token.attrSet("id", base if count == 0 else f"{base}-{count}")
    return tokens, {str(t.attrGet("id")) for t in tokens if t.type == "heading_open"}


def render_card(text: str, resolve: Callable[[str], str]) -> RenderedCard:
    """``text`` (the card body, without front matter) as sanitized HTML; ``resolve`` maps a repo
    path to the URL that serves it at the page's revision."""
    renderer = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    tokens, anchors = _prepared(renderer, text)
    raw = renderer.renderer.render(tokens, renderer.options, {})
    references: list[Reference] = []

    def keep(tag: str, attribute: str, value: str) -> str | None:
        if (tag, attribute) not in (("img", "src"), ("a", "href")):
            return value
        kind: ReferenceKind = "image" if tag == "img" else "link"
        parts = urlsplit(value)
        if parts.scheme or value.startswith("//"):
            references.append(Reference(kind, value, external=True))
            return None if kind == "image" else value  # no asset from off the machine
        if value.startswith("#"):
            references.append(Reference(kind, value, fragment=parts.fragment))
            return value
        if value.startswith("/"):  # a path on this Hub, not in the repo
            references.append(Reference(kind, value))
            return value
        path = posixpath.normpath(unquote(parts.path)) if parts.path else ""
        if path.startswith("../") or path == "..":
            references.append(Reference(kind, value, outside=True))
            return None
        references.append(Reference(kind, value, path=path, fragment=parts.fragment))
        suffix = f"#{parts.fragment}" if parts.fragment else ""
        return resolve(path) + suffix

    html = nh3.clean(
        raw,
        tags=set(nh3.ALLOWED_TAGS),
        clean_content_tags={"script", "style"},
        attributes=_ATTRIBUTES,
        attribute_filter=keep,
        url_schemes={"http", "https", "mailto"},
        strip_comments=True,
    )
    return RenderedCard(html, tuple(references), frozenset(anchors))
