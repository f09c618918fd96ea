"""Remote verify: the published repo and every pinned repo, checked from Hub metadata alone.

Nothing is downloaded. One ``repo_info`` fixes the revision to a commit; ``list_repo_tree``
(recursive, paginated: 1000 entries per page) then lists every file at that commit with its size,
git blob SHA-1 and LFS sha256. ``repo_info().siblings`` is never used: the Hub truncates it for big
repos (huggingface_hub 2.x moved to the tree for the same reason). Pins name their files, so
they are read with ``get_paths_info``, 500 paths per request. LFS files compare by sha256; regular files have only a git blob SHA-1 on the Hub, so it is
computed with ``huggingface_hub.utils.sha.git_hash`` from the local copy when that copy still
matches the manifest (regular files are small by construction: the Hub stores big ones in LFS).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import HfApi
from huggingface_hub.hf_api import DatasetInfo, KernelInfo, ModelInfo, RepoFile, SpaceInfo
from huggingface_hub.utils.sha import git_hash

from hubrelease.errors import NotFoundError
from hubrelease.hub.client import metadata
from hubrelease.hub.remote_headers import RemoteRepo, header_findings
from hubrelease.manifest.models import Manifest, PinnedDataset, PinnedRepo
from hubrelease.verify.findings import FileCheck, Finding, VerifyReport

PATHS_PER_REQUEST = 500
RepoInfo = ModelInfo | DatasetInfo | SpaceInfo | KernelInfo
# Files the Hub or hubrelease itself adds to every published repo.
ALWAYS_PUBLISHED = (".gitattributes",)


@dataclass(frozen=True)
class RemoteFile:
    """What the Hub says about one file, with no bytes transferred."""

    path: str
    size: int
    blob_id: str
    sha256: str | None


def _remote_file(entry: RepoFile) -> RemoteFile:
    sha256 = entry.lfs.sha256 if entry.lfs is not None else None
    return RemoteFile(entry.path, entry.size, entry.blob_id, sha256)


def remote_files(
    api: HfApi, repo_id: str, paths: Sequence[str], revision: str, repo_type: str = "model"
) -> dict[str, RemoteFile]:
    """Metadata of ``paths`` at ``revision`` (a commit, ideally), ``PATHS_PER_REQUEST`` per request."""
    found: dict[str, RemoteFile] = {}
    for start in range(0, len(paths), PATHS_PER_REQUEST):
        chunk = list(paths[start : start + PATHS_PER_REQUEST])
        call = functools.partial(api.get_paths_info, repo_id, chunk, revision=revision, repo_type=repo_type)
        entries = metadata(repo_id, revision, call)
        found.update((e.path, _remote_file(e)) for e in entries if isinstance(e, RepoFile))
    return found


def list_files(api: HfApi, repo_id: str, commit: str, repo_type: str = "model") -> dict[str, RemoteFile]:
    """Every file at ``commit``, from the recursive tree listing (all pages), never truncated."""
    entries = metadata(
        repo_id,
        commit,
        lambda: list(api.list_repo_tree(repo_id, recursive=True, revision=commit, repo_type=repo_type)),
    )
    return {e.path: _remote_file(e) for e in entries if isinstance(e, RepoFile)}


def repo_info(api: HfApi, repo_id: str, revision: str, repo_type: str = "model") -> RepoInfo:
    """The repo at ``revision`` (its commit in ``.sha``, visibility in ``.private``); siblings unused."""
    return metadata(repo_id, revision, lambda: api.repo_info(repo_id, revision=revision, repo_type=repo_type))


def resolve_commit(api: HfApi, repo_id: str, revision: str, repo_type: str = "model") -> str:
    """Revision (branch, tag or commit) -> commit id, in one request."""
    return str(repo_info(api, repo_id, revision, repo_type).sha)


def verify_remote(
    manifest: Manifest,
    api: HfApi,
    revision: str | None = None,
    *,
    root: Path | None = None,
    known: Iterable[str] = (),
) -> VerifyReport:
    """Compare the published repo at ``revision`` (default: the release branch) and all pins with the manifest.

    ``root`` is the local release folder, used only to compute git blob ids of regular files;
    ``known`` names extra files that are published on purpose (the manifest itself).
    """
    release = manifest.release
    rev = revision or release.revision
    commit = resolve_commit(api, release.repo_id, rev, release.repo_type)
    remote = list_files(api, release.repo_id, commit, release.repo_type)
    expected_paths = [a.path for a in manifest.artifacts]
    findings: list[Finding] = []
    checks: list[FileCheck] = []
    for artifact in manifest.artifacts:
        local = root / artifact.local_path if root is not None else None
        check, problems = _compare(
            artifact.path, artifact.size, artifact.sha256, remote.get(artifact.path), local
        )
        checks.append(check)
        findings.extend(problems)
    published = set(expected_paths) | set(manifest.evaluation_paths) | set(ALWAYS_PUBLISHED) | set(known)
    published.add(manifest.card_output)
    pinned_extras = [(e.path, e.size, e.sha256) for e in manifest.evaluation_files]
    if manifest.card is not None and manifest.card.hand_written:
        pinned_extras.append((manifest.card.output, manifest.card.size, manifest.card.sha256))
    for name, size, sha256 in pinned_extras:
        if name not in remote:
            findings.append(Finding.make("missing", name, "pinned file is not on the Hub"))
            continue
        local = root / name if root is not None else None
        if size is not None or sha256 is not None:  # evaluation files and a hand-written card, pinned
            _, problems = _compare(name, size, sha256, remote.get(name), local)
            findings.extend(problems)
    findings.extend(
        Finding.make("unlisted", name, "file is on the Hub but not in the manifest")
        for name in remote
        if name not in published
    )
    pins = [*manifest.pins.targets, *manifest.pins.base_drafters]
    for pin in pins:
        findings.extend(_check_pin(api, pin))
    for dataset in manifest.pins.datasets:
        findings.extend(_check_dataset(api, dataset))
    extra: dict[str, object] = {"repo_id": release.repo_id, "commit": commit, "pins_checked": len(pins)}
    return VerifyReport(
        "remote", release.repo_id, tuple(checks), tuple(sorted(findings)), revision=rev, extra=extra
    )


def _compare(
    path: str, size: int | None, sha256: str | None, remote: RemoteFile | None, local: Path | None
) -> tuple[FileCheck, list[Finding]]:
    """One file: size first, then the LFS sha256 or the git blob id of the local copy."""
    if remote is None:
        return FileCheck(path, "missing", source="remote"), [
            Finding.make("missing", path, "file is not on the Hub")
        ]
    if size is not None and remote.size != size:
        message = f"size mismatch on the Hub: expected {size} bytes, got {remote.size}"
        finding = Finding.make("size_mismatch", path, message, str(size), str(remote.size))
        return FileCheck(path, "size_mismatch", remote.size, remote.sha256, "remote"), [finding]
    check = FileCheck(path, "ok", remote.size, remote.sha256, "remote")
    if sha256 is None:
        message = "no sha256 in the manifest; only the size was compared"
        return check, [Finding.make("size_only", path, message, actual=remote.sha256)]
    if remote.sha256 is not None:
        if remote.sha256 != sha256:
            message = f"sha256 mismatch on the Hub: expected {sha256}, got {remote.sha256}"
            finding = Finding.make("digest_mismatch", path, message, sha256, remote.sha256)
            return FileCheck(path, "digest_mismatch", remote.size, remote.sha256, "remote"), [finding]
        return check, []
    expected_blob = _local_blob_id(local, sha256)
    if expected_blob is None:
        message = "regular (non-LFS) file on the Hub and no matching local copy: only the size was compared"
        return check, [Finding.make("size_only", path, message)]
    if expected_blob != remote.blob_id:
        message = f"content differs on the Hub: git blob {remote.blob_id}, expected {expected_blob}"
        finding = Finding.make("digest_mismatch", path, message, expected_blob, remote.blob_id)
        return FileCheck(path, "digest_mismatch", remote.size, None, "remote"), [finding]
    return FileCheck(path, "ok", remote.size, sha256, "remote"), []


def _local_blob_id(local: Path | None, sha256: str) -> str | None:
    """git blob SHA-1 of the local copy, only if that copy is the pinned content."""
    if local is None or not local.is_file():
        return None
    data = local.read_bytes()
    if hashlib.sha256(data).hexdigest() != sha256:
        return None
    return git_hash(data)


def pin_label(repo_id: str, revision: str | None, path: str | None = None) -> str:
    """How findings about pinned repos name their subject: ``repo@rev[:path]``."""
    label = f"{repo_id}@{(revision or 'main')[:12]}"
    return f"{label}:{path}" if path else label


def _check_pin(api: HfApi, pin: PinnedRepo) -> list[Finding]:
    """The pinned revision still exists and still holds the pinned sizes and digests."""
    revision = pin.revision or "main"
    try:
        if not pin.files:
            resolve_commit(api, pin.repo_id, revision, pin.repo_type)
            return []
        remote = remote_files(api, pin.repo_id, [f.path for f in pin.files], revision, pin.repo_type)
    except NotFoundError as exc:
        return [Finding.make("revision_missing", pin_label(pin.repo_id, revision), exc.message)]
    findings: list[Finding] = []
    headers = RemoteRepo(api, pin.repo_id, revision, pin.repo_type)
    for item in pin.files:
        label = pin_label(pin.repo_id, revision, item.path)
        _, problems = _compare(label, item.size, item.sha256, remote.get(item.path), None)
        findings.extend(problems)
        if item.path in remote:
            findings.extend(header_findings(headers, item, label))
    return findings


def _check_dataset(api: HfApi, dataset: PinnedDataset) -> list[Finding]:
    revision = dataset.revision or "main"
    try:
        resolve_commit(api, dataset.repo_id, revision, "dataset")
    except NotFoundError as exc:
        return [Finding.make("revision_missing", pin_label(dataset.repo_id, revision), exc.message)]
    return []
