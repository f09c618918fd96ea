"""Disk-backed state of the loopback Hub: content-addressed blobs, commits with parents, refs.

Layout under ``root``::

    lfs/<sha256[:2]>/<sha256>          LFS objects, stored only after their sha256 and size checked out
    git/<sha1[:2]>/<sha1>              regular-file blobs, keyed by git blob SHA-1
    repos/<type>s/<ns>/<name>/refs.json       branches, tags, pull requests (one atomic file)
    repos/<type>s/<ns>/<name>/commits/<id>.json   a commit: parents, message, full flat tree
    tmp/                               partial uploads

A commit lands by one ``os.replace`` of ``refs.json`` after its commit file and blobs are on disk,
so a failed or interrupted commit leaves the repo exactly as it was. Ref updates run under a thread
lock plus a file lock, so two processes sharing a folder (``--endpoint local``) cannot both land
a commit on the same parent.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from filelock import FileLock
from huggingface_hub.errors import HFValidationError
from huggingface_hub.utils import validate_repo_id
from huggingface_hub.utils.sha import git_hash

from hubrelease.fsutil import atomic_write_bytes, atomic_write_text
from hubrelease.revisions import is_commit
from hubrelease_loopback.gitpatterns import GitAttributes
from hubrelease_loopback.tenancy import Kind, Tenancy
from hubrelease_loopback.upload_sink import (
    Consumer,
    FileWriter,
    PartDigests,
    Readable,
    hash_span,
    sha256_file,
    sink,
)

REPO_TYPES = ("model", "dataset", "space")
# A new repo's .gitattributes, like (a part of) the Hub's default one: preupload sends what it
# tracks to LFS whatever the size (``wants_lfs``); a commit may change it.
GITATTRIBUTES = "".join(
    f"*.{suffix} filter=lfs diff=lfs merge=lfs -text\n"
    for suffix in ("safetensors", "gguf", "bin", "parquet", "pt", "pth", "ckpt", "npz", "arrow", "onnx", "h5")
)
LFS_MIN_SIZE = 10 * 1024 * 1024
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
STALE_TMP_SECONDS = 15 * 60


class StoreError(Exception):
    """A request the store refuses: HTTP ``status`` plus the Hub's ``X-Error-Code`` when it has one."""

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code


@dataclass(frozen=True)
class MultipartUpload:
    """One multipart LFS upload: the object's sha256 and size, the id the batch gave it, its part size."""

    sha256: str
    size: int
    upload_id: str
    part_size: int

    @property
    def parts(self) -> int:
        return max(1, -(-self.size // self.part_size))

    def span(self, number: int) -> tuple[int, int]:
        """Where part ``number`` sits in the object: (offset, length); 400 for a part it has not."""
        if not 1 <= number <= self.parts:
            raise StoreError(400, f"part {number} is not one of the {self.parts} parts of this upload")
        offset = (number - 1) * self.part_size
        return offset, min(self.part_size, self.size - offset)


@dataclass(frozen=True)
class RepoKey:
    """Which repo a request is about."""

    repo_type: str
    repo_id: str

    @property
    def url_prefix(self) -> str:
        return "" if self.repo_type == "model" else f"{self.repo_type}s/"

    @property
    def holder(self) -> str:
        """``<type>s/<ns>/<name>``: its folder under ``repos/``."""
        return f"{self.repo_type}s/{self.repo_id}"

    @classmethod
    def from_holder(cls, holder: str) -> RepoKey:
        plural, _, repo_id = holder.partition("/")
        return cls(plural[:-1], repo_id)


@dataclass(frozen=True)
class FileOp:
    """One line of an ndjson commit, already decoded; a regular file's bytes are already stored
    (``put_git_blob``), so a commit holds none of them in memory."""

    kind: str  # "file" | "lfsFile" | "deletedFile" | "deletedFolder"
    path: str
    blob: str | None = None
    """A regular file's git blob id."""
    sha256: str | None = None
    size: int | None = None


def lfs_pointer(sha256: str, size: int) -> bytes:
    """The git-lfs pointer file whose git SHA-1 is the entry's ``oid`` on the Hub."""
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()


def wants_lfs(path: str, size: int, sample: bytes, attributes: GitAttributes) -> bool:
    """The upload-mode rule of preupload: big, binary-looking or ``.gitattributes``-tracked files go
    to LFS; empty ones never (huggingface_hub uploads them as regular, ``_commit_api.py``)."""
    if size == 0:
        return False
    return size >= LFS_MIN_SIZE or attributes.lfs(path) or b"\0" in sample


def check_repo_path(path: str, folder: bool = False) -> None:
    """Refuse what the Hub refuses in a commit: empty, absolute, ``..``/``.`` segments, NUL, ``.git/``."""
    parts = (path.rstrip("/") if folder else path).split("/")
    problem = None
    if not path:
        problem = "is empty"
    elif path.startswith("/"):
        problem = "is absolute"
    elif "\0" in path:
        problem = "contains NUL"
    elif "\\" in path:  # the Hub refuses it: on Windows clients it would be a folder separator
        problem = "contains a backslash"
    elif any(part in ("", ".", "..") for part in parts):
        problem = "has an empty, '.' or '..' segment"
    elif ".git" in parts:
        problem = "is inside .git/"
    if problem is not None:
        raise StoreError(400, f"invalid path in commit: {path!r} {problem}")


def now() -> str:
    """The Hub's timestamp format (UTC, milliseconds), for commits, discussions and access requests."""
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())


def event(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    """One discussion event as the Hub lists it (``community.py`` ``deserialize_event``)."""
    return {
        "id": uuid.uuid4().hex[:24],
        "type": kind,
        "createdAt": now(),
        "author": {"name": "local"},
        "data": data,
    }


def comment_event(text: str) -> dict[str, Any]:
    return event("comment", {"edited": False, "hidden": False, "latest": {"raw": text, "html": ""}})


def new_discussion(title: str, description: str, pull_request: bool = True) -> dict[str, Any]:
    """A discussion record (a pull request when ``pull_request``), with its opening comment."""
    return {
        "title": title,
        "description": description,
        "created": now(),
        "status": "draft" if pull_request else "open",
        "pr": pull_request,
        "events": [comment_event(description)],
    }


class HubStore:
    """All persistent state; every public method is safe to call from many handler threads."""

    def __init__(self, root: str | Path) -> None:
        # Resolved once: every path below is built from this one and checked by ``inside``.
        self.root = Path(root).resolve()
        for sub in ("lfs", "git", "repos", "tmp"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.clean_stale_tmp()
        self.tenancy = Tenancy(self.root)
        self.sizes_elsewhere: Callable[[str], int | None] = lambda sha256: None
        """Size of an object stored outside ``lfs/`` (a Xet file, ``XetStore`` sets it), or None."""
        self.part_digests = PartDigests()
        self._thread_lock = threading.RLock()
        self._file_lock = FileLock(str(self.root / ".refs.lock"), thread_local=False)

    def clean_stale_tmp(self, older_than: float = STALE_TMP_SECONDS) -> None:
        """Remove partial uploads a killed server left behind (another live server's are fresh)."""
        cutoff = time.time() - older_than
        for entry in (self.root / "tmp").iterdir():
            with contextlib.suppress(OSError):
                if entry.lstat().st_mtime < cutoff:
                    if entry.is_dir() and not entry.is_symlink():
                        shutil.rmtree(entry)
                    else:
                        entry.unlink()

    def tmp_dir(self) -> Path:
        return self.inside(self.root / "tmp")

    def inside(self, path: Path) -> Path:
        """``path`` (below the root) if no component between the root and it is a symlink."""
        relative = path.relative_to(self.root)
        current = self.root
        for part in relative.parts:
            current = current / part
            if current.is_symlink():
                raise StoreError(
                    403, f"refusing to follow a symlink inside the Hub root: {relative.as_posix()}"
                )
        return path

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        with self._thread_lock, self._file_lock:
            yield

    # -- blobs -------------------------------------------------------------------------------

    def lfs_path(self, sha256: str) -> Path:
        # The oid arrives from request bodies (commit lines, verify): it must not name a path.
        if not _SHA256.match(sha256):
            raise StoreError(400, f"invalid LFS oid {sha256!r}: expected 64 lowercase hex characters")
        return self.inside(self.root / "lfs" / sha256[:2] / sha256)

    def git_path(self, sha1: str) -> Path:
        return self.inside(self.root / "git" / sha1[:2] / sha1)

    def object_size(self, sha256: str) -> int | None:
        """Size of the stored object ``sha256`` (an LFS upload or a Xet file), None if not stored."""
        try:
            return self.lfs_path(sha256).stat().st_size
        except FileNotFoundError:
            return self.sizes_elsewhere(sha256)

    def has_lfs(self, sha256: str, size: int) -> bool:
        return self.object_size(sha256) == size

    def put_lfs(self, sha256: str, size: int, source: Readable) -> int:
        """Stream an LFS object to disk and keep it only if its sha256 and size are the claimed ones."""
        fd, tmp = tempfile.mkstemp(dir=self.tmp_dir(), prefix="lfs.")
        try:
            digest = hashlib.sha256()
            try:
                received = sink(source, [digest.update, FileWriter(fd)], size)
            finally:
                os.close(fd)
            if received > size:
                raise StoreError(400, f"upload is longer than the {size} bytes of the LFS object")
            self._keep_lfs(Path(tmp), sha256, size, (received, digest.hexdigest()))
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        return received

    def _keep_lfs(self, tmp: Path, sha256: str, size: int, got: tuple[int, str]) -> None:
        """Move ``tmp`` into ``lfs/`` if ``got`` (its size, its sha256) is what was claimed, else 400."""
        received, actual = got
        if received != size or actual != sha256:
            raise StoreError(
                400,
                f"uploaded bytes do not match the LFS object: got sha256 {actual} "
                f"and {received} bytes, expected {sha256} and {size} bytes",
            )
        target = self.lfs_path(sha256)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(tmp, target)

    def multipart_path(self, sha256: str, upload_id: str, suffix: str = "") -> Path:
        """The object being assembled (its parts written in place), or with ``.parts`` the folder of
        the received parts' ETags."""
        return self.inside(self.root / "tmp" / f"multipart-{sha256}-{upload_id}{suffix}")

    def put_part(self, upload: MultipartUpload, number: int, source: Readable) -> str:
        """Stream part ``number`` into its place in the object; returns its ETag.

        A part must be exactly its share of the object (the batch gave the part size), else 400. The
        ETag names this upload of the part, as S3's do (the client only echoes it): the content is
        checked once, by the whole object's sha256 at completion, taken here as the parts arrive
        (``PartDigests``: inline for the next part, read back for one that came ahead of it). A
        part cut short leaves no ETag.
        """
        offset, length = upload.span(number)
        key = f"{upload.sha256}-{upload.upload_id}"
        assembled = self.multipart_path(upload.sha256, upload.upload_id)
        fd = os.open(assembled, os.O_WRONLY | os.O_CREAT, 0o600)
        running = self.part_digests.begin(key, number, partial(_hash_part, assembled, upload))
        whole = False
        try:
            consumers: list[Consumer] = [FileWriter(fd, offset)]
            if running is not None:
                consumers.append(running.update)
            received = sink(source, consumers, length)
            if received != length:
                raise StoreError(400, f"part {number} must be {length} bytes, got {received} or more")
            whole = True
        finally:
            os.close(fd)
            self.part_digests.end(key, number, running, whole)
        etag = uuid.uuid4().hex
        # Renamed into place without fsync (``atomic_write_text`` syncs): a part is temporary state,
        # lost with the upload if the machine goes down, and an fsync would wait for the disk at
        # every part of every upload.
        folder = self.multipart_path(upload.sha256, upload.upload_id, ".parts")
        folder.mkdir(exist_ok=True)
        written = folder / f"{number:06d}.{etag}"
        written.write_text(etag)
        os.replace(written, folder / f"{number:06d}")
        return etag

    def complete_multipart(self, upload: MultipartUpload, parts: list[dict[str, Any]]) -> None:
        """Check that the parts named are every part, each with the ETag of its last whole upload,
        then keep the object if its sha256 and size are the claimed ones (400 otherwise)."""
        folder = self.multipart_path(upload.sha256, upload.upload_id, ".parts")
        assembled = self.multipart_path(upload.sha256, upload.upload_id)
        numbers = sorted(int(part["partNumber"]) for part in parts)
        if numbers != list(range(1, upload.parts + 1)):
            raise StoreError(400, f"a multipart upload of {upload.parts} parts names parts {numbers[:20]}")
        for part in parts:
            record = folder / f"{int(part['partNumber']):06d}"
            if not record.is_file():
                raise StoreError(400, f"multipart upload is missing part {part['partNumber']}")
            if record.read_text() != str(part["etag"]).strip('"'):
                raise StoreError(400, f"ETag mismatch for part {part['partNumber']}")
        if not assembled.is_file():  # removed as stale meanwhile (``clean_stale_tmp``)
            raise StoreError(400, "the multipart upload's parts are gone: upload them again")
        try:
            known = self.part_digests.final(f"{upload.sha256}-{upload.upload_id}", upload.parts)
            got = (assembled.stat().st_size, known) if known is not None else sha256_file(assembled)
            self._keep_lfs(assembled, upload.sha256, upload.size, got)
        finally:
            assembled.unlink(missing_ok=True)
            shutil.rmtree(folder, ignore_errors=True)

    def put_git_blob(self, data: bytes) -> str:
        sha1 = git_hash(data)
        path = self.git_path(sha1)
        if not path.is_file():
            atomic_write_bytes(path, data)
        return sha1

    # -- repos, refs, commits ----------------------------------------------------------------

    def _repo_dir(self, key: RepoKey) -> Path:
        """The repo's folder; type and id are checked first so no request can name a path outside ``root``."""
        if key.repo_type not in REPO_TYPES:
            raise StoreError(400, f"unknown repo type {key.repo_type!r}")
        try:
            validate_repo_id(key.repo_id)
        except HFValidationError as exc:
            raise StoreError(400, str(exc).splitlines()[0]) from None
        return self.inside(self.root / "repos" / f"{key.repo_type}s" / key.repo_id)

    def _repo_file(self, key: RepoKey, *parts: str) -> Path:
        return self.inside(self._repo_dir(key).joinpath(*parts))

    def exists(self, key: RepoKey) -> bool:
        return self._repo_file(key, "refs.json").is_file()

    def require(self, key: RepoKey) -> None:
        if not self.exists(key):
            raise StoreError(
                404, f"Repository Not Found for url: {key.repo_type}s/{key.repo_id}.", "RepoNotFound"
            )

    def create_repo(self, key: RepoKey, private: bool) -> bool:
        """Create the repo with the Hub's initial commit (a .gitattributes); False if it already exists."""
        with self._locked():
            if self.exists(key):
                return False
            blob = self.put_git_blob(GITATTRIBUTES.encode())
            commit_id = self._new_commit_id()
            entry = {"size": len(GITATTRIBUTES), "oid": blob, "lfs": None, "last": commit_id}
            self._write_commit(key, commit_id, [], "initial commit", "", tree={".gitattributes": entry})
            refs = {
                "private": private,
                "branches": {"main": commit_id},
                "tags": {},
                "prs": {},
                "uid": uuid.uuid4().hex,
                "created": now(),
            }
            self._write_refs(key, refs)
            return True

    def tenant(self, key: RepoKey) -> str:
        """The repo's name in ``tenancy.py``: a random id given at creation, then its path, so a repo
        deleted and created again under the same name reaches none of the old one's objects."""
        return f"{self.refs(key).get('uid', 'legacy')} {key.holder}"

    def holds(self, tenant: str) -> RepoKey | None:
        """The live repo a ``tenant`` line names, or None if it was deleted or moved since."""
        key = RepoKey.from_holder(tenant.partition(" ")[2])
        try:
            return key if self.exists(key) and self.tenant(key) == tenant else None
        except StoreError:  # a path that validate_repo_id refuses
            return None

    def reachable(self, kind: Kind, digest: str, tenant: str, covers: Callable[[RepoKey], bool]) -> bool:
        """Whether ``digest`` is reachable through ``tenant``'s repo or a live one the caller's token
        ``covers``. The one lookup decides for an outsider: a holder is read only once the token
        names it, so another tenant's object costs what a missing one costs (no timing oracle)."""
        holders = self.tenancy.holders(kind, digest)
        return tenant in holders or any(
            covers(key := RepoKey.from_holder(t.partition(" ")[2])) and self.holds(t) == key for t in holders
        )

    def refs(self, key: RepoKey) -> dict[str, Any]:
        self.require(key)
        data: dict[str, Any] = json.loads(self._repo_file(key, "refs.json").read_text())
        return data

    def _write_refs(self, key: RepoKey, refs: dict[str, Any]) -> None:
        atomic_write_text(self._repo_file(key, "refs.json"), json.dumps(refs, indent=1, sort_keys=True))

    def _new_commit_id(self) -> str:
        return hashlib.sha1(uuid.uuid4().bytes, usedforsecurity=False).hexdigest()

    def _write_commit(
        self,
        key: RepoKey,
        commit_id: str,
        parents: list[str],
        title: str,
        message: str,
        *,
        tree: dict[str, Any],
    ) -> None:
        data = {
            "id": commit_id,
            "parents": parents,
            "title": title,
            "message": message,
            "date": now(),
            "tree": tree,
        }
        atomic_write_text(self._repo_file(key, "commits", f"{commit_id}.json"), json.dumps(data))

    def commit_data(self, key: RepoKey, commit_id: str) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self._repo_file(key, "commits", f"{commit_id}.json")).read_text())
        return data

    def resolve(self, key: RepoKey, revision: str) -> str:
        """Branch, tag, ``refs/pr/N``, ``refs/heads|tags/X`` or a full commit id -> commit id."""
        refs = self.refs(key)
        name = revision
        for prefix, table in (("refs/heads/", "branches"), ("refs/tags/", "tags")):
            if name.startswith(prefix) and name[len(prefix) :] in refs[table]:
                name = name[len(prefix) :]
        if name in refs["branches"]:
            return str(refs["branches"][name])
        if name in refs["tags"]:
            return str(refs["tags"][name]["commit"])
        pr = refs["prs"].get(name[len("refs/pr/") :]) if name.startswith("refs/pr/") else None
        if pr is not None and "commit" in pr:  # a plain discussion has no ref
            return str(pr["commit"])
        if is_commit(name) and self._repo_file(key, "commits", f"{name}.json").is_file():
            return name
        raise StoreError(404, f"Invalid rev id: {revision}", "RevisionNotFound")

    def _commit_by_prefix(self, key: RepoKey, prefix: str) -> str:
        """The one commit of the repo whose id starts with ``prefix`` (5 to 40 hex digits)."""
        if not re.fullmatch(r"[0-9a-f]{5,40}", prefix):
            raise StoreError(400, f"invalid parent commit {prefix!r}")
        found = [p.stem for p in self._repo_file(key, "commits").glob(f"{prefix}*.json")]
        if len(found) != 1:
            raise StoreError(404, f"Invalid rev id: {prefix}", "RevisionNotFound")
        return found[0]

    def tree(self, key: RepoKey, revision: str) -> tuple[str, dict[str, Any]]:
        commit_id = self.resolve(key, revision)
        return commit_id, self.commit_data(key, commit_id)["tree"]

    def repos(self) -> Iterator[RepoKey]:
        """Every repo, sorted by type then id (``list_models``)."""
        for repo_type in REPO_TYPES:
            for refs in sorted((self.root / "repos" / f"{repo_type}s").glob("*/*/refs.json")):
                yield RepoKey(repo_type, f"{refs.parent.parent.name}/{refs.parent.name}")

    def delete_repo(self, key: RepoKey) -> None:
        """Remove the repo at once (one rename); its blobs stay, reachable through its holders only."""
        with self._locked():
            self.require(key)
            doomed = self.tmp_dir() / f"deleted-{uuid.uuid4().hex}"
            os.replace(self._repo_dir(key), doomed)
        shutil.rmtree(doomed, ignore_errors=True)

    def move_repo(self, source: RepoKey, target: RepoKey) -> None:
        """Rename a repo (same uid); its objects are indexed again under the new name, and the old
        name redirects to the new one (``moved_to``) until a repo takes that name again."""
        with self._locked():
            self.require(source)
            if self.exists(target):
                raise StoreError(409, f"You already created this repo: {target.repo_id}")
            destination = self._repo_dir(target)
            destination.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self._repo_dir(source), destination)
            tenant = self.tenant(target)
            for commit in self._repo_file(target, "commits").glob("*.json"):
                for entry in json.loads(commit.read_text())["tree"].values():
                    if entry["lfs"]:
                        self.tenancy.add("lfs", entry["lfs"], tenant)
            redirects = self._redirects()
            redirects = {
                old: target.holder if new == source.holder else new for old, new in redirects.items()
            }
            redirects[source.holder] = target.holder
            redirects.pop(target.holder, None)
            atomic_write_text(self.root / "redirects.json", json.dumps(redirects, indent=1, sort_keys=True))

    def _redirects(self) -> dict[str, str]:
        path = self.root / "redirects.json"
        data: dict[str, str] = json.loads(path.read_text()) if path.is_file() else {}
        return data

    def moved_to(self, key: RepoKey) -> RepoKey | None:
        """Where a moved repo lives now (None if ``key`` was not moved away or holds a repo again)."""
        if self.exists(key):  # first: a stat, where most requests stop
            return None
        target = self._redirects().get(key.holder)
        return None if target is None else RepoKey.from_holder(target)

    def duplicate(self, source: RepoKey, target: RepoKey, private: bool) -> list[str]:
        """A new repo holding ``source``'s ``main`` tree in one commit (``duplicate_repo``); its LFS
        objects (returned) become reachable through the copy. 409 if ``target`` exists."""
        _, tree = self.tree(source, "main")
        if not self.create_repo(target, private):
            raise StoreError(409, f"You already created this repo: {target.repo_id}")
        with self._locked():
            refs = self.refs(target)
            commit_id = self._new_commit_id()
            copied = {path: {**entry, "last": commit_id} for path, entry in tree.items()}
            head = refs["branches"]["main"]
            self._write_commit(target, commit_id, [head], f"Duplicate from {source.repo_id}", "", tree=copied)
            refs["branches"]["main"] = commit_id
            tenant = self.tenant(target)
            objects = sorted({entry["lfs"] for entry in copied.values() if entry["lfs"]})
            for sha256 in objects:
                self.tenancy.add("lfs", sha256, tenant)
            self._write_refs(target, refs)
            return objects

    def update_refs(self, key: RepoKey, change: Callable[[dict[str, Any]], None]) -> None:
        """Apply ``change`` to the refs under the lock and save them atomically."""
        with self._locked():
            refs = self.refs(key)
            change(refs)
            self._write_refs(key, refs)

    def commit(
        self,
        key: RepoKey,
        revision: str,
        ops: list[FileOp],
        header: dict[str, Any],
        create_pr: bool,
        *,
        covers: Callable[[RepoKey], bool] = lambda key: False,
    ) -> tuple[str, int | None]:
        """Land ``ops`` as one commit on ``revision`` (or on a new PR); returns (commit id, PR number).

        An ``lfsFile`` line may name only an object uploaded through this repo or held by one the
        committer's token ``covers`` (a copy); any other is answered as never uploaded (``tenancy.py``).
        """
        for op in ops:
            check_repo_path(op.path, folder=op.kind == "deletedFolder")
        sizes = {op.sha256: self._usable_size(key, op, covers) for op in ops if op.kind == "lfsFile"}
        with self._locked():
            refs = self.refs(key)
            head = self.resolve(key, revision)
            pr_key = revision[len("refs/pr/") :] if revision.startswith("refs/pr/") else None
            if pr_key is None and revision not in refs["branches"]:
                # create_pr from a tag or a commit id: the Hub answers RevisionNotFound (a PR's base
                # is a branch; huggingface_hub raises it as RevisionNotFoundError, utils/_http.py).
                if create_pr:
                    raise StoreError(404, f"Invalid rev id: {revision}", "RevisionNotFound")
                raise StoreError(400, f"cannot commit to {revision!r}: not a branch or a pull request")
            parent = str(header.get("parentCommit") or "").lower()
            if parent and create_pr:
                # The Hub opens the PR from parent_commit, whatever the branch did since: no 412
                # (huggingface_hub create_commit docstring, "parent_commit" argument).
                head = self._commit_by_prefix(key, parent)
            elif parent and not head.startswith(parent):
                raise StoreError(412, "A commit has happened since. Please refresh and try again.")
            tree = dict(self.commit_data(key, head)["tree"])
            commit_id = self._new_commit_id()
            for op in ops:
                self._apply(tree, op, commit_id, sizes)
            summary = str(header.get("summary") or "update")
            self._write_commit(
                key, commit_id, [head], summary, str(header.get("description") or ""), tree=tree
            )
            pr_num: int | None = None
            if create_pr:
                pr_num = len(refs["prs"]) + 1
                refs["prs"][str(pr_num)] = new_discussion(summary, str(header.get("description") or ""))
                refs["prs"][str(pr_num)].update(commit=commit_id, base=revision, start=head)
            elif pr_key is not None:
                refs["prs"][pr_key]["commit"] = commit_id
            else:
                refs["branches"][revision] = commit_id
            for sha256 in sizes:
                self.tenancy.add("lfs", str(sha256), self.tenant(key))
            self._write_refs(key, refs)
            return commit_id, pr_num

    def _usable_size(self, key: RepoKey, op: FileOp, covers: Callable[[RepoKey], bool]) -> int:
        """The size of the object an ``lfsFile`` line names, if this commit may use it, else 422.

        Reachability is asked first and alone: another tenant's object is refused after the same
        one lookup as an object nobody stored, before its size is read (no timing oracle).
        huggingface_hub sends no size for a copied LFS file (``_commit_api.py``
        ``_prepare_commit_payload``, case 2.d): the stored object's size is taken then.
        """
        sha256 = op.sha256 or ""
        self.lfs_path(sha256)  # 400 for an oid that is no sha256, before any lookup
        size = self.object_size(sha256) if self.reachable("lfs", sha256, self.tenant(key), covers) else None
        if size is not None and op.size in (None, size):
            return size
        raise StoreError(422, f"LFS object {op.sha256} for {op.path} was not uploaded")

    def merge(self, key: RepoKey, num: str) -> str:
        """Merge pull request ``num`` into its base branch; returns the merge commit (409 on a conflict).

        The PR's changes since it was opened (``start``) go onto the branch's head; a path the
        branch changed meanwhile too is a conflict, which the Hub also refuses to merge.
        """
        with self._locked():
            refs = self.refs(key)
            pr = refs["prs"].get(num)
            if pr is None or not pr.get("pr", True):
                raise StoreError(404, f"Pull request #{num} not found")
            if pr.get("status", "open") not in ("open", "draft"):
                raise StoreError(400, f"Pull request #{num} is {pr['status']}")
            base = pr["base"]
            base_head = refs["branches"][base]
            start = self.commit_data(key, pr.get("start") or base_head)["tree"]
            ours = dict(self.commit_data(key, base_head)["tree"])
            theirs = self.commit_data(key, pr["commit"])["tree"]
            for path in set(start) | set(theirs):
                if start.get(path) == theirs.get(path):
                    continue
                if ours.get(path) != start.get(path) and ours.get(path) != theirs.get(path):
                    raise StoreError(409, f"Pull request #{num} conflicts with {base} on {path}")
                if path in theirs:
                    ours[path] = theirs[path]
                else:
                    ours.pop(path, None)
            commit_id = self._new_commit_id()
            self._write_commit(
                key, commit_id, [base_head, pr["commit"]], pr["title"], pr["description"], tree=ours
            )
            refs["branches"][base] = commit_id
            pr.update(status="merged", merge_commit=commit_id)
            pr.setdefault("events", []).append(event("status-change", {"status": "merged"}))
            self._write_refs(key, refs)
            return commit_id

    def super_squash(self, key: RepoKey, branch: str, message: str) -> str:
        """Replace ``branch``'s history by one commit holding its current tree (``super_squash_history``)."""
        with self._locked():
            refs = self.refs(key)
            if branch not in refs["branches"]:
                raise StoreError(404, f"Invalid rev id: {branch}", "RevisionNotFound")
            commit_id = self._new_commit_id()
            tree = self.commit_data(key, refs["branches"][branch])["tree"]
            squashed = {path: {**entry, "last": commit_id} for path, entry in tree.items()}
            self._write_commit(key, commit_id, [], message, "", tree=squashed)
            refs["branches"][branch] = commit_id
            self._write_refs(key, refs)
            return commit_id

    def _apply(
        self,
        tree: dict[str, Any],
        op: FileOp,
        commit_id: str,
        sizes: dict[str | None, int],
    ) -> None:
        if op.kind == "file":
            assert op.blob is not None and op.size is not None
            tree[op.path] = {"size": op.size, "oid": op.blob, "lfs": None, "last": commit_id}
        elif op.kind == "lfsFile":
            assert op.sha256 is not None
            size = sizes[op.sha256]
            pointer = lfs_pointer(op.sha256, size)
            tree[op.path] = {"size": size, "oid": git_hash(pointer), "lfs": op.sha256, "last": commit_id}
        elif op.kind == "deletedFile":
            if tree.pop(op.path, None) is None:
                raise StoreError(404, f"A file with this name doesn't exist: {op.path}", "EntryNotFound")
        elif op.kind == "deletedFolder":
            prefix = op.path.rstrip("/") + "/"
            doomed = [path for path in tree if path.startswith(prefix)]
            if not doomed:
                raise StoreError(404, f"A folder with this name doesn't exist: {op.path}", "EntryNotFound")
            for path in doomed:
                del tree[path]
        else:
            raise StoreError(400, f"unknown commit operation {op.kind!r}")

    def text(self, tree: dict[str, Any], path: str, limit: int = 1 << 20) -> str:
        """A regular file of ``tree`` as text (its first ``limit`` bytes), "" if absent or in LFS."""
        entry = tree.get(path)
        if entry is None or entry["lfs"]:
            return ""
        with self.git_path(entry["oid"]).open("rb") as handle:
            return handle.read(limit).decode("utf-8", "replace")

    def history(self, key: RepoKey, revision: str, limit: int | None = None) -> list[dict[str, Any]]:
        """Commits reachable from ``revision`` by first parents, newest first (the first ``limit``)."""
        commit_id: str | None = self.resolve(key, revision)
        out: list[dict[str, Any]] = []
        while commit_id and (limit is None or len(out) < limit):
            data = self.commit_data(key, commit_id)
            out.append(data)
            commit_id = data["parents"][0] if data["parents"] else None
        return out

    def replace_file(self, key: RepoKey, revision: str, path: str, data: bytes) -> str:
        """Test helper for remote drift: commit new bytes at ``path`` as if someone else pushed them."""
        if wants_lfs(
            path,
            len(data),
            data[:512],
            GitAttributes(self.text(self.tree(key, revision)[1], ".gitattributes")),
        ):
            sha256 = hashlib.sha256(data).hexdigest()
            self.put_lfs(sha256, len(data), io.BytesIO(data))
            self.tenancy.add("lfs", sha256, self.tenant(key))
            op = FileOp("lfsFile", path, sha256=sha256, size=len(data))
        else:
            op = FileOp("file", path, blob=self.put_git_blob(data), size=len(data))
        commit_id, _ = self.commit(key, revision, [op], {"summary": f"replace {path}"}, create_pr=False)
        return commit_id


def _hash_part(assembled: Path, upload: MultipartUpload, number: int, digest: hashlib._Hash) -> None:
    """Part ``number`` of ``upload``, read back from the object being assembled, into ``digest``."""
    hash_span(assembled, *upload.span(number), digest)
