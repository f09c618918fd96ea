"""A push plan read against the release already published: what the change is, and what is not ours.

A plan says which files a push would add, change or delete, but not why: a pull request that
prepares the next release changes files on purpose, while a file someone edited on the Hub directly
differs too. The published manifest (read from the Hub at the planned-on commit, one small
regular file, its bytes checked against the listing) tells them apart: a file that differs on the Hub
although the published manifest and this release pin the same bytes, that the published manifest
pins and the Hub no longer holds, or that is on the Hub and in neither manifest, was changed outside
a release. When this release leaves the manifest unchanged, everything derived from it (the rendered
card) must be unchanged too, so any difference is such an edit. Nothing else is downloaded: the
comparison is the plan's, by the Hub's LFS sha256 or git blob id.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hubrelease.errors import HubReleaseError
from hubrelease.findings import Finding
from hubrelease.hub.download import read_checked
from hubrelease.manifest import load_manifest_text
from hubrelease.release_files import SIGNATURE_NAME, published_paths, release_files

if TYPE_CHECKING:
    from huggingface_hub import HfApi

    from hubrelease.hub.plan import PlannedFile, PushPlan, RemoteSnapshot

_OUTSIDE = "this release does not change it: edited on the Hub outside a release"


@dataclass(frozen=True)
class Published:
    """What is on the release branch, read against a plan."""

    commit: str | None
    """The planned-on commit; None when the push would create the repo."""
    manifest: str | None
    """The published manifest read (its repo path); None when the commit holds none (never pushed, or imported)."""
    outside: tuple[Finding, ...]
    """Files changed on the Hub outside a release, each named."""
    fetched_bytes: int
    """Bytes downloaded: the published manifest only."""


def against_published(api: HfApi, plan: PushPlan, remote: RemoteSnapshot) -> Published:
    """Read the published manifest at ``remote.commit`` and name every file the Hub changed on its own."""
    if remote.commit is None or remote.branch_missing:
        return Published(None, None, (), 0)
    name = plan.manifest_path.name
    entry = remote.files.get(name)
    if entry is None:
        return Published(remote.commit, None, (), 0)
    data = read_checked(api, plan.repo_id, remote.commit, plan.repo_type, entry)
    label = f"{plan.repo_id}@{remote.commit[:12]}:{name}"
    try:
        published = load_manifest_text(data.decode("utf-8"), label)
    except (HubReleaseError, UnicodeDecodeError) as exc:
        finding = Finding.make("unreadable", name, f"the published manifest is not a valid manifest: {exc}")
        return Published(remote.commit, name, (finding,), len(data))
    files = release_files(published, name)
    pins = {f.path: f.sha256 for f in files if f.sha256 is not None}
    listed = published_paths(files)
    same_manifest = any(f.path == name and f.status == "unchanged" for f in plan.files)
    outside: list[Finding] = []
    for item in plan.files:
        if item.path == SIGNATURE_NAME or item.status == "unchanged":
            continue
        ours = same_manifest and item.path in listed
        if not (ours or pins.get(item.path) == item.sha256):
            continue  # this release changes it (or adds it): the change under review
        outside.append(_finding(item, remote))
    outside += [
        Finding.make("unlisted", f.path, "on the Hub but in neither the published manifest nor this release")
        for f in plan.deleted
        if f.path not in listed and f.path != SIGNATURE_NAME
    ]
    return Published(remote.commit, name, tuple(sorted(outside)), len(data))


def _finding(item: PlannedFile, remote: RemoteSnapshot) -> Finding:
    found = remote.files.get(item.path)
    if found is None:
        return Finding.make("missing", item.path, f"not on the Hub, though published and pinned; {_OUTSIDE}")
    seen = found.sha256 or f"git blob {found.blob_id}"
    message = f"the Hub holds other bytes than the published manifest pins; {_OUTSIDE}"
    return Finding.make("digest_mismatch", item.path, message, item.sha256, seen)
