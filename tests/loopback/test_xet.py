"""The loopback Hub's Xet path, driven by the real huggingface_hub client with the real hf_xet."""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
from collections.abc import Iterator
from pathlib import Path

import hf_xet
import pytest
from huggingface_hub import CommitOperationAdd, HfApi, RepoFile

from hubrelease_loopback import LoopbackHub, xetformat
from tests.factories.cli import run_program
from tests.factories.hub import api_for, head, hf_env, raw_request, unique_repo
from tests.factories.xet_shards import ShardRecorder

# Random bytes, then 400 kB of zeros: the zeros chunk into identical chunks, which a xorb stores once
# and the file's terms reference several times.
WEIGHTS = os.urandom(700_000) + bytes(400_000) + os.urandom(50_000)
SMALL = os.urandom(3_000)


def _weights() -> bytes:
    """Fresh bytes: the CAS deduplicates across tests, so an upload test must not reuse content."""
    return os.urandom(700_000) + bytes(400_000) + os.urandom(50_000)


def _push(hub: LoopbackHub, tmp_path: Path, weights: bytes = WEIGHTS) -> tuple[str, str]:
    api, repo = api_for(hub), unique_repo()
    api.create_repo(repo)
    (tmp_path / "model.safetensors").write_bytes(weights)
    ops = [
        CommitOperationAdd("model.safetensors", tmp_path / "model.safetensors"),
        CommitOperationAdd("extra/small.gguf", SMALL),
        CommitOperationAdd("config.json", b'{"a": 1}\n'),
    ]
    return repo, api.create_commit(repo, ops, commit_message="xet").oid


def test_upload_goes_through_xet_and_lands_checked_files(hub: LoopbackHub, tmp_path: Path) -> None:
    weights = _weights()
    repo, oid = _push(hub, tmp_path, weights)
    assert hub.requests.count("xet_write_token") >= 1
    assert hub.requests.count("xet_xorb") >= 1 and hub.requests.count("xet_shard") == 1
    assert hub.requests.count("lfs_batch") == 0 and hub.requests.count("lfs_upload") == 0
    sha = hashlib.sha256(weights).hexdigest()
    assert hub.store.has_lfs(sha, len(weights))
    [expected] = hf_xet.hash_files([str(tmp_path / "model.safetensors")])
    info = {p.path: p for p in api_for(hub).get_paths_info(repo, ["model.safetensors", "config.json"])}
    published = info["model.safetensors"]
    assert isinstance(published, RepoFile) and isinstance(info["config.json"], RepoFile)
    assert published.lfs is not None and published.lfs.sha256 == sha
    assert published.xet_hash == expected.hash
    assert info["config.json"].xet_hash is None
    status, headers = head(f"{hub.url}/{repo}/resolve/main/model.safetensors")
    assert status == 302 and headers["x-xet-hash"] == expected.hash and headers["x-repo-commit"] == oid
    assert 'rel="xet-auth"' in headers["link"] and "/xet-read-token/" in headers["link"]


def test_download_reconstructs_from_xorbs(hub: LoopbackHub, tmp_path: Path) -> None:
    repo, _ = _push(hub, tmp_path)
    api = api_for(hub)
    hub.requests.clear()
    path = api.hf_hub_download(repo, "model.safetensors", cache_dir=tmp_path / "cache")
    assert Path(path).read_bytes() == WEIGHTS
    assert hub.requests.count("xet_reconstruction") >= 1 and hub.requests.count("xet_fetch") >= 1
    assert hub.requests.count("resolve", method="GET") == 0  # the bytes came from the CAS
    (tmp_path / "more.bin").write_bytes(SMALL * 100)
    api.upload_file(path_or_fileobj=tmp_path / "more.bin", path_in_repo="more.bin", repo_id=repo)
    snapshot = Path(api.snapshot_download(repo, cache_dir=tmp_path / "snap"))
    assert (snapshot / "more.bin").read_bytes() == SMALL * 100
    assert (snapshot / "extra/small.gguf").read_bytes() == SMALL
    assert (snapshot / "config.json").read_bytes() == b'{"a": 1}\n'


def test_reconstruction_honours_range_and_refuses_bad_tokens(hub: LoopbackHub, tmp_path: Path) -> None:
    repo, _ = _push(hub, tmp_path)
    [info] = hf_xet.hash_files([str(tmp_path / "model.safetensors")])
    status, headers, body = raw_request(f"{hub.url}/api/models/{repo}/xet-read-token/main")
    token = json.loads(body)["accessToken"]
    assert status == 200 and headers["x-xet-access-token"] == token
    url = f"{hub.url}/__xet/v1/reconstructions/{info.hash}"
    auth = {"Authorization": f"Bearer {token}"}
    status, _, body = raw_request(url, headers={**auth, "Range": "bytes=800000-800009"})
    plan = json.loads(body)
    assert status == 200 and plan["terms"]
    first = plan["terms"][0]
    fetch = plan["fetch_info"][first["hash"]][0]
    _, _, stored = raw_request(
        fetch["url"], headers={"Range": f"bytes={fetch['url_range']['start']}-{fetch['url_range']['end']}"}
    )
    raw = b"".join(_decode(stored))
    skip = plan["offset_into_first_range"]
    chunk_start = sum(t["unpacked_length"] for t in plan["terms"][:0])
    assert raw[chunk_start + skip : chunk_start + skip + 10] == WEIGHTS[800000:800010]
    assert raw_request(url, headers={**auth, "Range": f"bytes={len(WEIGHTS)}-"})[0] == 416
    assert raw_request(url)[0] == 401
    assert raw_request(url, headers={"Authorization": "Bearer nope"})[0] == 401
    assert raw_request(fetch["url"].split("?")[0])[0] == 403  # unsigned fetch URL
    shard = f"{hub.url}/__xet/v1/shards"
    assert raw_request(shard, "POST", b"x", headers=auth)[0] == 403  # a read token cannot upload
    hub.faults.expire_xet_tokens()
    assert raw_request(url, headers=auth)[0] == 401


def _decode(stored: bytes) -> Iterator[bytes]:
    import io

    handle = io.BytesIO(stored)
    while (found := xetformat.read_chunk(handle)) is not None:
        yield xetformat.decode_chunk(*found)


def test_tampered_xorbs_and_shards_are_refused(
    hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = ShardRecorder(hub.xet, monkeypatch)
    weights = os.urandom(1_200_000)  # fresh and zero-free: nothing of it is in the CAS yet
    api = api_for(hub)
    api.create_repo(repo := unique_repo())
    api.create_commit(repo, [CommitOperationAdd("w.safetensors", weights)], commit_message="w")
    [shard] = recorder.shards
    sha = hashlib.sha256(weights).hexdigest()
    with LoopbackHub(tmp_path / "other") as other:
        repo = unique_repo()
        api_for(other).create_repo(repo)
        token = json.loads(raw_request(f"{other.url}/api/models/{repo}/xet-write-token/main")[2])[
            "accessToken"
        ]
        auth = {"Authorization": f"Bearer {token}"}
        name, xorb = next(iter(recorder.xorbs.items()))
        flipped = bytearray(xorb)
        flipped[100] ^= 0xFF  # inside the first chunk's data
        status, _, body = raw_request(
            f"{other.url}/__xet/v1/xorbs/default/{name}", "POST", bytes(flipped), auth
        )
        assert status == 400, body
        status, _, body = raw_request(f"{other.url}/__xet/v1/shards", "POST", shard, auth)
        assert status == 400 and b"does not match the xorbs it names" in body  # xorbs the CAS lacks
        for name, xorb in recorder.xorbs.items():
            assert raw_request(f"{other.url}/__xet/v1/xorbs/default/{name}", "POST", xorb, auth)[0] == 200
        at = shard.index(bytes.fromhex(sha)[:8][::-1])  # the sha256 metadata record of the weights
        forged = shard[:at] + bytes(8) + shard[at + 8 :]
        status, _, body = raw_request(f"{other.url}/__xet/v1/shards", "POST", forged, auth)
        assert status == 400 and b"do not hash to sha256" in body
        assert not other.store.has_lfs(sha, len(weights))
        status, _, body = raw_request(f"{other.url}/__xet/v1/shards", "POST", shard, auth)
        assert status == 200 and json.loads(body) == {"result": 1}
        assert other.store.has_lfs(sha, len(weights))
        assert other.server_errors == []


@pytest.mark.parametrize("arm", ["refuse_shard", "drop_xorb", "revoked_token"])
def test_xet_faults_leave_the_repo_unchanged(hub: LoopbackHub, tmp_path: Path, arm: str) -> None:
    api, repo = api_for(hub), unique_repo()
    api.create_repo(repo)
    head = api.repo_info(repo).sha
    data = os.urandom(200_000)
    if arm == "refuse_shard":
        hub.faults.refuse_shard(times=10)
    elif arm == "drop_xorb":
        hub.faults.drop_xorb(times=1000)
    else:
        hub.faults.inject("status", route="xet_xorb", status=401, times=1000, message="token expired")
    with pytest.raises((OSError, RuntimeError)):
        api.create_commit(repo, [CommitOperationAdd("w.safetensors", data)], commit_message="x")
    assert api.repo_info(repo).sha == head
    assert not hub.store.has_lfs(hashlib.sha256(data).hexdigest(), len(data))


def test_global_dedup_probe_lets_another_client_skip_stored_chunks(hub: LoopbackHub, tmp_path: Path) -> None:
    # Two processes with their own HF_HOME: no local shard cache is shared, only the CAS.
    script = (
        "import sys\n"
        "from huggingface_hub import CommitOperationAdd, HfApi\n"
        "api = HfApi(token=sys.argv[3])\n"
        "api.create_repo(sys.argv[1], exist_ok=True)\n"
        "api.create_commit(sys.argv[1], [CommitOperationAdd('w.safetensors', sys.argv[2])], commit_message='m')\n"
    )
    # Seeded bytes: content-defined chunk boundaries, and so the byte counts, are the same every run.
    rng = random.Random(7)
    base = rng.randbytes(1_500_000)
    extra = rng.randbytes(200_000)
    (tmp_path / "one.bin").write_bytes(base)
    (tmp_path / "two.bin").write_bytes(base + extra)
    sent = []
    for name in ("one", "two"):
        hub.requests.clear()
        done = run_program(
            [sys.executable, "-c", script, unique_repo(), str(tmp_path / f"{name}.bin"), hub.owner_token],
            env=hf_env(hub, tmp_path / f"home-{name}"),
        )
        assert done.returncode == 0, done.stderr[-2000:]
        sent.append(hub.requests.bytes_in("xet_xorb"))
    assert sent[0] >= len(base)
    # Only the new bytes and the chunk spanning the seam (at most 128 KiB, xet-core's maximum chunk
    # size) are sent again; the 1.5 MB the first client stored are deduplicated.
    assert sent[1] < len(extra) + 2 * 128 * 1024 < len(base)
    probes = [r for r in hub.requests.records if r.route == "xet_dedup"]
    assert any(r.status == 200 and r.bytes_out > 0 for r in probes)


def test_dedup_probe_answers_with_every_xorb_of_the_registering_shard(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    # A file over one xorb (64 MiB of chunks, xet-core MAX_XORB_BYTES): hf_xet probes its first chunk,
    # then one chunk in ~1,024, so a client with an empty HF_HOME skips the xorbs after the first only
    # if the probe's answer lists them too, as xet-core's reference CAS (local_client.rs) answers.
    script = (
        "import sys\n"
        "from huggingface_hub import CommitOperationAdd, HfApi\n"
        "api = HfApi(token=sys.argv[3])\n"
        "api.create_repo(sys.argv[1], exist_ok=True)\n"
        "api.preupload_lfs_files(sys.argv[1], [CommitOperationAdd('w.safetensors', sys.argv[2])])\n"
    )
    weights = tmp_path / "w.bin"
    weights.write_bytes(random.Random(11).randbytes(100 << 20))
    repo = unique_repo()
    sent = []
    for home in ("one", "two"):
        hub.requests.clear()
        done = run_program(
            [sys.executable, "-c", script, repo, str(weights), hub.owner_token],
            env=hf_env(hub, tmp_path / f"home-{home}"),
        )
        assert done.returncode == 0, done.stderr[-2000:]
        sent.append((hub.requests.count("xet_xorb"), hub.requests.bytes_in("xet_xorb")))
    assert sent[0][0] == 2 and sent[0][1] >= 100 << 20  # two xorbs the first time
    assert sent[1] == (0, 0)  # none the second: the first chunk's answer named both


def test_a_fresh_root_on_the_same_url_is_a_new_cas_to_the_client(tmp_path: Path) -> None:
    # hf_xet keeps a shard cache in HF_HOME/xet, keyed by the CAS URL: on a server restarted on the
    # same port with a new root, a cache keyed by the port alone claimed xorbs the new root never got
    # and every push of the same bytes failed until HF_HOME/xet was removed.
    script = (
        "import sys\n"
        "from huggingface_hub import CommitOperationAdd, HfApi\n"
        "api = HfApi(token=sys.argv[3])\n"
        "api.create_repo(sys.argv[1], exist_ok=True)\n"
        "api.create_commit(sys.argv[1], [CommitOperationAdd('w.safetensors', sys.argv[2])], commit_message='m')\n"
    )
    weights = tmp_path / "w.bin"
    weights.write_bytes(os.urandom(300_000))
    port, sent, stores = 0, [], {}
    for root in ("old", "new"):
        with LoopbackHub(tmp_path / root, port=port) as hub:
            port = int(hub.url.rsplit(":", 1)[1])
            done = run_program(
                [sys.executable, "-c", script, "acme/w", str(weights), hub.owner_token],
                env=hf_env(hub, tmp_path / "home"),  # one HF_HOME for both servers
            )
            assert done.returncode == 0, done.stderr[-2000:]
            assert hub.store.has_lfs(hashlib.sha256(weights.read_bytes()).hexdigest(), 300_000)
            sent.append(hub.requests.bytes_in("xet_xorb"))
            stores[root] = _cas_url(hub).removeprefix(hub.url)
            assert hub.server_errors == []
    assert min(sent) >= 300_000  # the new root got the bytes again
    assert stores["old"] != stores["new"]
    with LoopbackHub(tmp_path / "new") as hub:  # a root keeps its id, on any port
        assert _cas_url(hub) == f"{hub.url}{stores['new']}"


def _cas_url(hub: LoopbackHub) -> str:
    return str(json.loads(raw_request(f"{hub.url}/api/models/acme/w/xet-read-token/main")[2])["casUrl"])


def test_a_client_without_a_token_pushes_the_same_bytes_to_a_second_repo(hub: LoopbackHub) -> None:
    # hf_xet's shard cache names the xorbs of the first push in the second one's shard; on an open
    # Hub (any token writes everything) a client that sends none reaches them too.
    anonymous, data = HfApi(endpoint=hub.url, token=False), os.urandom(300_000)
    for repo in (unique_repo("anonymous"), unique_repo("anonymous")):
        anonymous.create_repo(repo)
        anonymous.create_commit(repo, [CommitOperationAdd("w.safetensors", data)], commit_message="m")
        assert anonymous.list_repo_files(repo) == [".gitattributes", "w.safetensors"]
    assert hub.server_errors == []
