"""Upload batches: a large file alone, small ones grouped, each registered on the Hub as it completes.

Data the Hub stores is reused by a later upload only once it is registered: an LFS object when its
upload (or its last multipart part) completes, Xet data when the shard that ends an hf_xet upload
session is accepted (xet-core ``file_upload_session.rs``: xorbs first, the shard at ``finalize``;
a probe for a chunk is answered from the shards, ``xetstore.py``). One ``preupload_lfs_files`` call
is one such session, so a push uploads in batches (a few at once, ``upload.py``): an interrupted
push re-run, with or without the previous ``HF_HOME``, sends again at most the batches that were in
flight (hf_xet finds the rest through the Hub's dedup answers and skips xorbs the Hub stored,
huggingface_hub skips LFS objects the batch API says are stored). A file larger than a batch is a
batch of its own: it is registered only when it is complete.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from hubrelease.errors import InputError
from hubrelease.hub.plan import REGULAR_FILE_MAX, PlannedFile

DEFAULT_BATCH_BYTES = 512 << 20
# huggingface_hub's own batch for Xet uploads of many files (_upload_large_folder's
# UPLOAD_BATCH_SIZE_XET, PR #3228) and the preupload endpoint's 256 files per request.
MAX_BATCH_FILES = 256
BATCH_ENV = "HUBRELEASE_PUSH_BATCH_SIZE"
_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1 << 10, "m": 1000**2, "mb": 1000**2, "mib": 1 << 20}
_UNITS.update({"g": 1000**3, "gb": 1000**3, "gib": 1 << 30})


@dataclass(frozen=True)
class Batch:
    """Files uploaded together, in one preupload call (one hf_xet upload session)."""

    files: tuple[PlannedFile, ...]

    @property
    def size(self) -> int:
        return sum(f.size for f in self.files)


def parse_size(text: str, field: str = "--batch-size") -> int:
    """``'64MiB'``, ``'1GB'``, ``'1000000'`` -> bytes (at least 1)."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    unit = _UNITS.get(found.group(2).lower()) if found else None
    if found is None or unit is None or float(found.group(1)) * unit < 1:
        raise InputError(f"{field}: {text!r} is not a size (e.g. 512MiB, 2GB, 1000000)", field=field)
    return int(float(found.group(1)) * unit)


def batch_size(option: str | None) -> int:
    """The batch size: ``--batch-size``, else ``$HUBRELEASE_PUSH_BATCH_SIZE``, else 512 MiB."""
    if option is not None:
        return parse_size(option)
    env = os.environ.get(BATCH_ENV)
    return parse_size(env, BATCH_ENV) if env else DEFAULT_BATCH_BYTES


def batches(
    files: Sequence[PlannedFile],
    limit: int,
    max_files: int = MAX_BATCH_FILES,
    small_limit: int | None = None,
) -> list[Batch]:
    """``files`` in order, cut into batches of at most ``limit`` bytes and ``max_files`` files (and
    ``small_limit`` bytes of files small enough to be regular files on the Hub, when given).

    A file of ``limit`` bytes or more is a batch alone; the order of the plan is kept, so the same
    release always gives the same batches (a re-run's batches are the killed run's).
    """
    out: list[Batch] = []
    current: list[PlannedFile] = []
    size = small = 0
    for f in files:
        regular = f.size if f.size <= REGULAR_FILE_MAX else 0
        over_small = small_limit is not None and small + regular > small_limit
        if current and (size + f.size > limit or len(current) >= max_files or f.size >= limit or over_small):
            out.append(Batch(tuple(current)))
            current, size, small = [], 0, 0
        current.append(f)
        size += f.size
        small += regular
    if current:
        out.append(Batch(tuple(current)))
    return out
