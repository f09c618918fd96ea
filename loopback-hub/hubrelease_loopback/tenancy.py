"""Which repos hold each stored object: the tenancy index of the loopback Hub's shared blob stores.

Blobs are stored once, by content (``lfs/``, ``xet/xorbs/``), for every repo. That must not make
one repo's private object reachable from another: an object is reachable through a repo only
once it was uploaded through that repo (the upload proved the uploader had the bytes, or a shard
proved its file from xorbs the uploader reaches), committed in it, or, for a commit, held by another
repo the committer's token scope names (a copy); a sha256 or Xet hash the client merely claims
reaches nothing. Everything that answers with an object or with whether it exists (the LFS batch
and verify, a commit's ``lfsFile`` line, Xet dedup probes, shards, reconstructions) asks this
index first, and answers an unreachable object exactly as a missing one, after the same lookup.

Layout under the Hub's root: ``reach/<kind>/<h[:2]>/<h>``, one line ``<repo uid> <type>s/<ns>/<name>``
per holder (``HubStore.tenant``), appended with ``O_APPEND`` (one short write: lines from several processes never mix).
A root written before this index existed is indexed once from its commits at start. (The folder keeps
the index's first name, ``reach/``: a root written since is read as it is, not indexed again.)
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Literal

Kind = Literal["lfs", "xorb", "chunk"]
"""An LFS oid (sha256), a Xet xorb, or a chunk a shard indexed for dedup probes (``xetstore.py``)."""
_DIGEST = re.compile(r"^[0-9a-f]{64}$")


class Tenancy:
    """The holders of each object; safe for many threads and processes (append-only files)."""

    def __init__(self, root: Path) -> None:
        self.root = root / "reach"
        if not self.root.is_dir():
            self._index_existing(root)

    def _path(self, kind: Kind, digest: str) -> Path:
        if not _DIGEST.match(digest):  # callers validate first; this keeps any path out of the name
            raise ValueError(f"invalid hash {digest!r}")
        return self.root / kind / digest[:2] / digest

    def holders(self, kind: Kind, digest: str) -> set[str]:
        """The repos (as ``HubStore.tenant`` lines) through which ``digest`` is reachable."""
        try:
            return set(self._path(kind, digest).read_text().splitlines())
        except FileNotFoundError:
            return set()

    def has(self, kind: Kind, digest: str, holder: str) -> bool:
        return holder in self.holders(kind, digest)

    def add(self, kind: Kind, digest: str, holder: str) -> None:
        if self.has(kind, digest, holder):
            return
        path = self._path(kind, digest)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, f"{holder}\n".encode())
        finally:
            os.close(fd)

    def _index_existing(self, root: Path) -> None:
        """Index the LFS objects committed in a root that predates this index (once, at start)."""
        staging = root / f"reach.partial-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)
        final, self.root = self.root, staging
        for commits in sorted((root / "repos").glob("*/*/*/commits")):
            holder = "legacy " + commits.parent.relative_to(root / "repos").as_posix()
            seen: set[str] = set()
            for commit in commits.glob("*.json"):
                for entry in json.loads(commit.read_text())["tree"].values():
                    if entry["lfs"] and entry["lfs"] not in seen:
                        seen.add(entry["lfs"])
                        self.add("lfs", entry["lfs"], holder)
        staging.mkdir(exist_ok=True)
        self.root = final
        try:
            os.replace(staging, final)
        except OSError:  # another process sharing the root indexed it first
            shutil.rmtree(staging, ignore_errors=True)
