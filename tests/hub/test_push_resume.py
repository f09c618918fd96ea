"""A push killed or failed mid-upload, re-run: only what the Hub does not hold is sent, one commit.

Bounded work, no clocks: a small release in 1 MiB batches, the kill at a byte count the server
counts (``faults.trip_after``), every figure from the server's request log.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from hubrelease.hub.plan import build_plan, read_remote
from hubrelease.hub.push import push_release
from hubrelease.hub.upload import UPLOAD_WORKERS
from hubrelease.manifest import load_manifest
from hubrelease_loopback import LoopbackHub, RepoKey
from hubrelease_loopback.faults import DATA_ROUTES
from tests.factories.cli import finish, spawn
from tests.factories.hub import api_for, hf_env, logged, unique_repo
from tests.factories.releases import write_release

MIB = 1 << 20


def _release(folder: Path, repo: str, count: int = 6) -> tuple[Path, int]:
    """``count`` fresh 1 MiB weight files (one batch each at 1 MiB batches) and a notes file."""
    files = {f"model-{n:02d}.safetensors": os.urandom(MIB) for n in range(count)}
    files["notes.md"] = b"notes\n"
    manifest = write_release(folder, files, extra_manifest={"release": {"repo_id": repo, "license": "mit"}})
    return manifest, count * MIB


def _xorb_bytes(hub: LoopbackHub) -> int:
    return hub.requests.bytes_in("xet_xorb")


def _cli(hub: LoopbackHub, manifest: Path, home: Path, *args: str) -> subprocess.Popen[str]:
    """``hubrelease push`` in its own process (so it can be SIGKILLed), with its own HF_HOME."""
    env = hf_env(hub, home)
    env["HUBRELEASE_PUSH_BATCH_SIZE"] = "1MiB"
    return spawn("push", manifest, "--endpoint", hub.url, "--token", hub.owner_token, *args, env=env)


def test_a_push_killed_mid_upload_re_run_with_a_fresh_hf_home_sends_at_most_the_batches_in_flight(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo = unique_repo()
    api_for(hub).create_repo(repo)
    key = RepoKey("model", repo)
    before = hub.store.resolve(key, "main")
    manifest, weights = _release(tmp_path / "rel", repo)
    hub.requests.clear()
    first = _cli(hub, manifest, tmp_path / "home-1")
    hub.faults.trip_after(int(3.5 * MIB), lambda: os.kill(first.pid, signal.SIGKILL))
    assert finish(first)[0] == -signal.SIGKILL
    logged(hub, "xet_xorb", 0)  # the killed run's connections all ended
    killed_at = _xorb_bytes(hub)
    # Xorbs the Hub answered are stored; the one that tripped the kill, and any others then in
    # flight, were dropped unanswered, so never stored.
    stored = sum(r.bytes_in for r in hub.requests.on("xet_xorb") if r.status == 200)
    assert killed_at >= 3.5 * MIB and stored < 3.5 * MIB
    assert hub.store.resolve(key, "main") == before and hub.requests.count("commit") == 0

    hub.requests.clear()
    second = _cli(hub, manifest, tmp_path / "home-2", "--json")  # a fresh HF_HOME, as on a CI runner
    code, out, err = finish(second)
    assert code == 0, err[-3000:]
    resent = _xorb_bytes(hub)
    # What was stored before the kill is not sent again (a 1 MiB file is one xorb with a header);
    # so what went twice is at most the batches in flight.
    assert weights - stored <= resent <= weights - stored + 6 * 4096, (resent, stored)
    assert killed_at + resent <= weights + UPLOAD_WORKERS * MIB + 12 * 4096
    assert hub.requests.count("commit") == 1
    assert len(hub.store.history(key, "main")) == 2  # the repo's first commit, then the release once
    upload = json.loads(out)["result"]["upload"]
    assert upload["batches"] == 7 and upload["files"] == 8  # 6 weights, notes, manifest (one batch)
    # Batches overlap, so how many had their shard accepted before the kill varies (their xorbs
    # were stored all the same, and not sent again); those count as held.
    assert upload["stored_bytes"] == upload["stored_files"] * MIB <= stored
    assert "the Hub holds" not in err  # --json: no progress lines


def test_a_push_over_lfs_killed_mid_upload_sends_again_only_the_objects_not_registered(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    # Three objects too large to be regular files, their parts sent by several workers at once, in
    # plan order: the kill at one and a half objects finds the first one complete and registered.
    size = (10 << 20) + 1
    repo = unique_repo()
    api_for(hub).create_repo(repo)
    files = {f"model-{n}.safetensors": os.urandom(size) for n in range(3)}
    manifest = write_release(
        tmp_path / "rel", files, extra_manifest={"release": {"repo_id": repo, "license": "mit"}}
    )
    env = hf_env(hub, tmp_path / "home-1")
    env["HF_HUB_DISABLE_XET"] = "1"
    hub.requests.clear()
    first = spawn("push", manifest, "--token", hub.owner_token, env=env)
    hub.faults.trip_after(size + size // 2, lambda: os.kill(first.pid, signal.SIGKILL))
    assert finish(first)[0] == -signal.SIGKILL
    assert len(logged(hub, "lfs_complete", 1)) == 1  # the first object, and only it
    killed_at = hub.requests.bytes_in("lfs_part")

    hub.requests.clear()
    env["HF_HOME"] = str(tmp_path / "home-2")
    code, out, err = finish(spawn("push", manifest, "--token", hub.owner_token, "--json", env=env))
    assert code == 0, err[-3000:]
    assert len(logged(hub, "lfs_complete", 2)) == 2
    # The two objects not registered, each once, nothing of the first: sent twice, at most the
    # object in flight at the kill.
    assert hub.requests.bytes_in("lfs_part") == 2 * size
    assert killed_at + 2 * size <= 4 * size
    upload = json.loads(out)["result"]["upload"]
    assert upload["stored_files"] == 1 and upload["stored_bytes"] == size


def test_after_a_xet_stage_failure_only_the_failed_batch_is_sent_again(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo = unique_repo()
    api = api_for(hub)
    api.create_repo(repo)
    manifest, weights = _release(tmp_path / "rel", repo, count=3)
    release = load_manifest(manifest)
    plan = build_plan(release, manifest, tmp_path / "rel", read_remote(api, release))
    hub.requests.clear()
    messages: list[str] = []
    hub.faults.refuse_shard(times=1)  # the first batch whose shard arrives (batches overlap)
    result = push_release(
        api, plan, message="m", notify=messages.append, sleep=lambda _: None, batch_bytes=MIB
    )
    assert result.landed and result.upload is not None and result.upload.retried_batches == 1
    lost = [m for m in messages if m.startswith("upload of batch ") and " was lost (" in m]
    assert len(lost) == 1, messages
    shards = sorted(r.status for r in hub.requests.records if r.route == "xet_shard")
    assert shards == [200, 200, 200, 400]  # that batch twice, the other two once
    # The refused batch's xorb was stored before its shard was refused, so the retry re-sends its
    # shard only; the other batches are not sent again in any case.
    assert weights <= _xorb_bytes(hub) < weights + MIB
    assert hub.requests.count("commit") == 1


def test_the_tripwire_counts_only_data_routes_and_fires_once(hub: LoopbackHub, tmp_path: Path) -> None:
    fired: list[int] = []
    hub.faults.trip_after(10, lambda: fired.append(1))
    assert not hub.faults.received("commit", 100) and not hub.faults.received("preupload", 100)
    assert hub.faults.received("lfs_upload", 10) and fired == [1]
    assert not hub.faults.received("xet_xorb", 10**6) and fired == [1]
    assert "xet_xorb" in DATA_ROUTES.split("|")
