"""Each failure line of a push states the attempts made, the wait the Hub asked for, where it landed."""

from __future__ import annotations

import json
import os
from pathlib import Path

from typer.testing import Result

from hubrelease_loopback import LoopbackHub, RepoKey
from tests.factories.cli import invoke, run_process
from tests.factories.hub import hf_env, unique_repo
from tests.factories.releases import write_release


def _published(hub: LoopbackHub, folder: Path) -> tuple[str, str]:
    repo = unique_repo()
    assert _push(hub, _release(folder, repo, b"v1\n")).exit_code == 0
    return repo, hub.store.resolve(RepoKey("model", repo), "main")


def _release(folder: Path, repo: str, notes: bytes, weights: bytes | None = None) -> Path:
    files = {"notes.md": notes} | ({"w.safetensors": weights} if weights is not None else {})
    return write_release(folder, files, extra_manifest={"release": {"repo_id": repo, "license": "mit"}})


def _push(hub: LoopbackHub, manifest: Path, *args: str) -> Result:
    return invoke(["push", str(manifest), "--endpoint", hub.url, *args])


def _last(result: Result) -> str:
    return result.stderr.strip().splitlines()[-1]


def test_a_403_on_the_xet_token_route_stops_at_once(hub: LoopbackHub, tmp_path: Path) -> None:
    repo, head = _published(hub, tmp_path)
    hub.faults.forbidden(route="xet_write_token", times=100)
    result = _push(hub, _release(tmp_path, repo, b"v2\n", os.urandom(20_000)))
    assert result.exit_code == 4, result.stderr
    assert _last(result) == (
        f"error: {repo}: the Hub refused the token (HTTP 403: You don't have the rights to do this on this "
        f"repository.); check --token / HF_TOKEN and its write access (Xet write token); nothing landed: "
        f"{repo}@main is unchanged at {head[:12]}"
    )
    assert hub.requests.count("xet_write_token") == 2  # hf_xet's request, then ours: no retry
    assert "retrying" not in result.stderr


def test_a_429_whose_reset_is_too_long_says_the_wait_and_the_one_attempt(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo, head = _published(hub, tmp_path)
    hub.faults.rate_limit(route="commit", reset=900)
    hub.requests.clear()
    result = _push(hub, _release(tmp_path, repo, b"v2\n"))
    assert result.exit_code == 4
    assert _last(result) == (
        f"error: {repo}: push did not land after 1 attempt(s) (HTTP 429: You have exceeded our hourly quotas "
        "for action: api. Retry later.; the Hub asks to wait 900s, over the 300s push waits); nothing landed: "
        f"{repo}@main is unchanged at {head[:12]}; re-run push: what the Hub holds already is not sent again"
    )
    assert hub.requests.count("commit") == 1


def test_a_recovered_create_pr_push_says_it_landed_on_the_pr(hub: LoopbackHub, tmp_path: Path) -> None:
    repo, main = _published(hub, tmp_path)
    hub.faults.inject("after", route="commit", status=500)  # the PR is opened, the answer is a 500
    result = _push(hub, _release(tmp_path, repo, b"v2\n"), "--create-pr")
    assert result.exit_code == 0, result.stderr
    pr = hub.store.resolve(RepoKey("model", repo), "refs/pr/1")
    assert f"but the commit landed at {repo}@refs/pr/1" in result.stderr
    assert f"pushed {pr} to {repo}@refs/pr/1" in result.stderr
    assert hub.store.resolve(RepoKey("model", repo), "main") == main


def test_a_404_on_a_commit_that_landed_counts_as_landed(hub: LoopbackHub, tmp_path: Path) -> None:
    repo, _ = _published(hub, tmp_path)
    hub.faults.inject("after", route="commit", status=404)
    result = _push(hub, _release(tmp_path, repo, b"v2\n"), "--json")
    assert result.exit_code == 0, result.stderr
    outcome = json.loads(result.stdout)["result"]["outcome"]
    assert outcome == {
        "state": "landed",
        "repo_id": repo,
        "ref": "main",
        "commit": hub.store.resolve(RepoKey("model", repo), "main"),
    }
    assert len(hub.store.history(RepoKey("model", repo), "main")) == 3  # no duplicate commit


def test_a_failed_push_in_json_mode_carries_its_outcome(hub: LoopbackHub, tmp_path: Path) -> None:
    repo, head = _published(hub, tmp_path)
    hub.faults.forbidden(route="commit")
    result = _push(hub, _release(tmp_path, repo, b"v2\n"), "--json")
    assert result.exit_code == 4
    error = json.loads(result.stdout)["error"]
    assert error["error"] == "HubUnavailable" and error["status"] == 403 and error["exit_code"] == 4
    assert error["outcome"] == {"state": "unchanged", "repo_id": repo, "ref": "main", "commit": head}


def test_repeated_drops_reach_exit_4_after_a_bounded_number_of_tries(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo, head = _published(hub, tmp_path / "rel")
    manifest = _release(tmp_path / "rel", repo, b"v2\n", os.urandom(70_000))
    hub.faults.drop_xorb(times=1000)
    hub.requests.clear()
    env = hf_env(hub, tmp_path / "home")
    env.pop("HF_XET_CLIENT_RETRY_MAX_ATTEMPTS", None)  # push's own bound applies
    code, _, err = run_process(
        "push", manifest, "--endpoint", hub.url, env=env | {"HF_TOKEN": hub.owner_token}
    )
    assert code == 4, err[-2000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"error: {repo}: batch 1/1 did not upload after 3 attempt(s) (")
    assert last.endswith(
        f"nothing landed: {repo}@main is unchanged at {head[:12]}; re-run push: what the Hub holds already is not sent again"
    )
    # 3 batch attempts x hf_xet's 3 tries (push's bound) x its 3 upload-grant attempts per try, at most.
    tries = hub.requests.count("xet_xorb")
    assert 3 <= tries <= 27, tries
    assert "upload of batch 1/1 was lost (" in err and "(attempt 3 of 3)" in err
