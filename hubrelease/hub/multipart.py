"""LFS multipart uploads with their parts spread over the upload workers, so one large file goes up
at the speed of many.

Why our own: huggingface_hub sends the parts of one object one after another
(``lfs.py`` ``_upload_parts_iteratively``, line 427, in 2.4.0), so a push of one large file used one
connection however many the Hub offers. The protocol is the one huggingface_hub speaks (``lfs.py``
``lfs_upload``, lines 236-311): the batch answer's ``header`` holds ``chunk_size`` and one URL per
part number; each part is PUT, then the ETags are POSTed to the upload ``href`` (the completion),
then the ``verify`` action is called. An object is registered (a re-run's batch answer says it is
stored) only once its completion is accepted, as with the Hub's storage: a part sent before a kill
is sent again. Objects the batch answer gives a single-part upload go up on the same workers,
each one PUT then its ``verify`` (huggingface_hub's ``_upload_single_part``, ``lfs.py`` line 351):
with the batches overlapping, huggingface_hub's own uploads would run one pool per batch, so up to
five batches times five objects would be half sent when a push is killed. ``preupload_lfs_files``
then finds every object stored and sends nothing for them.
"""

from __future__ import annotations

import io
import os
import threading
from concurrent.futures import Executor
from dataclasses import dataclass
from math import ceil
from typing import Any

from huggingface_hub import CommitOperationAdd, hf_raise_for_status
from huggingface_hub.lfs import LFS_HEADERS, post_lfs_batch_info
from huggingface_hub.utils import build_hf_headers, fix_hf_endpoint_in_url, http_backoff

from hubrelease.hub.plan import REGULAR_FILE_MAX
from hubrelease.hub.push_state import PushState


class PartReader(io.RawIOBase):
    """Bytes ``[start, start + length)`` of an open descriptor, read with ``os.pread``.

    Not huggingface_hub's ``SliceFileObj``: that one moves the shared file offset (not thread
    safe, its docstring says), while the parts of one file are read by several workers at once.
    Seekable, so ``http_backoff`` can rewind it for a retry; no ``fileno``, so the HTTP client
    takes the length from ``seek`` (the part's, not the file's).
    """

    def __init__(self, fd: int, start: int, length: int) -> None:
        super().__init__()
        self._fd, self._start, self._length, self._pos = fd, start, length, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._length}[whence]
        self._pos = min(max(base + offset, 0), self._length)
        return self._pos

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), self._length - self._pos)
        if want <= 0:
            return 0
        data = os.pread(self._fd, want, self._start + self._pos)
        view[: len(data)] = data
        self._pos += len(data)
        return len(data)


@dataclass(frozen=True)
class Multipart:
    """One object the batch answer wants uploaded: the part URLs in order, their size, the hrefs.
    A single-part upload is one part of the object's size and no completion."""

    op: CommitOperationAdd
    chunk_size: int
    part_urls: list[str]
    complete_url: str | None
    verify_url: str | None


def multipart_actions(state: PushState, ops: list[CommitOperationAdd]) -> list[Multipart]:
    """The LFS batch answer for ``ops`` larger than a regular file: the objects it wants uploaded,
    in parts or in one (stored ones are left out)."""
    big = [op for op in ops if op.upload_info.size > REGULAR_FILE_MAX]
    by_oid = {op.upload_info.sha256.hex(): op for op in big}
    found: list[Multipart] = []
    for first in range(0, len(big), 256):  # huggingface_hub's UPLOAD_BATCH_MAX_NUM_FILES
        actions, errors, _ = post_lfs_batch_info(
            upload_infos=[op.upload_info for op in big[first : first + 256]],
            token=None,
            repo_type=state.plan.repo_type,
            repo_id=state.plan.repo_id,
            revision=None if state.create_pr else state.plan.revision,
            endpoint=state.api.endpoint,
            headers=build_hf_headers(token=state.api.token),
            transfers=["basic", "multipart"],
        )
        if errors:
            # preupload_lfs_files asks again and raises its own error for these
            continue
        for action in actions:
            upload = (action.get("actions") or {}).get("upload") or {}
            if "href" not in upload or action["oid"] not in by_oid:
                continue
            op, header, endpoint = by_oid[action["oid"]], upload.get("header") or {}, state.api.endpoint
            href = fix_hf_endpoint_in_url(upload["href"], endpoint)
            verify = (action["actions"].get("verify") or {}).get("href")
            verify = None if verify is None else fix_hf_endpoint_in_url(verify, endpoint)
            if "chunk_size" not in header:
                found.append(Multipart(op, op.upload_info.size, [href], None, verify))
                continue
            chunk = int(header["chunk_size"])
            urls = [url for number, url in sorted((int(k), v) for k, v in header.items() if k.isdigit())]
            if len(urls) != ceil(op.upload_info.size / chunk):
                raise ValueError(
                    "Invalid server response to upload large LFS file"
                )  # as huggingface_hub says
            found.append(Multipart(op, chunk, urls, href, verify))
    return found


OBJECTS_IN_FLIGHT = 2
"""Objects in parts that may be on the wire before the first of them is registered: the one
finishing (its last parts, then its completion, which the Hub answers only once it has joined and
checked the parts) and the next. So a push killed midway has at most two objects to send again.
Single-part objects count too; one is let in while fewer than ``SINGLE_IN_FLIGHT`` are open, as
``hf upload`` keeps that many files going (one connection each, their bytes not shared out)."""
SINGLE_IN_FLIGHT = 5


class PartQueue:
    """The part workers every batch shares, fed in plan order: the batch numbered ``order`` queues
    its objects once every batch before it has queued its own (or ended), each object once fewer
    than ``OBJECTS_IN_FLIGHT`` are unregistered, so objects are registered one after another."""

    def __init__(self, pool: Executor) -> None:
        self.pool = pool
        self._next = 1
        self._open = 0
        self._changed = threading.Condition()

    def wait_turn(self, order: int) -> None:
        with self._changed:
            self._changed.wait_for(lambda: self._next >= order)

    def release(self, order: int) -> None:
        """The batch ``order`` queued its objects or ended: the next one may queue (idempotent)."""
        with self._changed:
            self._next = max(self._next, order + 1)
            self._changed.notify_all()

    def admit(self, parts: int) -> None:
        """Wait until an object of ``parts`` parts may be queued, and count it as in flight."""
        most = SINGLE_IN_FLIGHT if parts == 1 else OBJECTS_IN_FLIGHT
        with self._changed:
            self._changed.wait_for(lambda: self._open < most)
            self._open += 1

    def finished(self) -> None:
        with self._changed:
            self._open -= 1
            self._changed.notify_all()


class _InFlight:
    """One object's parts on the workers; the worker that ends the last part completes the object
    (or records why not) and lets the next object in. Every part task runs, so this always ends."""

    def __init__(self, state: PushState, item: Multipart, queue: PartQueue) -> None:
        self.state, self.item, self.queue = state, item, queue
        self.etags: list[str] = [""] * len(item.part_urls)
        self.error: BaseException | None = None
        self.done = threading.Event()
        self._left = len(item.part_urls)
        self._lock = threading.Lock()
        fd, size, chunk = state.opened[item.op.path_in_repo], item.op.upload_info.size, item.chunk_size
        for number, url in enumerate(item.part_urls):
            reader = PartReader(fd, number * chunk, min(chunk, size - number * chunk))
            queue.pool.submit(self._part, number, url, reader)

    def _part(self, number: int, url: str, reader: PartReader) -> None:
        try:
            if self.error is None:  # after a failed part, the others are not sent
                self.etags[number] = _put_part(url, reader, etag=self.item.complete_url is not None)
        except BaseException as exc:
            self.error = self.error or exc
        with self._lock:
            self._left -= 1
            last = self._left == 0
        if last:
            try:
                if self.error is None:
                    _complete(self.state, self.item, self.etags)
            except BaseException as exc:
                self.error = exc
            finally:
                self.queue.finished()
                self.done.set()


def upload_parts(state: PushState, objects: list[Multipart], queue: PartQueue, order: int) -> None:
    """Every object's parts on the shared workers, in plan order (``PartQueue``), each object
    completed and verified as its last part ends; the first failure is raised once all ended."""
    sent: list[_InFlight] = []
    queue.wait_turn(order)
    try:
        for item in objects:
            queue.admit(len(item.part_urls))
            sent.append(_InFlight(state, item, queue))
    finally:
        queue.release(order)
    for one in sent:
        one.done.wait()
    errors = [one.error for one in sent if one.error is not None]
    if errors:
        raise errors[0]


def _put_part(url: str, reader: PartReader, *, etag: bool) -> str:
    """One part PUT (retried as huggingface_hub retries its own), its ETag (``etag``: one is required,
    as for a part of a multipart upload)."""
    with reader:
        response = http_backoff("PUT", url, data=reader)
    hf_raise_for_status(response)
    found = response.headers.get("etag")
    if etag and not found:
        raise ValueError(f"Invalid etag (`{found}`) returned for a part")
    return str(found or "")


def _complete(state: PushState, item: Multipart, etags: list[str]) -> None:
    oid = item.op.upload_info.sha256.hex()
    if item.complete_url is not None:
        parts = [{"partNumber": n, "etag": etag} for n, etag in enumerate(etags, 1)]
        done = http_backoff("POST", item.complete_url, json={"oid": oid, "parts": parts}, headers=LFS_HEADERS)
        hf_raise_for_status(done)
    if item.verify_url is not None:
        checked = http_backoff(
            "POST",
            item.verify_url,
            headers=build_hf_headers(token=state.api.token),
            json={"oid": oid, "size": item.op.upload_info.size},
        )
        hf_raise_for_status(checked)
