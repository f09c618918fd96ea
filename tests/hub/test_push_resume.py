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
from hubrelease.manifest import load_manifest
from hubrelease_loopback import LoopbackHub, RepoKey
from hubrelease_loopback.faults import DATA_ROUTES
from tests.factories.cli import finish, spawn
from tests.factories.hub import api_for, hf_env, unique_repo
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


def test_a_push_killed_mid_upload_re_run_with_a_fresh_hf_home_sends_at_most_the_batch_in_flight(
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
    killed_at = _xorb_bytes(hub)
    # Three batches registered; the fourth in flight, its xorb received (in the server's 1 MiB reads)
    # but dropped unanswered, so never stored.
    assert 3 * MIB < killed_at < 4 * MIB + 4096
    assert hub.store.resolve(key, "main") == before and hub.requests.count("commit") == 0

    hub.requests.clear()
    second = _cli(hub, manifest, tmp_path / "home-2", "--json")  # a fresh HF_HOME, as on a CI runner
    code, out, err = finish(second)
    assert code == 0, err[-3000:]
    resent = _xorb_bytes(hub)
    # The fourth batch again (1 MiB of chunks plus xorb headers), then the two never sent.
    assert 3 * MIB <= resent < 3 * MIB + 4096, resent
    assert killed_at + resent < weights + MIB + 4096  # at most the batch in flight was sent twice
    assert hub.requests.count("commit") == 1
    assert len(hub.store.history(key, "main")) == 2  # the repo's first commit, then the release once
    upload = json.loads(out)["result"]["upload"]
    assert upload["batches"] == 7 and upload["files"] == 8  # 6 weights, notes, manifest (one batch)
    assert upload["stored_files"] == 3 and upload["stored_bytes"] == 3 * MIB  # what was already there
    assert "the Hub holds 3 of them" not in err  # --json: no progress lines


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

    def notify(line: str) -> None:
        messages.append(line)
        if line.startswith("batch 2/"):  # batch 1 is registered; batch 2's shard will be refused once
            hub.faults.refuse_shard(times=1)

    result = push_release(api, plan, message="m", notify=notify, sleep=lambda _: None, batch_bytes=MIB)
    assert result.landed and result.upload is not None and result.upload.retried_batches == 1
    assert any(m.startswith("upload of batch 2/4 was lost (") for m in messages), messages
    shards = [r for r in hub.requests.records if r.route == "xet_shard"]
    assert [r.status for r in shards] == [200, 400, 200, 200]  # batch 2 twice, batches 1 and 3 once
    # Batch 2's xorb was stored before its shard was refused, so the retry re-sends its shard only;
    # batches 1 and 3 are not sent again in any case.
    assert weights <= _xorb_bytes(hub) < weights + MIB
    assert hub.requests.count("commit") == 1


def test_the_tripwire_counts_only_data_routes_and_fires_once(hub: LoopbackHub, tmp_path: Path) -> None:
    fired: list[int] = []
    hub.faults.trip_after(10, lambda: fired.append(1))
    assert not hub.faults.received("commit", 100) and not hub.faults.received("preupload", 100)
    assert hub.faults.received("lfs_upload", 10) and fired == [1]
    assert not hub.faults.received("xet_xorb", 10**6) and fired == [1]
    assert "xet_xorb" in DATA_ROUTES.split("|")
