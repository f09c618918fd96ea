"""GGUF and safetensors headers of files on the Hub, read with growing range requests (``hub.ranged``).

A file's first read is ``INITIAL_READ`` bytes. A GGUF header that does not fit makes the parser stop
with a guess of where the header ends (``formats.gguf_header.NeedMore``), and the next read goes
there (at least twice what is held), so a 250k-token vocabulary costs two requests; a safetensors
file costs at most two, its first 8 bytes giving the header length. No header read goes past
``MAX_HEADER_READ`` bytes. Every file of a model is read at the commit the first answer came from.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from huggingface_hub import HfApi, parse_hf_uri
from huggingface_hub.errors import HfUriError

from hubrelease.errors import FormatError, InputError, NotFoundError
from hubrelease.findings import Finding
from hubrelease.formats.architecture import (
    Architecture,
    config_architecture,
    gguf_architecture,
    safetensors_architecture,
)
from hubrelease.formats.gguf_header import (
    GGUFHeader,
    GGUFSet,
    NeedMore,
    gguf_set,
    parse_gguf_header,
    split_names,
)
from hubrelease.formats.safetensors_header import (
    INDEX_NAME,
    SafetensorsHeader,
    SafetensorsSet,
    checked_index,
    header_span,
    index_shards,
    merge_headers,
    parse_json_object,
    parse_safetensors_header,
)
from hubrelease.formats.summary import gguf_summary, safetensors_summary
from hubrelease.hub.metadata import list_files, resolve_commit
from hubrelease.hub.ranged import RangedFile, Traffic
from hubrelease.manifest.models import PinnedFile

INITIAL_READ = 64 << 10
"""Bytes asked for first: the whole header of most shards and drafters."""
MAX_HEADER_READ = 256 << 20
"""The cap: a header (or config / index JSON) needing more bytes than this is refused."""
HF_PREFIX = "hf://"


@dataclass(frozen=True)
class HubLocation:
    """``hf://[datasets/]REPO[@REV][/PATH]`` parsed by huggingface_hub's own URI parser."""

    repo_id: str
    repo_type: str
    revision: str | None
    path: str


def parse_location(uri: str) -> HubLocation:
    try:
        parsed = parse_hf_uri(uri)
    except HfUriError as exc:
        detail = str(exc).strip().splitlines()
        raise InputError(f"{uri!r} is not a Hub location: {detail[-1] if detail else exc}") from None
    if parsed.type not in ("model", "dataset", "space"):
        raise InputError(f"{uri!r}: only model, dataset and space repos hold model files")
    return HubLocation(parsed.id, parsed.type, parsed.revision, parsed.path_in_repo)


class RemoteRepo:
    """One repo read at one commit: the first answer's ``X-Repo-Commit`` pins every later read."""

    def __init__(self, api: HfApi, repo_id: str, revision: str | None, repo_type: str = "model") -> None:
        self.api = api
        self.repo_id = repo_id
        self.repo_type = repo_type
        self.revision = revision or "main"
        self.traffic = Traffic()

    def open(self, path: str) -> RangedFile:
        return RangedFile(self.api, self.repo_id, path, self.revision, self.repo_type, self.traffic)

    def names(self) -> list[str]:
        """Every file at the revision, which is then pinned to its commit.

        repo_info for the commit, then the recursive tree (never the truncatable siblings): two
        requests in ``traffic`` (a tree of more than one page costs one more per page, uncounted).
        """

        self.traffic.requests += 2
        commit = resolve_commit(self.api, self.repo_id, self.revision, self.repo_type)
        self.revision = commit
        return list(list_files(self.api, self.repo_id, commit, self.repo_type))

    def pin(self, file: RangedFile) -> None:
        if file.commit:
            self.revision = file.commit

    def uri(self, path: str) -> str:
        kind = "" if self.repo_type == "model" else f"{self.repo_type}s/"
        return f"{HF_PREFIX}{kind}{self.repo_id}@{self.revision}/{path}"

    @contextlib.contextmanager
    def named(self, path: str) -> Iterator[None]:
        """Format errors name the file by its ``hf://`` location, not its bare repo path."""
        try:
            yield
        except FormatError as exc:
            raise FormatError(exc.message, path=self.uri(path), field=exc.field) from None

    def read_json(self, path: str) -> dict[str, Any]:
        file = self.open(path)
        raw = file.read_to(MAX_HEADER_READ)
        self.pin(file)
        if file.size is not None and file.size > len(raw):
            raise FormatError(
                f"{file.size} bytes is over the {MAX_HEADER_READ}-byte cap", path=self.uri(path)
            )
        return parse_json_object(raw, self.uri(path))


def gguf_header(repo: RemoteRepo, path: str, keep_key: Callable[[str], bool] | None = None) -> GGUFHeader:
    """One GGUF file's header; a read that stops inside it is extended to the parser's guess."""
    file = repo.open(path)
    end = INITIAL_READ
    with repo.named(path):
        while True:
            buf = file.read_to(end)
            repo.pin(file)
            try:
                return parse_gguf_header(buf, file.size or len(buf), Path(path), keep_key=keep_key)
            except NeedMore as more:
                if more.least > MAX_HEADER_READ:  # declared before fetched: nothing more is read
                    raise FormatError(
                        f"header declares at least {more.least:,} bytes, over the {MAX_HEADER_READ:,}-byte "
                        "cap of a remote read"
                    ) from None
                end = min(max(more.guess, 2 * len(buf)), MAX_HEADER_READ)


def _prefix(folder: str) -> str:
    """What repo paths of files in ``folder`` start with (``"."`` is the repo root)."""
    return "" if folder == "." else f"{folder}/"


def read_gguf(repo: RemoteRepo, path: str, keep_key: Callable[[str], bool] | None = None) -> GGUFSet:
    """A GGUF file or the whole ``-0000N-of-0000M`` set it belongs to (names follow from its own)."""
    folder = str(PurePosixPath(path).parent)
    prefix = _prefix(folder)
    names = [prefix + name for name in split_names(PurePosixPath(path).name, repo.uri(path))]
    shards = [gguf_header(repo, name, keep_key) for name in names]
    with repo.named(names[0]):
        return gguf_set(shards)


def read_hub_gguf(api: HfApi, uri: str, keep_key: Callable[[str], bool] | None = None) -> tuple[GGUFSet, str]:
    """The GGUF (or split set) at an ``hf://`` location, and that location at the commit read."""
    location = parse_location(uri)
    if not location.path.endswith(".gguf"):
        raise InputError("expected a .gguf file on the Hub", path=uri)
    repo = RemoteRepo(api, location.repo_id, location.revision, location.repo_type)
    model = read_gguf(repo, location.path, keep_key)
    return model, repo.uri(location.path)


def safetensors_header(repo: RemoteRepo, path: str) -> SafetensorsHeader:
    """One safetensors file's header: the first read, plus one for the rest when the JSON is longer."""
    file = repo.open(path)
    with repo.named(path):
        buf = file.read_to(INITIAL_READ)
        repo.pin(file)
        size = file.size or len(buf)
        span = header_span(buf, size, Path(path))
        if span > len(buf):
            buf = file.read_to(span)
        return parse_safetensors_header(buf, size, Path(path))


def read_safetensors(repo: RemoteRepo, path: str) -> tuple[SafetensorsSet, dict[str, Any] | None]:
    """A safetensors file, index json or folder, plus the folder's config.json (None when there is none).

    One listing says what the folder holds, as ``formats.safetensors_header.read_safetensors`` does locally.
    """
    names = set(repo.names())
    target: str | list[str] = path
    if path in names:
        if not path.endswith((".safetensors", ".index.json")):
            raise InputError("expected a .gguf, .safetensors, index json or folder", path=repo.uri(path))
        folder = str(PurePosixPath(path).parent)
    else:
        folder = path.strip("/") or "."
        target = _folder_target(repo, names, folder)
    prefix = _prefix(folder)
    config = repo.read_json(prefix + "config.json") if prefix + "config.json" in names else None
    if isinstance(target, list):
        return merge_headers([safetensors_header(repo, name) for name in target]), config
    if target.endswith(".index.json"):
        data = repo.read_json(target)
        with repo.named(target):
            shards = index_shards(data, Path(target))
            merged = merge_headers([safetensors_header(repo, prefix + shard) for shard in shards])
            return checked_index(data, merged, Path(target)), config
    return merge_headers([safetensors_header(repo, target)]), config


def _folder_target(repo: RemoteRepo, names: set[str], folder: str) -> str | list[str]:
    prefix = _prefix(folder)
    for candidate in (INDEX_NAME, "model.safetensors"):
        if prefix + candidate in names:
            return prefix + candidate
    files = sorted(
        n
        for n in names
        if n.startswith(prefix) and "/" not in n[len(prefix) :] and n.endswith(".safetensors")
    )
    if not files:
        what = (
            "folder holds no .safetensors files" if any(n.startswith(prefix) for n in names) else "not found"
        )
        raise InputError(what, path=repo.uri(folder if prefix else ""))
    return files


def summarize(api: HfApi, uri: str) -> dict[str, Any]:
    """``formats.summary.summarize`` for an ``hf://`` location, plus ``requests`` and ``fetched_bytes``."""
    location = parse_location(uri)
    repo = RemoteRepo(api, location.repo_id, location.revision, location.repo_type)
    if location.path.endswith(".gguf"):
        summary = gguf_summary(read_gguf(repo, location.path))
    else:  # a safetensors file, index json or folder; the listing tells which
        summary = safetensors_summary(*read_safetensors(repo, location.path))
    for item in summary["files"]:
        item["path"] = repo.uri(item["path"])
    return {**summary, "requests": repo.traffic.requests, "fetched_bytes": repo.traffic.fetched_bytes}


def header_pin(repo: RemoteRepo, path: str) -> tuple[str, dict[str, int]] | None:
    """(header sha256, tensor composition) of one GGUF or safetensors file; None for other files.

    A split GGUF shard is read on its own, as a manifest entry is that one file.
    """
    if path.endswith(".gguf"):
        header = gguf_header(repo, path)
        return header.header_sha256, GGUFSet((header,)).composition()
    if path.endswith(".safetensors"):
        st_header = safetensors_header(repo, path)
        return st_header.header_sha256, merge_headers([st_header]).composition()
    return None


def remote_architecture(repo: RemoteRepo, path: str) -> Architecture:
    """``formats.architecture`` of a GGUF, safetensors file or config.json on the Hub, headers only."""
    if path.endswith(".gguf"):
        return gguf_architecture(read_gguf(repo, path))
    if path.endswith(".safetensors"):
        return safetensors_architecture(merge_headers([safetensors_header(repo, path)]))
    return config_architecture(repo.read_json(path))


def header_findings(repo: RemoteRepo, item: PinnedFile, label: str) -> list[Finding]:
    """A pinned file's header pin against its header on the Hub (verify --remote)."""
    if item.header_sha256 is None and item.composition is None:
        return []
    try:
        pinned = header_pin(repo, item.path)
    except (FormatError, NotFoundError) as exc:
        return [Finding.make("header_mismatch", label, f"header not readable on the Hub: {exc.message}")]
    if pinned is None:
        return []
    digest, composition = pinned
    findings = []
    if item.header_sha256 is not None and digest != item.header_sha256:
        message = f"header sha256 mismatch on the Hub: expected {item.header_sha256}, got {digest}"
        findings.append(Finding.make("header_mismatch", label, message, item.header_sha256, digest))
    if item.composition is not None and composition != item.composition:
        expected, actual = _counts(item.composition), _counts(composition)
        message = f"tensor composition on the Hub is {actual}, the manifest pins {expected}"
        findings.append(Finding.make("header_mismatch", label, message, expected, actual))
    return findings


def _counts(composition: dict[str, int]) -> str:
    return ", ".join(f"{n} {t}" for t, n in sorted(composition.items(), key=lambda i: (-i[1], i[0])))


def summarize_location(location: str, hub: Callable[[], HfApi]) -> dict[str, Any]:
    """What ``inspect`` shows: a local file's header summary, or an ``hf://`` one's from header
    bytes only (``hub`` makes the client, called only then)."""
    if location.startswith("hf://"):
        return summarize(hub(), location)
    from hubrelease.formats.summary import summarize as summarize_file

    return summarize_file(Path(location))
