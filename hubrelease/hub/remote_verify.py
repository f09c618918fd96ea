"""Remote verify: the published repo and every pinned repo, checked from Hub metadata alone.

Nothing is downloaded: the files at the commit come from ``hub.metadata``. LFS files compare by
sha256; regular files have only a git blob SHA-1 on the Hub, so it is computed with
``huggingface_hub.utils.sha.git_hash`` from the local copy when that copy still matches the manifest
(regular files are small by construction: the Hub stores big ones in LFS). Pinned GGUF and
safetensors files are checked by their header pins through ``hub.remote_headers``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from huggingface_hub import HfApi
from huggingface_hub.utils.sha import git_hash

from hubrelease.errors import CheckFailed, NotFoundError
from hubrelease.findings import FileCheck, Finding, VerifyReport
from hubrelease.hub.metadata import (
    list_files,
    remote_files,
    resolve_commit,
)
from hubrelease.hub.remote_headers import RemoteRepo, header_findings
from hubrelease.manifest.models import Manifest, PinnedDataset, PinnedRepo
from hubrelease.release_files import SIGNATURE_NAME, published_paths
from hubrelease.verify.compare import ExpectedFile, Observed, compare, missing
from hubrelease.verify.expected import expectations

_SHOWN = 3  # problems named in the one-line refusal; --json of `verify --remote` lists all


def verify_remote(
    manifest: Manifest,
    api: HfApi,
    revision: str | None = None,
    *,
    manifest_path: Path,
    root: Path | None = None,
    manifest_name: str | None = None,
) -> VerifyReport:
    """Compare the published repo at ``revision`` (default: the release branch) and all pins with the manifest.

    Every file push publishes (``release_files``) must be on the Hub as pinned or derived
    (``verify.expected``): the card as a fresh render (or its pin), the manifest as the one at
    ``manifest_path`` (published as ``manifest_name``, default its file name), ``root:`` aside;
    anything else on the Hub is a finding. ``root`` is the local release folder (None: none at hand),
    read only for what a regular file on the Hub needs: the git blob id of the expected content.
    """
    release = manifest.release
    rev = revision or release.revision
    commit = resolve_commit(api, release.repo_id, rev, release.repo_type)
    remote = list_files(api, release.repo_id, commit, release.repo_type)
    derived = expectations(manifest, manifest_path, root, manifest_name)
    findings = list(derived.findings)
    checks: list[FileCheck] = []
    for published, pinned in derived.files:
        item = pinned._replace(name=published.path, optional=False)
        found = remote.get(published.path)
        if found is None:
            check, finding = missing(item, "remote")
            if published.kind == "manifest":
                finding = _manifest_missing(finding, manifest.imported_at)
            checks.append(check)
            findings.append(finding)
            continue
        expected_blob = None
        if found.sha256 is None and item.sha256 is not None:
            data = derived.content.get(published.path)
            local = root / published.local if root is not None else None
            expected_blob = git_hash(data) if data is not None else _local_blob_id(local, item.sha256)
        seen = Observed(found.size, found.sha256, found.blob_id, "remote")
        check, problems = compare(item, seen, "remote", expected_blob)
        checks.append(check)
        findings.extend(problems)
    checked = {published.path for published, _ in derived.files}
    findings.extend(
        Finding.make("missing", f.path, "file is not on the Hub")
        for f in derived.published
        if f.path not in checked and f.path not in remote
    )
    expected_paths = published_paths(derived.published) | {SIGNATURE_NAME}  # checked by --signature
    findings.extend(
        Finding.make("unlisted", name, "file is on the Hub but not in the manifest")
        for name in remote
        if name not in expected_paths
    )
    findings.extend(pin_findings(api, manifest))
    pins_checked = len(manifest.pins.targets) + len(manifest.pins.base_drafters)
    extra: dict[str, object] = {"repo_id": release.repo_id, "commit": commit, "pins_checked": pins_checked}
    return VerifyReport(
        "remote", release.repo_id, tuple(checks), tuple(sorted(findings)), revision=rev, extra=extra
    )


def _manifest_missing(finding: Finding, imported_at: str | None) -> Finding:
    """A published manifest that is missing: drift for a pushed release; for a manifest ``import`` wrote
    (a repo hubrelease had not published) a note, since its first push is what publishes it."""
    if imported_at is None:
        return finding._replace(message="the manifest is not on the Hub (push publishes it)")
    message = f"not on the Hub yet: imported at {imported_at[:12]}; its first push publishes it"
    return finding._replace(message=message, severity="info")


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


def pin_findings(api: HfApi, manifest: Manifest) -> list[Finding]:
    """Every pinned repo and dataset: its revision exists and holds the pinned files, sizes, digests and headers."""
    findings: list[Finding] = []
    for pin in [*manifest.pins.targets, *manifest.pins.base_drafters]:
        findings.extend(_check_pin(api, pin))
    for dataset in manifest.pins.datasets:
        findings.extend(_check_dataset(api, dataset))
    return findings


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
        found = remote.get(item.path)
        pinned = ExpectedFile(label, item.size, item.sha256)
        if found is None:
            findings.append(missing(pinned, "remote")[1])
            continue
        findings.extend(
            compare(pinned, Observed(found.size, found.sha256, found.blob_id, "remote"), "remote")[1]
        )
        findings.extend(header_findings(headers, item, label))
    return findings


def _check_dataset(api: HfApi, dataset: PinnedDataset) -> list[Finding]:
    revision = dataset.revision or "main"
    try:
        resolve_commit(api, dataset.repo_id, revision, "dataset")
    except NotFoundError as exc:
        return [Finding.make("revision_missing", pin_label(dataset.repo_id, revision), exc.message)]
    return []


def check_pins(api: HfApi, manifest: Manifest) -> None:
    """Raise ``CheckFailed`` (exit 1) unless every pin is on the Hub as pinned: repo, revision, files, sizes.

    The same check ``verify --remote`` makes of the pins (``tree.pin_findings``: digests and header
    pins too), made before the push writes anything; unpinned pins are checked at their branch head.
    """
    errors = [f for f in pin_findings(api, manifest) if f.severity == "error"]
    if not errors:
        return
    named = "; ".join(f"{f.path}: {f.message}" for f in errors[:_SHOWN])
    if len(errors) > _SHOWN:
        named += f"; and {len(errors) - _SHOWN} more"
    raise CheckFailed(
        f"{len(errors)} pin(s) not on the Hub as pinned: {named}; {_fix(errors[0])}; nothing was pushed",
        field="pins",
    )


def _fix(finding: Finding) -> str:
    """What to do about the first problem, in the manifest's terms."""
    if finding.kind == "revision_missing":
        return (
            "publish that repo first, or correct the pin's repo_id / revision (`hubrelease lock` "
            "records the commit a branch points to)"
        )
    if finding.kind == "missing":
        return "correct the file's path in the pin, or remove the file from the pin"
    return (
        "the repo no longer holds the pinned bytes: pin the revision that was measured, or re-pin "
        "deliberately (remove the stale size / sha256 / header pin, then `hubrelease lock`)"
    )
