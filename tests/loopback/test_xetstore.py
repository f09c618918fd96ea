"""The Xet CAS against hand-built hostile bodies: the work a shard costs before its answer is bounded."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hubrelease_loopback import LoopbackHub, xetformat, xetstore
from tests.factories.hub import api_for, raw_request, unique_repo
from tests.factories.xet_hostile import Xorb, repeating_shard, tiny_chunk_xorb


def _cas(hub: LoopbackHub) -> dict[str, str]:
    api, repo = api_for(hub), unique_repo("xet-hostile")
    api.create_repo(repo)
    url = f"{hub.url}/api/models/{repo}/xet-write-token/main"
    _, _, text = raw_request(url, headers={"Authorization": f"Bearer {hub.owner_token}"})
    return {"Authorization": f"Bearer {json.loads(text)['accessToken']}"}


def _upload(hub: LoopbackHub, auth: dict[str, str], xorb: Xorb) -> None:
    url = f"{hub.url}/__xet/v1/xorbs/default/{xorb.name}"
    assert raw_request(url, "POST", xorb.body, auth)[0] == 200


def _counted(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    """Count calls of ``xetformat.<name>`` (how many chunks were decoded, tree nodes hashed)."""
    calls = [0]
    original: Callable[..., Any] = getattr(xetformat, name)

    def counting(*args: Any) -> Any:
        calls[0] += 1
        return original(*args)

    monkeypatch.setattr(xetformat, name, counting)
    return calls


def test_a_shard_naming_one_xorb_over_and_over_is_refused_before_any_chunk_is_hashed(
    hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    auth = _cas(hub)
    xorb = tiny_chunk_xorb(1_000)  # 9 KB
    _upload(hub, auth, xorb)
    shard = repeating_shard(xorb, 400)  # 19 KB: one file of 400 terms, 400,000 chunk references
    decoded, merged = _counted(monkeypatch, "decode_chunk"), _counted(monkeypatch, "_merge")
    status, _, text = raw_request(f"{hub.url}/__xet/v1/shards", "POST", shard, auth)
    assert status == 400 and b"more than 4 times the 1000 distinct ones" in text
    # On main: 400,000 chunks decoded and ~115,000 tree nodes hashed, then the made-up sha256 refused.
    assert decoded[0] == 0 and merged[0] == 0


def test_a_shard_naming_chunks_a_few_times_is_checked(hub: LoopbackHub) -> None:
    """Within the bound (a block held four times, as a file may): refused only for its made-up sha256."""
    auth = _cas(hub)
    xorb = tiny_chunk_xorb(100)
    _upload(hub, auth, xorb)
    status, _, text = raw_request(f"{hub.url}/__xet/v1/shards", "POST", repeating_shard(xorb, 4), auth)
    assert status == 400 and b"do not hash to sha256" in text


def test_a_xorb_of_more_chunks_than_hf_xet_makes_is_refused_unread(
    hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    auth = _cas(hub)
    xorb = tiny_chunk_xorb(xetformat.MAX_XORB_CHUNKS + 1)
    hashed = _counted(monkeypatch, "chunk_hash")
    status, _, text = raw_request(f"{hub.url}/__xet/v1/xorbs/default/{xorb.name}", "POST", xorb.body, auth)
    assert status == 400 and b"more than 8192 chunks" in text
    assert hashed[0] == 0  # main hashed all 8,193 and stored it


def test_a_xorb_over_the_cap_is_refused_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    xorb = tiny_chunk_xorb(100)
    with LoopbackHub(tmp_path / "root") as hub:
        auth = _cas(hub)
        monkeypatch.setattr(xetstore, "MAX_XORB_BYTES", len(xorb.body) - 1)
        url = f"{hub.url}/__xet/v1/xorbs/default/{xorb.name}"
        status, _, text = raw_request(url, "POST", xorb.body, auth)
        assert status == 413 and f"larger than {len(xorb.body) - 1} bytes".encode() in text
        assert not hub.xet.has_xorb(xorb.name)
        assert list((hub.store.root / "tmp").iterdir()) == []
        monkeypatch.setattr(xetstore, "MAX_XORB_BYTES", len(xorb.body))  # exactly the cap: stored
        _upload(hub, auth, xorb)
        assert hub.xet.has_xorb(xorb.name)
        assert hub.server_errors == []
