"""`import`: a manifest for a repo already on the Hub, without downloading its large files.

One ``repo_info`` fixes the revision to a commit; the recursive tree listing (``hub.metadata``) gives
every file's size, git blob id and, for LFS files, the sha256. A regular (non-LFS) file has no
sha256 on the Hub, only a git blob id; regular files are small by construction (the Hub moves
anything big to LFS), so their bytes are fetched (``hub.download``: one GET each, checked against
the listing) to compute the sha256 of the Hub's content. LFS GGUF and safetensors files get their
tensor composition from range reads of their headers (``hub.remote_headers``, 1-2 requests each).
The README's front matter is parsed with
huggingface_hub's ``ModelCard`` / ``DatasetCard``.
"""

from __future__ import annotations

import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hubrelease.errors import FormatError, InputError
from hubrelease.findings import VerifyReport
from hubrelease.fsutil import atomic_write_bytes
from hubrelease.hashing import sha256_file
from hubrelease.hub.client import metadata
from hubrelease.hub.download import download, read_checked
from hubrelease.hub.metadata import RemoteFile, list_files, resolve_commit
from hubrelease.hub.plan import REGULAR_FILE_MAX
from hubrelease.hub.remote_headers import RemoteRepo, header_pin
from hubrelease.hub.remote_verify import verify_remote
from hubrelease.manifest import load_manifest_text
from hubrelease.manifest.card_fields import card_release_fields
from hubrelease.manifest.models import HAND_WRITTEN, Manifest, RepoType, is_repo_id
from hubrelease.onboarding.document import ManifestDraft, refuse_existing, write_new_manifest
from hubrelease.onboarding.facts import FileFacts, detect_evaluation, inspect_composition
from hubrelease.onboarding.init import DEFAULT_LICENSE, README
from hubrelease.onboarding.roles import artifact_entries
from hubrelease.release_files import HUB_FILES
from hubrelease.revisions import is_commit

if TYPE_CHECKING:
    from huggingface_hub import HfApi

# The Hub refuses regular files above 10 MiB; anything bigger that is not LFS is pinned by size only.
REGULAR_FETCH_LIMIT = REGULAR_FILE_MAX
# The name push publishes a manifest under by default; import restores it when the repo holds one.
MANIFEST_NAME = "hubrelease.yaml"


@dataclass(frozen=True)
class ImportResult:
    """The written manifest, the commit it describes and what was fetched to describe it."""

    manifest: Manifest
    path: Path
    commit: str
    revision: str
    fetched_bytes: int
    warnings: tuple[str, ...]
    restored: bool = False
    """True when the repo held a published manifest, written back unchanged (pins, card, roles, claims)."""
    report: VerifyReport | None = None
    """The restored manifest checked against the Hub at ``commit``."""
    check: str | None = None
    """The command that checks the Hub against a described (not restored) manifest, as its header says."""


_TYPE_PREFIXES = {"models/": "model", "datasets/": "dataset", "spaces/": "space"}


def parse_spec(spec: str) -> tuple[str, str, RepoType | None]:
    """A repo as the ``hf`` CLI names it -> (repo id, revision or ``main``, repo type or None).

    ``namespace/name[@revision]``, with an optional ``datasets/`` / ``spaces/`` / ``models/``
    prefix and an optional ``hf://`` scheme (``hf://datasets/org/name@v1``).
    """
    body = spec.removeprefix("hf://")
    kind: RepoType | None = None
    for prefix, name in _TYPE_PREFIXES.items():
        if body.startswith(prefix):
            body, kind = body.removeprefix(prefix), name  # type: ignore[assignment]
            break
    repo_id, _, revision = body.partition("@")
    if not is_repo_id(repo_id):
        raise InputError(f"{repo_id!r} is not a Hub repo id (expected namespace/name, optionally @revision)")
    if "@" in body and not revision:
        raise InputError(f"{spec!r}: empty revision after '@'")
    return repo_id, revision or "main", kind


def import_repo(
    api: HfApi,
    spec: str,
    out: Path,
    *,
    repo_type: RepoType | None = None,
    force: bool = False,
    endpoint: str | None = None,
) -> ImportResult:
    """Describe ``spec`` (``[hf://][datasets/]repo[@revision]``) at one commit and write the manifest to ``out``.

    ``endpoint`` is the ``--endpoint`` the user gave, repeated in the check command the result carries.
    """
    refuse_existing(out, force)
    repo_id, revision, kind = parse_spec(spec)
    if kind is not None and repo_type is not None and kind != repo_type:
        raise InputError(f"{spec!r} names a {kind} repo but --repo-type is {repo_type}", field="repo-type")
    repo_type = kind or repo_type or "model"
    commit = resolve_commit(api, repo_id, revision, repo_type)
    listed = list_files(api, repo_id, commit, repo_type)
    _refuse_unsafe_paths(repo_id, commit, listed)
    published = next((n for n in (out.name, MANIFEST_NAME) if n in listed), None)
    if published is not None:
        return _restore(api, repo_id, revision, commit, repo_type, remote=listed[published], out=out)
    # The manifest publishes itself under its own name; .gitattributes is the Hub's.
    wanted = sorted(n for n in listed if n not in HUB_FILES and n != out.name)
    remote = {name: listed[name] for name in wanted}
    small = [n for n, f in remote.items() if f.sha256 is None and f.size <= REGULAR_FETCH_LIMIT]
    warnings: list[str] = []
    if README in remote and README not in small:
        # An LFS README is fetched for its front matter only while it is as small as a regular file.
        if remote[README].size <= REGULAR_FETCH_LIMIT:
            small.append(README)
        else:
            warnings.append(
                f"{README}: {remote[README].size} bytes in LFS, not fetched; card metadata not imported"
            )
    with tempfile.TemporaryDirectory(prefix="hubrelease-import-") as tmp:
        local = download(api, repo_id, commit, repo_type, [remote[n] for n in small], folder=Path(tmp))
        fetched = sum(path.stat().st_size for path in local.values())
        facts: list[FileFacts] = []
        headers = RemoteRepo(api, repo_id, commit, repo_type)
        for name in wanted:
            item, note = _describe(remote[name], local.get(name), headers)
            facts.append(item)
            if note:
                warnings.append(note)
        card_fields: dict[str, Any] = {}
        if README in local:
            card_fields, notes = card_release_fields(local[README], repo_type)
            warnings += notes
    branch = _branch(api, repo_id, revision, repo_type)
    if branch != revision:
        warnings.append(f"{revision!r} is not a branch; release.revision is set to {branch!r} for push")
    # The card is never an artifact: the repo's README.md is kept as a hand-written card, pinned.
    readme = next((f for f in facts if f.name == README and f.sha256 is not None), None)
    card = {"template": HAND_WRITTEN, "size": readme.size, "sha256": readme.sha256} if readme else None
    artifacts, evaluations = artifact_entries([f for f in facts if f is not readme])
    release: dict[str, Any] = {"repo_id": repo_id, "repo_type": repo_type}
    if branch != "main":
        release["revision"] = branch
    release["license"] = card_fields.pop("license", DEFAULT_LICENSE)
    release.update(card_fields)
    check = verify_command(out, revision, endpoint)
    header = _header(repo_id, revision, repo_type, commit, out, check=check)
    draft = ManifestDraft(header, release, artifacts, evaluations, card=card, imported_at=commit)
    manifest = write_new_manifest(out, draft, force=force)
    return ImportResult(manifest, out, commit, revision, fetched, tuple(warnings), check=check)


def _refuse_unsafe_paths(repo_id: str, commit: str, listed: dict[str, RemoteFile]) -> None:
    """A path that would leave the release folder (``..``, absolute, empty parts) stops the import."""
    for name in listed:
        parts = name.split("/")
        if name.startswith("/") or "\\" in name or any(p in ("", ".", "..") for p in parts):
            raise InputError(
                f"{repo_id}@{commit[:12]}: the Hub lists the unsafe path {name!r}; nothing was written"
            )


def _restore(
    api: HfApi, repo_id: str, revision: str, commit: str, repo_type: str, *, remote: RemoteFile, out: Path
) -> ImportResult:
    """Write the repo's own published manifest to ``out`` byte for byte, then check it against the Hub.

    Byte for byte, so a ``push`` of the unchanged import plans nothing; validated first, so a
    broken published manifest is one error line, not a bad file on disk.
    """
    label = f"{repo_id}@{commit[:12]}:{remote.path}"
    data = read_checked(api, repo_id, commit, repo_type, remote)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{label} is not UTF-8 text") from None
    manifest = load_manifest_text(text, label)
    if manifest.release.repo_id != repo_id:
        raise InputError(f"{label} describes {manifest.release.repo_id}, not this repo; nothing written")
    atomic_write_bytes(out, data)
    report = verify_remote(manifest, api, commit, manifest_path=out, manifest_name=remote.path)
    warnings = tuple(f"{f.path}: {f.message}" for f in report.findings if f.severity == "error")
    return ImportResult(manifest, out, commit, revision, len(data), warnings, True, report)


def _describe(remote: RemoteFile, local: Path | None, headers: RemoteRepo) -> tuple[FileFacts, str | None]:
    """Facts of one file: LFS from metadata (and model headers by range reads); regular files from their
    bytes (downloaded already checked against the listed git blob id)."""
    if remote.sha256 is not None:
        try:
            pinned = header_pin(headers, remote.path)
        except FormatError as exc:
            note = f"{remote.path}: header not readable ({exc.message}); composition not recorded"
            return FileFacts(remote.path, remote.size, remote.sha256), note
        composition = pinned[1] if pinned else None
        return FileFacts(remote.path, remote.size, remote.sha256, composition), None
    if local is None:
        note = f"{remote.path}: regular file of {remote.size} bytes not fetched; pinned by size only"
        return FileFacts(remote.path, remote.size, None), note
    composition, header_note = inspect_composition(local)
    evaluation, eval_note = detect_evaluation(local)
    notes = [f"{remote.path}: {n}" for n in (header_note, eval_note) if n]
    facts = FileFacts(remote.path, remote.size, sha256_file(local), composition, evaluation)
    return facts, "; ".join(notes) or None


def _branch(api: HfApi, repo_id: str, revision: str, repo_type: str) -> str:
    """``revision`` when it names a branch (the one push would update), else ``main``."""
    if revision == "main" or is_commit(revision):
        return "main"
    refs = metadata(repo_id, revision, lambda: api.list_repo_refs(repo_id, repo_type=repo_type))
    return revision if revision in {branch.name for branch in refs.branches} else "main"


def verify_command(out: Path, revision: str, endpoint: str | None) -> str:
    """The check of the Hub against an imported manifest: the revision asked for, so a later change on
    a branch is drift (a commit given stays that commit), on the Hub the import read."""
    words = ["hubrelease", "verify", str(out), "--remote", "--revision", revision]
    words += ["--endpoint", endpoint] if endpoint else []
    return shlex.join(words)


def _header(repo_id: str, revision: str, repo_type: str, commit: str, out: Path, *, check: str) -> list[str]:
    type_flag = f" --repo-type {repo_type}" if repo_type != "model" else ""
    return [
        f"Imported by `hubrelease import {repo_id}@{revision}{type_flag}` at commit {commit}.",
        "Sizes and sha256 come from the Hub: LFS files from their LFS metadata (nothing downloaded),",
        "regular files (small by construction) from their bytes, checked against their git blob id.",
        f"Check the Hub against it: `{check}`.",
        f"Files for a local verify or push: `hf download {repo_id}{type_flag} --revision {commit} "
        f"--local-dir {out.parent}`.",
    ]
