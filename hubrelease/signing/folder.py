"""The files ``model_signing verify key FOLDER --signature FOLDER/model.sig`` hashes, without hashing them.

``verify --signature`` must give model-signing's verdict, so it compares the signature with the same
file set: everything under the folder except what model-signing 1.1.1 ignores, by its own rules and
its own helpers (``check_file_or_directory``, ``should_ignore``). What model-signing lacks is a way
to list that set without reading every byte (``hashing.Config.hash`` hashes as it walks); the digests
come from verify's pass (its stat cache), so no weight is read twice. The steps, each from
model-signing 1.1.1:

- the ``--signature`` file is ignored when it lies in the folder (``verify key``: ``_cli.py:749-758``,
  ``_resolve_ignore_paths`` at ``_cli.py:160-172``);
- the statement's ``ignore_paths`` are added, each kept only if ``FOLDER / path`` is relative to
  the folder as a pure path (``verifying.py:102-106``, ``hashing.py:404-424``, again at ``hashing.py:155-164``):
  ``""`` is the folder itself (everything is ignored), ``"/"`` is dropped, ``".."`` ignores nothing;
- ``.git/``, ``.gitattributes``, ``.github/``, ``.gitignore`` are ignored (``hashing.py:166-177``,
  ``--ignore_git_paths`` defaults on);
- every path of ``FOLDER.glob("**/*")`` must be a file or folder and no symlink, ignored or not
  (``_serialization/file.py:109-119``, ``serialization.py:45-56``): one symlink refuses the folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
from pathlib import Path
from typing import NamedTuple

from hubrelease.fsutil import STATE_DIR, is_temp_name
from hubrelease.release_files import SIGNATURE_NAME
from hubrelease.signing.extra import required
from hubrelease.signing.statement import SignedFiles

_GIT_PATHS = (".git/", ".gitattributes", ".github/", ".gitignore")
# What `hubrelease verify` itself writes into the folder it checks (stat cache and its stamp, verify
# plans, the published copy of a manifest with ``root:``): absent from a download until hubrelease
# runs there, so never counted against a signature that does not ignore the state folder.
_OWN_STATE = ("statcache.sqlite3", "stamp", "verify-plans.json", "signatures.json", "published")


class FolderView(NamedTuple):
    """The files model-signing would hash (POSIX paths from the folder), or why it refuses the folder."""

    files: tuple[str, ...]
    refusal: tuple[str, str] | None = None
    """(path, problem) when model-signing raises before comparing anything (a symlink, a FIFO)."""


def _own_state(name: str) -> bool:
    parts = name.split("/")
    return (
        parts[0] == STATE_DIR
        and len(parts) > 1
        and (parts[1].startswith(_OWN_STATE) or is_temp_name(parts[-1]))
    )


def _ignored(folder: Path, signed: SignedFiles) -> list[Path]:
    """The paths ``model_signing verify`` ignores in ``folder`` under ``signed``'s statement."""
    ignored = [folder / SIGNATURE_NAME]
    for value in signed.ignore_paths:
        full = folder / value
        try:
            full.relative_to(folder)
        except ValueError:
            continue
        ignored.append(full)
    return ignored + [folder / p for p in _GIT_PATHS]


# Where a download of a Hub repo would be, relative as the README's `model_signing verify key NAME`
# names it (so an absolute ignore path hides nothing): a pure path, only compared, never touched.
_DOWNLOAD = Path("download")


def hidden(name: str, signed: SignedFiles) -> bool:
    """Whether ``model_signing verify`` of a download holding repo path ``name`` ignores it."""
    with required():
        from model_signing._serialization import serialization
    return serialization.should_ignore(_DOWNLOAD / name, _ignored(_DOWNLOAD, signed))


def model_signing_view(folder: Path, signed: SignedFiles) -> FolderView:
    """The files of ``folder`` that ``model_signing verify`` compares with ``signed``."""
    with required():
        from model_signing._serialization import serialization
    ignored = _ignored(folder, signed)
    files: list[str] = []
    for path in itertools.chain((folder,), folder.glob("**/*")):
        name = path.relative_to(folder).as_posix()
        if _own_state(name):
            continue
        try:
            serialization.check_file_or_directory(path, allow_symlinks=False)
        except ValueError:
            problem = "a symlink" if path.is_symlink() else "not a regular file or folder"
            return FolderView((), (name, f"{problem}: `model_signing verify` refuses the folder"))
        if path.is_file() and not serialization.should_ignore(path, ignored):
            files.append(name)
    return FolderView(tuple(sorted(files, key=os.fsencode)))


def _listing(folder: Path) -> list[tuple[str, str]]:
    """Every entry ``model_signing_view`` looks at (``glob("**/*")``: all, into folders but not
    through symlinks), with its type from the directory entry: link, folder, file or other."""
    found: list[tuple[str, str]] = []
    pending = [""]
    while pending:
        prefix = pending.pop()
        with contextlib.suppress(OSError), os.scandir(os.path.join(folder, prefix)) as entries:
            for entry in entries:
                name = prefix + entry.name
                if _own_state(name):
                    continue
                kind = (
                    "l" if entry.is_symlink() else "d" if entry.is_dir() else "f" if entry.is_file() else "o"
                )
                found.append((name, kind))
                if kind == "d":
                    pending.append(name + "/")
    return sorted(found)


def cached_view(folder: Path, signed: SignedFiles) -> FolderView:
    """``model_signing_view``, recalled while the folder's entries (names and file types) and the
    statement's ignore paths are what they were: an unchanged folder is listed without model-signing.

    The view is a function of those alone (model-signing's ``should_ignore`` compares paths,
    ``check_file_or_directory`` file types); the entry sits in ``signing.verified``'s cache, bound
    to ``model.sig``'s bytes and file, so one that came with the folder is never used.
    """
    from hubrelease.signing import verified

    signature = folder / SIGNATURE_NAME
    seen = verified.seen(signature)
    listing = _listing(folder)
    tag = (
        "view:" + hashlib.sha256(json.dumps([str(folder), signed.ignore_paths, listing]).encode()).hexdigest()
    )
    stored = verified.recall_value(signature, seen, tag)
    if isinstance(stored, list) and len(stored) == 2 and all(isinstance(f, str) for f in stored[0]):
        refusal = stored[1]
        if refusal is None or (isinstance(refusal, list) and len(refusal) == 2):
            return FolderView(
                tuple(stored[0]), None if refusal is None else (str(refusal[0]), str(refusal[1]))
            )
    view = model_signing_view(folder, signed)
    if seen is not None and _listing(folder) == listing:
        verified.store_value(signature, seen, tag, [list(view.files), view.refusal])
    return view
