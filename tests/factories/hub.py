"""Loopback-Hub helpers for tests: unique repo ids, raw HTTP, the env for `hf` and datasets subprocesses."""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import sys
import threading
import urllib.error
import urllib.request
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, EntryPoints, entry_points
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from huggingface_hub import CommitOperationAdd, HfApi

from hubrelease.local_hub import GROUP, LocalHub
from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.faults import RequestRecord
from tests.factories.waiting import CEILING_S, wait_until

VENV_BIN = Path(sys.executable).parent
HF_BACKOFF_SLEEP = "huggingface_hub.utils._http.time.sleep"
"""The sleep between huggingface_hub's retries (http_backoff: 1-8 s, 5 tries), patched out so a test
sees the retries without waiting for them. Private: huggingface_hub has no setting for its backoff;
the module path holds across the range pyproject.toml allows (scripts/deps_matrix.sh)."""


def unique_repo(prefix: str = "drafter") -> str:
    """A repo id no other test uses, so one session-wide server serves every test."""
    return f"acme/{prefix}-{uuid.uuid4().hex[:8]}"


def api_for(hub: LocalHub) -> HfApi:
    """A client with the server's own write token (any hub, the embedded one included)."""
    return HfApi(endpoint=hub.url, token=hub.owner_token)


def hide_local_hub(monkeypatch: pytest.MonkeyPatch, *registered: EntryPoint) -> None:
    """The client as installed without the loopback Hub: its entry-point group holds only ``registered``."""
    import hubrelease.local_hub

    def found(*, group: str) -> EntryPoints:
        return EntryPoints(registered) if group == GROUP else entry_points(group=group)

    monkeypatch.setattr(hubrelease.local_hub, "entry_points", found)


def raw_request(
    url: str, method: str = "GET", data: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP request without huggingface_hub in the way (status, lower-cased headers, body)."""
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=CEILING_S) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def head(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str]]:
    """A HEAD without following redirects (an LFS file's resolve answers 302, as on the Hub)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=CEILING_S)
    try:
        connection.request(
            "HEAD", parts.path + (f"?{parts.query}" if parts.query else ""), headers=headers or {}
        )
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}
    finally:
        connection.close()


def hf_env(hub: LoopbackHub, hf_home: Path) -> dict[str, str]:
    """Environment for a subprocess (`hf`, datasets) that must talk to the loopback Hub only."""
    env = dict(os.environ)
    env.update(
        HF_ENDPOINT=hub.url,
        HF_HOME=str(hf_home),
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_UPDATE_CHECK="1",
        HF_DATASETS_OFFLINE="0",
        PATH=f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}",
    )
    env.pop("HF_TOKEN", None)
    return env


def ndjson_commit(files: dict[str, bytes], summary: str = "files") -> bytes:
    """The body of a commit of regular ``files`` as huggingface_hub sends it (header, then one base64
    line per file): for tests that commit what the client would check or refuse first."""
    lines: list[dict[str, object]] = [{"key": "header", "value": {"summary": summary}}]
    for path, data in files.items():
        content = base64.b64encode(data).decode()
        lines.append({"key": "file", "value": {"path": path, "content": content, "encoding": "base64"}})
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def upload_files(api: HfApi, repo_id: str, files: dict[str, bytes], repo_type: str = "model") -> str:
    """Create ``repo_id`` if needed and commit ``files`` to main in one commit; returns the commit id."""
    api.create_repo(repo_id, repo_type=repo_type, exist_ok=True)
    ops = [CommitOperationAdd(path, data) for path, data in files.items()]
    return api.create_commit(repo_id, ops, commit_message="upload", repo_type=repo_type).oid


def upload_release(api: HfApi, repo_id: str, folder: Path, manifest: Path) -> str:
    """Publish a factory release folder as ``push`` would: every file below ``folder``, manifest included."""
    files = {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }
    files[manifest.name] = manifest.read_bytes()
    return upload_files(api, repo_id, files)


def logged(hub: LoopbackHub, route: str, count: int) -> list[RequestRecord]:
    """``route``'s records (a route name or a pattern such as ``FILE_ROUTES``) once ``count`` are in the
    log and the server is serving nothing: it logs a request after sending its answer, so a client can
    be done before its last request is logged; a request counts as served once a worker gave its
    connection back (``Admission.active``), so no later record of what the client sent can still arrive."""

    def settled() -> bool:
        idle = all(server.admission.active == 0 for server in (hub._httpd, hub._cdn))
        return idle and len(hub.requests.on(route)) >= count

    wait_until(settled)
    return hub.requests.on(route)


HOLD_S = 30.0
"""How long the first upload ``uploads_in_flight`` sees waits for a second one to arrive."""


@dataclass
class InFlight:
    """Distinct uploads the loopback Hub was receiving at once (``uploads_in_flight``)."""

    peak: int = 0
    calls: int = 0
    active: Counter[tuple[object, ...]] = field(default_factory=Counter)
    overlapped: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


@contextlib.contextmanager
def uploads_in_flight(targets: list[tuple[object, str]]) -> Iterator[InFlight]:
    """Count the store calls ``targets`` name (``(hub.store, "put_part")``, ``(hub.xet, "put_xorb")``)
    that run at once, each receiving one request body: distinct ones, named by their str and int
    arguments (an object, a xorb, a part number), so a client's retry of an upload is not a second.

    The first upload holds its body until a second one is being received (at most ``HOLD_S``;
    then no upload holds), so two uploads a client runs at once are seen at once however the
    threads are scheduled, and a client that sends one at a time is seen doing so.
    """
    gauge = InFlight()
    held_once = threading.Event()

    def wrap(original: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            key = tuple(a for a in args if isinstance(a, str | int))
            with gauge.lock:
                gauge.calls += 1
                gauge.active[key] += 1
                gauge.peak = max(gauge.peak, len(gauge.active))
                if len(gauge.active) > 1:
                    gauge.overlapped.set()
            try:
                if not held_once.is_set():
                    held_once.set()
                    gauge.overlapped.wait(HOLD_S)
                return original(*args, **kwargs)
            finally:
                with gauge.lock:
                    gauge.active[key] -= 1
                    if not gauge.active[key]:
                        del gauge.active[key]

        return counted

    saved = [(owner, name, getattr(owner, name)) for owner, name in targets]
    for owner, name, original in saved:
        setattr(owner, name, wrap(original))
    try:
        yield gauge
    finally:
        for owner, name, _ in saved:
            delattr(owner, name)  # the instance attribute goes; the class's method is back
