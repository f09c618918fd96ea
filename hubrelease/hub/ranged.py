"""The first bytes of a Hub file, fetched with HTTP ``Range`` requests that grow only as far as asked.

Why not ``HfFileSystem``: its ``open()`` first asks the Hub for the file's metadata (one more request
per file) and then reads in fixed blocks; a header reader wants one request for the first bytes and
one more sized from where its parser stopped. The HTTP itself is huggingface_hub's: ``hf_hub_url``
for the resolve URL, ``build_hf_headers`` for token and user agent, ``http_stream_backoff`` on its
shared session for retries (429, 5xx) and redirects. An LFS- or Xet-backed file on the Hub answers
the resolve URL with a redirect to a signed storage URL that honours ``Range`` too; httpx keeps the
``Range`` header across it and drops ``Authorization`` when the redirect leaves the Hub's origin.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

import httpx2
from huggingface_hub import HfApi, hf_hub_url
from huggingface_hub.errors import EntryNotFoundError
from huggingface_hub.utils import build_hf_headers, hf_raise_for_status, http_stream_backoff

from hubrelease.errors import HubUnavailable, NotFoundError
from hubrelease.hub.client import answer_fault, describe, read_errors
from hubrelease.printable import shown

_CONTENT_RANGE = re.compile(r"^bytes (?:\d{1,15}-\d{1,15}|\*)/(\d{1,15})$")  # 15 digits: 1 PB
_CHUNK = 1 << 20


@dataclass
class Traffic:
    """What the reads of one command cost: HTTP requests sent and body bytes received."""

    requests: int = 0
    fetched_bytes: int = 0


@dataclass
class RangedFile:
    """One file of a repo at one revision; ``data`` holds its first bytes, ``size`` is known after one read."""

    api: HfApi
    repo_id: str
    path: str
    revision: str
    repo_type: str = "model"
    traffic: Traffic = field(default_factory=Traffic)
    data: bytearray = field(default_factory=bytearray)
    size: int | None = None
    commit: str | None = None
    """The commit the Hub served (its ``X-Repo-Commit`` header), once a read went through."""

    def read_to(self, end: int) -> bytes:
        """The file's first ``end`` bytes (fewer if the file is shorter), fetching only what is missing."""
        if self.size is not None:
            end = min(end, self.size)
        if end > len(self.data):
            self._fetch(len(self.data), end)
        return bytes(self.data[:end])

    def _fetch(self, start: int, end: int) -> None:
        url = hf_hub_url(
            self.repo_id,
            self.path,
            repo_type=self.repo_type,
            revision=self.revision,
            endpoint=self.api.endpoint,
        )
        headers = build_hf_headers(token=self.api.token, library_name="hubrelease")
        headers["Range"] = f"bytes={start}-{end - 1}"
        self.traffic.requests += 1
        with read_errors(self.repo_id, self.revision):
            try:
                self._get(url, headers, start, end)
            except EntryNotFoundError:
                raise NotFoundError(
                    f"{self.repo_id}@{self.revision}: {self.path}: file not found",
                    repo_id=self.repo_id,
                    status=404,
                ) from None

    def _get(self, url: str, headers: dict[str, str], start: int, end: int) -> None:
        with http_stream_backoff("GET", url, headers=headers) as response:
            if response.status_code == 416:  # asked past the end: the file is shorter than `start`
                self.size = _total(response.headers.get("Content-Range"), start)
                return
            hf_raise_for_status(response)
            self._commit(response)
            if response.status_code == 206:
                self.size = _total(response.headers.get("Content-Range"), None)
                skip = 0
            else:  # a server that ignores Range sends the whole file from byte 0
                length = response.headers.get("X-Linked-Size") or response.headers.get("Content-Length")
                self.size = int(length) if length and length.isdigit() and len(length) <= 15 else None
                skip = start
            try:  # raised here, not out of the `with`: http_stream_backoff would retry inside its generator
                self._receive(response.iter_bytes(_CHUNK), skip, end - start)
            except httpx2.RequestError as exc:
                raise HubUnavailable(
                    f"{self.repo_id}: {self.path}: the Hub's answer {answer_fault(exc) or 'broke off'} "
                    f"({describe(exc)})",
                    repo_id=self.repo_id,
                ) from None

    def _commit(self, response: httpx2.Response) -> None:
        """``X-Repo-Commit`` from the Hub's answer, or from the redirect that led to the storage URL."""
        for answer in (response, *response.history):
            commit = answer.headers.get("X-Repo-Commit")
            if commit:
                self.commit = str(commit)
                return

    def _receive(self, chunks: Iterator[bytes], skip: int, want: int) -> None:
        got = 0
        for chunk in chunks:
            self.traffic.fetched_bytes += len(chunk)
            piece = bytes(chunk)[skip:] if skip else bytes(chunk)
            skip = max(0, skip - len(chunk))
            self.data += piece[: want - got]
            got += min(len(piece), want - got)
            if got >= want:
                break
        if got < want and (self.size is None or len(self.data) < self.size):
            raise HubUnavailable(
                f"{self.repo_id}: {self.path}: the Hub sent {got} of {want} bytes asked for",
                repo_id=self.repo_id,
            )


def _total(content_range: str | None, fallback: int | None) -> int:
    """The file size in a ``Content-Range`` header (``bytes 0-99/1234`` or ``bytes */1234``)."""
    match = _CONTENT_RANGE.match((content_range or "").strip())
    if match:
        return int(match[1])
    if fallback is not None:
        return fallback
    raise HubUnavailable(
        f"the Hub answered a range request without a usable Content-Range ({shown(content_range, 60)})"
    )
