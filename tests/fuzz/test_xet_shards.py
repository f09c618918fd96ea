"""Shards that name known Xet hashes with other sha256s and sizes: none may reach another tenant's file.

A module-wide loopback Hub holds a victim's private file that arrived through hf_xet and one that
arrived through plain LFS, and an attacker's repo (write access to its own namespace only) with a file
of its own registered through hf_xet, whose shard is recorded. Each case rewrites that shard: its
sha256 claim (a victim's, its own, any), its Xet hash (the victim's), a term's size, the metadata
flag, a few raw bytes; and sends it with the attacker's CAS write token. The contract: a 200, 400 or
413, never a 500; afterwards the victim's objects are not reachable through the attacker's repo (a
commit line naming them is 422, a reconstruction of the victim's Xet file is 404). Cases are bounded
by count (``fuzz``), nothing is timed.
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from huggingface_hub import CommitOperationAdd, HfApi, constants
from hypothesis import given
from hypothesis import strategies as st

from hubrelease_loopback import LoopbackHub, RepoKey
from hubrelease_loopback.auth import Grant
from hubrelease_loopback.xetformat import FLAG_METADATA_EXT, SHARD_HEADER_SIZE
from tests.factories.hub import raw_request
from tests.factories.xet_shards import ShardRecorder, cas_auth, claim, commit_line, merkle_bytes
from tests.fuzz.harness import fuzz

OWNER, ATTACKER = "hf_fuzz_owner", "hf_fuzz_attacker"
FILE = SHARD_HEADER_SIZE  # the shard's first file record: Xet hash, flags, term count
TERM = FILE + 48  # its first term: xorb hash, then (u32) unused, unpacked size, first chunk, end chunk


@dataclass
class Scene:
    hub: LoopbackHub
    shard: bytes
    own_sha: str
    victim_shas: tuple[str, str]  # through hf_xet, through plain LFS
    victim_xet_hash: str
    write: dict[str, str]
    read: dict[str, str]


@pytest.fixture(scope="module")
def scene(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scene]:
    tokens = {OWNER: Grant("write", ("acme/*",)), ATTACKER: Grant("write", ("beta/*",))}
    with (
        LoopbackHub(
            tmp_path_factory.mktemp("xet-shards") / "root", tokens=tokens, allow_anonymous=False
        ) as hub,
        pytest.MonkeyPatch.context() as patch,
    ):
        owner, attacker = HfApi(endpoint=hub.url, token=OWNER), HfApi(endpoint=hub.url, token=ATTACKER)
        owner.create_repo("acme/private", private=True)
        secrets = {"xet": os.urandom(250_000), "lfs": os.urandom(250_000)}
        for transport, data in secrets.items():
            patch.setattr(constants, "HF_HUB_DISABLE_XET", transport == "lfs")
            owner.create_commit(
                "acme/private", [CommitOperationAdd(f"{transport}.bin", data)], commit_message="s"
            )
        patch.setattr(constants, "HF_HUB_DISABLE_XET", False)
        recorder = ShardRecorder(hub.xet, patch)
        attacker.create_repo("beta/own", private=True)
        mine = os.urandom(250_000)
        attacker.create_commit("beta/own", [CommitOperationAdd("mine.bin", mine)], commit_message="m")
        [shard] = recorder.shards
        victim = (hashlib.sha256(secrets["xet"]).hexdigest(), hashlib.sha256(secrets["lfs"]).hexdigest())
        victim_xet_hash = hub.xet.xet_hash_for(victim[0])
        assert victim_xet_hash is not None and hub.xet.xet_hash_for(victim[1]) is None
        yield Scene(
            hub,
            shard,
            hashlib.sha256(mine).hexdigest(),
            victim,
            victim_xet_hash,
            cas_auth(hub, "beta/own", ATTACKER, write=True),
            cas_auth(hub, "beta/own", ATTACKER),
        )


@st.composite
def forged_shards(draw: st.DrawFn, scene: Scene) -> bytes:
    shard = bytearray(
        claim(
            scene.shard,
            scene.own_sha,
            draw(st.sampled_from([*scene.victim_shas, scene.own_sha, os.urandom(32).hex(), "0" * 64])),
        )
    )
    if draw(st.booleans()):
        shard[FILE : FILE + 32] = merkle_bytes(scene.victim_xet_hash)
    if draw(st.booleans()):
        (size,) = struct.unpack_from("<I", shard, TERM + 36)
        size += draw(st.sampled_from([-1, 1, -(size // 2), 2**31, 2**32 - 1 - size]))
        struct.pack_into("<I", shard, TERM + 36, size % 2**32)
    if draw(st.booleans()):
        (flags,) = struct.unpack_from("<I", shard, FILE + 32)
        struct.pack_into("<I", shard, FILE + 32, flags ^ FLAG_METADATA_EXT)
    for position, value in draw(
        st.lists(st.tuples(st.integers(0, len(shard) - 1), st.integers(0, 255)), max_size=3)
    ):
        shard[position] = value
    return bytes(shard)


@given(data=st.data())
@fuzz(25)
def test_a_forged_shard_reaches_no_other_tenants_file(scene: Scene, data: st.DataObject) -> None:
    hub = scene.hub
    forged = data.draw(forged_shards(scene))
    route = data.draw(st.sampled_from(["v1", "v2"]))
    status, _, body = raw_request(f"{hub.url}/__xet/{route}/shards", "POST", forged, scene.write)
    assert status in ((200, 400, 413) if route == "v1" else (200,)), body
    assert hub.server_errors == []
    attacker = hub.store.tenant(RepoKey("model", "beta/own"))
    for sha in scene.victim_shas:
        assert not hub.store.tenancy.has("lfs", sha, attacker)
        assert commit_line(hub, "beta/own", sha, None, ATTACKER)[0] == 422
    plan = raw_request(f"{hub.url}/__xet/v1/reconstructions/{scene.victim_xet_hash}", headers=scene.read)
    assert plan[0] == 404
