"""Files streamed against their pins: bytes the Hub serves that are not the listed ones are refused as they
arrive (the partial deleted), and a partial left by an interrupted pull is resumed with a Range request."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.faults import FILE_ROUTES
from tests.factories.cli import invoke
from tests.factories.published import PublishedExample, publish_example

WEIGHTS = "model.safetensors"


@pytest.fixture
def example(hub: LoopbackHub, tmp_path: Path, lfs_only: None) -> PublishedExample:
    published = publish_example(hub, tmp_path)
    hub.requests.clear()
    return published


def _pull_sglang(hub: LoopbackHub, repo: str, out: Path) -> tuple[int, str, str]:
    result = invoke(["pull", repo, "--engine", "sglang", "--dir", str(out), "--endpoint", hub.url, "--json"])
    return result.exit_code, result.stdout, result.stderr


def _sent_for(hub: LoopbackHub, name: str) -> int:
    return sum(r.bytes_out for r in hub.requests.on(FILE_ROUTES) if r.path.endswith(name))


def test_bytes_served_unlike_the_listing_are_refused_and_the_partial_deleted(
    hub: LoopbackHub, example: PublishedExample, tmp_path: Path
) -> None:
    pinned = (example.release / WEIGHTS).read_bytes()
    stored = hub.store.lfs_path(hashlib.sha256(pinned).hexdigest())
    stored.write_bytes(pinned[:-1] + bytes([pinned[-1] ^ 1]))  # the storage, not the listing, lies
    out = tmp_path / "pulled"
    code, _, err = _pull_sglang(hub, example.repo, out)
    assert code == 1
    assert err.startswith(
        f"error: {example.repo}@{example.commit[:12]}:{WEIGHTS}: the Hub sent bytes with sha256 "
    )
    assert "the partial file was deleted" in err
    assert list(out.iterdir()) == []  # nothing in place, no partial left


def test_an_interrupted_pull_resumes_from_its_partial_file(
    hub: LoopbackHub, example: PublishedExample, tmp_path: Path
) -> None:
    pinned = (example.release / WEIGHTS).read_bytes()
    out = tmp_path / "pulled"
    out.mkdir()
    kept = 150_000
    (out / f"{WEIGHTS}.incomplete").write_bytes(pinned[:kept])
    code, stdout, err = _pull_sglang(hub, example.repo, out)
    assert code == 0, err
    files = {f["path"]: f for f in json.loads(stdout)["files"]}
    assert files[WEIGHTS]["resumed_from"] == kept
    assert (out / WEIGHTS).read_bytes() == pinned
    assert not (out / f"{WEIGHTS}.incomplete").exists()
    assert _sent_for(hub, WEIGHTS) == len(pinned) - kept


def test_a_partial_of_other_bytes_is_deleted_and_the_next_pull_starts_over(
    hub: LoopbackHub, example: PublishedExample, tmp_path: Path
) -> None:
    pinned = (example.release / WEIGHTS).read_bytes()
    out = tmp_path / "pulled"
    out.mkdir()
    (out / f"{WEIGHTS}.incomplete").write_bytes(b"\xff" * 1000)
    code, _, err = _pull_sglang(hub, example.repo, out)
    assert code == 1 and "the partial file was deleted" in err
    assert not (out / f"{WEIGHTS}.incomplete").exists() and not (out / WEIGHTS).exists()
    code, _, err = _pull_sglang(hub, example.repo, out)
    assert code == 0, err
    assert (out / WEIGHTS).read_bytes() == pinned
