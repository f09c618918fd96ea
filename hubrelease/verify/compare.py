"""Pins vs observed facts: the one comparison local verify, remote verify and pinned repos use.

A file is pinned by an ``ExpectedFile`` (size and sha256 from the manifest, or derived: a fresh render
of the card, the manifest itself) and observed as an ``Observed``: its size and a digest, the
sha256 hashed locally or the Hub's LFS oid, or only the git blob id of a regular file on the Hub
(then compared with the blob id of the expected content, when that content is at hand).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from hubrelease.findings import FileCheck, FileSource, FileStatus, Finding

Where = Literal["local", "remote"]
_ON = {"local": "", "remote": " on the Hub"}


class ExpectedFile(NamedTuple):
    """A file that must exist, with whatever was pinned (or derived) about it."""

    name: str
    size: int | None
    sha256: str | None
    require_digest: bool = True
    """False: an unpinned digest is a warning (evaluation files listed as bare paths)."""
    basis: str = ""
    """What the pins were derived from (``a re-render of ...``), named in findings; empty: the manifest."""
    optional: bool = False
    """A missing file is fine (a copy of the manifest in a release folder it does not live in)."""


class Observed(NamedTuple):
    """What was seen of a file, no bytes of it kept."""

    size: int
    sha256: str | None = None
    """Content digest: hashed locally, or the Hub's LFS sha256."""
    blob_id: str | None = None
    """Git blob id (the only digest the Hub has of a regular file)."""
    source: FileSource = "hashed"


def missing(item: ExpectedFile, where: Where, message: str | None = None) -> tuple[FileCheck, Finding]:
    """The state and finding of a file that is not there."""
    text = message or ("file is missing" if where == "local" else "file is not on the Hub")
    return FileCheck(item.name, "missing", source="remote" if where == "remote" else "none"), Finding.make(
        "missing", item.name, text
    )


def size_finding(item: ExpectedFile, size: int, where: Where) -> Finding | None:
    """A size mismatch (decided before any byte is read), else None."""
    if item.size is None or size == item.size:
        return None
    if item.basis:
        message = f"differs{_ON[where]} from {item.basis}: {size} bytes, expected {item.size}"
    else:
        message = f"size mismatch{_ON[where]}: expected {item.size} bytes, got {size}"
    return Finding.make("size_mismatch", item.name, message, str(item.size), str(size))


def compare(
    item: ExpectedFile, seen: Observed, where: Where, expected_blob: str | None = None
) -> tuple[FileCheck, list[Finding]]:
    """One file's state and findings: size first, then sha256, else the git blob id of the expected content.

    ``expected_blob`` is the git blob id of content known to be the pinned one (a local copy whose
    sha256 matches the pin, a fresh render), compared when the Hub has only a blob id.
    """
    name, source = item.name, seen.source
    wrong_size = size_finding(item, seen.size, where)
    if wrong_size is not None:
        return FileCheck(name, "size_mismatch", seen.size, seen.sha256, source), [wrong_size]
    ok = FileCheck(name, "ok", seen.size, seen.sha256, source)
    if item.sha256 is None:
        if where == "remote":
            message = "no sha256 in the manifest; only the size was compared"
            return ok, [Finding.make("size_only", name, message, actual=seen.sha256)]
        status: FileStatus = "unpinned" if item.require_digest else "ok"
        unpinned = Finding.make(
            "unpinned",
            name,
            "no sha256 in the manifest; `hubrelease add` records it",
            actual=seen.sha256,
            severity=None if item.require_digest else "warning",
        )
        return ok._replace(status=status), [unpinned]
    if seen.sha256 is not None:
        if seen.sha256 == item.sha256:
            return ok, []
        return FileCheck(name, "digest_mismatch", seen.size, seen.sha256, source), [
            _mismatch(item, "sha256", item.sha256, seen.sha256, where)
        ]
    if expected_blob is None:
        message = "regular (non-LFS) file on the Hub and no matching local copy: only the size was compared"
        return ok, [Finding.make("size_only", name, message)]
    if seen.blob_id != expected_blob:
        return FileCheck(name, "digest_mismatch", seen.size, None, source), [
            _mismatch(item, "git blob", expected_blob, seen.blob_id or "", where)
        ]
    return ok._replace(sha256=item.sha256), []


def _mismatch(item: ExpectedFile, digest: str, expected: str, actual: str, where: Where) -> Finding:
    if item.basis:
        message = f"differs{_ON[where]} from {item.basis}: {digest} {actual}, expected {expected}"
    elif digest == "sha256":
        message = f"sha256 mismatch{_ON[where]}: expected {expected}, got {actual}"
    else:
        message = f"content differs{_ON[where]}: git blob {actual}, expected {expected}"
    return Finding.make("digest_mismatch", item.name, message, expected, actual)
