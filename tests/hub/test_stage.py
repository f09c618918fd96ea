"""A release larger than one commit: staged on ``refs/pr/N``, resumed after a failure, merged as one commit.

The real huggingface_hub client against the loopback Hub, with the limits lowered (``CommitLimits``)
so that 60 small files stand for 100,000: 50 files per commit, 20 per staged commit.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
from pathlib import Path

import pytest
from huggingface_hub import HfApi

from hubrelease.errors import HubUnavailable, RemoteMovedError
from hubrelease.hub.plan import CommitLimits, PushPlan, RemoteSnapshot, build_plan, read_remote
from hubrelease.hub.push import PushResult, push_release
from hubrelease.hub.stage import parts
from hubrelease.manifest import load_manifest
from hubrelease_loopback import LoopbackHub, RepoKey
from tests.factories.cli import finish, invoke, spawn
from tests.factories.hub import api_for, hf_env, unique_repo, upload_files
from tests.factories.releases import write_release

LIMITS = CommitLimits(files=50, regular_bytes=10_000_000, bytes=50_000_000, staged_files=20)
COUNT = 60
SMALL_LIMITS = (
    "from hubrelease.hub.plan import CommitLimits\n"
    f"CommitLimits.__init__.__defaults__ = {dataclasses.astuple(LIMITS)!r}"
)
"""Python the ``hubrelease push`` child runs first: ``LIMITS`` as its defaults (no flag sets them)."""


def _release(folder: Path, repo: str, count: int = COUNT) -> Path:
    files = {f"shards/{n:03d}.bin": os.urandom(200) for n in range(count)}
    return write_release(folder, files, extra_manifest={"release": {"repo_id": repo, "license": "mit"}})


def _plan(api: HfApi, manifest: Path) -> PushPlan:
    release = load_manifest(manifest)
    return build_plan(release, manifest, manifest.parent, read_remote(api, release))


def _push(
    api: HfApi, manifest: Path, notify: list[str] | None = None, message: str = "Release"
) -> PushResult:
    lines = notify if notify is not None else []
    return push_release(
        api, _plan(api, manifest), message=message, limits=LIMITS, notify=lines.append, sleep=lambda _: None
    )


def _published(hub: LoopbackHub, tmp_path: Path) -> tuple[str, RepoKey, str]:
    """A repo whose main holds an old release (``old.md``): its id, key and head."""
    repo = unique_repo()
    api = api_for(hub)
    api.create_repo(repo)
    head = upload_files(api, repo, {"old.md": b"old release\n"})
    return repo, RepoKey("model", repo), head


def _prs(hub: LoopbackHub, key: RepoKey) -> dict[str, dict[str, object]]:
    prs: dict[str, dict[str, object]] = hub.store.refs(key)["prs"]
    return prs


def test_a_release_over_the_limits_is_staged_on_a_pull_request_and_lands_as_one_merge(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo, key, old = _published(hub, tmp_path)
    manifest = _release(tmp_path / "rel", repo)
    seen: list[tuple[str, set[str]]] = []

    def watch(line: str) -> None:  # what a reader of main sees after each staged part
        if line.startswith("staged part"):
            head, tree = hub.store.tree(key, "main")
            seen.append((head, set(tree)))

    api = api_for(hub)
    plan = _plan(api, manifest)
    result = push_release(api, plan, message="Release", limits=LIMITS, notify=watch, sleep=lambda _: None)
    # 60 shards + the manifest, old.md deleted: 62 changes, staged as 1 + 4 parts of <= 20.
    assert result.staged is not None and result.staged.commits == 5 and result.staged.merged
    assert seen == [(old, {".gitattributes", "old.md"})] * 5  # main untouched while staging
    history = hub.store.history(key, "main")
    assert history[1]["id"] == old and history[0]["id"] == result.commit  # one change of the branch
    assert history[0]["parents"] == [old, hub.store.resolve(key, f"refs/pr/{result.staged.pr_num}")]
    assert set(hub.store.tree(key, "main")[1]) == {".gitattributes"} | {f.path for f in plan.files}
    pr = _prs(hub, key)[str(result.staged.pr_num)]
    assert pr["status"] == "merged" and isinstance(pr["events"], list)
    # the draft opened, then merged (as huggingface_hub's own merge test does)
    assert [e["data"]["status"] for e in pr["events"] if e["type"] == "status-change"] == ["open", "merged"]
    assert result.report is not None and not result.report.has_drift
    assert result.upload is not None and result.upload.files == COUNT + 1
    remote = invoke(["verify", str(manifest), "--remote", "--revision", result.commit, "--endpoint", hub.url])
    assert remote.exit_code == 0, remote.stdout + remote.stderr
    # verify --remote reads metadata only: no file's bytes came back over resolve or the CDN
    assert hub.requests.count("resolve|cdn", method="GET") == 0


def test_below_the_limits_the_push_stays_one_commit_and_opens_no_pull_request(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo, key, old = _published(hub, tmp_path)
    result = _push(api_for(hub), _release(tmp_path / "rel", repo, count=10))
    assert result.staged is None and result.attempts == 1
    assert [c["id"] for c in hub.store.history(key, "main")][1] == old
    assert hub.store.commit_data(key, result.commit)["parents"] == [old] and _prs(hub, key) == {}


def test_a_staging_stopped_after_two_staged_commits_resumes_there_and_merges_once(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo, key, old = _published(hub, tmp_path)
    manifest = _release(tmp_path / "rel", repo)
    api = api_for(hub)
    # The third staged commit's connection drops on every attempt: the Hub unreachable (exit 4).
    hub.faults.inject("drop", route="commit", skip=2, times=3)
    with pytest.raises(HubUnavailable) as failed:
        _push(api, manifest)
    assert failed.value.outcome is not None and failed.value.outcome.state == "unchanged"
    assert "re-run push to resume" in failed.value.message
    assert hub.store.resolve(key, "main") == old
    ((num, pr),) = _prs(hub, key).items()
    assert pr["status"] == "draft"  # open: a PR that create_commit opens is a draft
    staged = hub.store.commit_data(key, hub.store.resolve(key, f"refs/pr/{num}"))
    assert len([p for p in staged["tree"] if p.startswith("shards/")]) == 20  # parts 1 and 2 (deletion, 20)

    hub.requests.clear()
    lines: list[str] = []
    result = _push(api, manifest, lines, message="Release, resumed")  # another message: same staging
    assert result.staged is not None and result.staged.pr_num == int(num)
    assert result.staged.resumed_files == 20 and result.staged.commits == 3  # 41 left: 20, 20, 1
    assert hub.requests.count("commit") == 3  # the remaining parts; nothing staged twice
    assert f"pull request #{num} (20 file(s) staged there already)" in lines[0]
    assert [c["id"] for c in hub.store.history(key, "main")][:2] == [result.commit, old]
    assert result.report is not None and not result.report.has_drift


def test_a_push_sigkilled_mid_staging_leaves_main_alone_and_a_re_run_resumes_and_merges(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo, key, old = _published(hub, tmp_path)
    manifest = _release(tmp_path / "rel", repo)
    args = ("push", manifest, "--endpoint", hub.url, "--token", hub.owner_token)
    child = spawn(*args, env=hf_env(hub, tmp_path / "home-1"), setup=SMALL_LIMITS)
    # Killed as its fourth commit request arrives: three parts staged (the deletion, 20, 20 files).
    hub.faults.inject("drop", route="commit", skip=3, action=lambda: os.kill(child.pid, signal.SIGKILL))
    assert finish(child)[0] == -signal.SIGKILL
    assert hub.store.resolve(key, "main") == old
    ((num, pr),) = _prs(hub, key).items()
    staged = hub.store.commit_data(key, hub.store.resolve(key, f"refs/pr/{num}"))
    assert len([p for p in staged["tree"] if p.startswith("shards/")]) == 40 and pr["status"] == "draft"

    hub.requests.clear()
    again = spawn(*args, "--json", env=hf_env(hub, tmp_path / "home-2"), setup=SMALL_LIMITS)
    code, out, err = finish(again)
    assert code == 0, err[-3000:]
    result = json.loads(out)["result"]
    assert result["staged"] == {"pr_num": int(num), "commits": 2, "resumed_files": 40, "merged": True}
    assert hub.requests.count("commit") == 2  # 21 files left: 20, then 1 with the manifest
    assert [c["id"] for c in hub.store.history(key, "main")][:2] == [result["commit"], old]


def test_a_staging_that_cannot_be_resumed_closes_its_pull_request_and_leaves_the_branch_alone(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo, key, old = _published(hub, tmp_path)
    manifest = _release(tmp_path / "rel", repo)
    api = api_for(hub)
    plan = _plan(api, manifest)
    theirs: list[str] = []

    def someone_pushes(line: str) -> None:
        if line.startswith("staged part 2 "):
            theirs.append(upload_files(api, repo, {"theirs.md": b"someone else\n"}))

    with pytest.raises(RemoteMovedError) as moved:
        push_release(api, plan, message="Release", limits=LIMITS, notify=someone_pushes, sleep=lambda _: None)
    ((num, pr),) = _prs(hub, key).items()
    assert pr["status"] == "closed" and f"pull request #{num} was closed" in moved.value.message
    assert moved.value.exit_code == 1 and moved.value.outcome is not None
    assert hub.store.history(key, "main")[0]["id"] == theirs[0]
    assert hub.store.history(key, "main")[1]["id"] == old  # their commit only: none of ours


def test_a_new_staging_does_not_resume_a_pull_request_of_another_release(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo, key, _ = _published(hub, tmp_path)
    api = api_for(hub)
    hub.faults.inject("drop", route="commit", skip=1, times=3)
    with pytest.raises(HubUnavailable):
        _push(api, _release(tmp_path / "one", repo))
    result = _push(api, _release(tmp_path / "two", repo))  # other bytes: another staging key
    assert result.staged is not None and result.staged.resumed_files == 0
    assert sorted(str(pr["status"]) for pr in _prs(hub, key).values()) == ["draft", "merged"]


def test_parts_cut_the_uploads_by_files_bytes_and_small_bytes(tmp_path: Path) -> None:
    manifest = _release(tmp_path, "acme/parts", count=3)
    plan = build_plan(load_manifest(manifest), manifest, tmp_path, RemoteSnapshot(None, {}))
    template = plan.files[0]
    big, small = 40_000_000, 4_000_000

    def sized(sizes: list[int]) -> PushPlan:
        files = tuple(dataclasses.replace(template, path=f"f{i}", size=n) for i, n in enumerate(sizes))
        return dataclasses.replace(plan, files=files)

    def shape(cut: list[PushPlan]) -> list[list[int]]:
        return [[f.size for f in part.files] for part in cut]

    assert shape(parts(sized([1] * 45), LIMITS)) == [[1] * 20, [1] * 20, [1] * 5]
    assert shape(parts(sized([big, big, 1]), LIMITS)) == [[big], [big, 1]]  # 50 MB a part
    assert shape(parts(sized([small] * 5), LIMITS)) == [[small] * 2, [small] * 2, [small]]  # 10 MB small


def test_with_create_pr_the_staged_pull_request_is_the_result_and_stays_open(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo, key, old = _published(hub, tmp_path)
    api = api_for(hub)
    plan = _plan(api, _release(tmp_path / "rel", repo))
    result = push_release(api, plan, message="Release", limits=LIMITS, create_pr=True, sleep=lambda _: None)
    assert result.staged is not None and not result.staged.merged
    assert result.pr_revision == f"refs/pr/{result.staged.pr_num}" and result.pr_url is not None
    assert result.commit == hub.store.resolve(key, f"refs/pr/{result.staged.pr_num}")
    assert (
        hub.store.resolve(key, "main") == old
        and _prs(hub, key)[str(result.staged.pr_num)]["status"] == "draft"
    )
    assert result.report is not None and not result.report.has_drift  # verified at the PR's head


def test_a_merge_whose_answer_is_lost_is_read_back_as_merged(hub: LoopbackHub, tmp_path: Path) -> None:
    repo, key, old = _published(hub, tmp_path)
    hub.faults.inject("after", route="discussion_merge", status=500)  # merged, then answered 500
    result = _push(api_for(hub), _release(tmp_path / "rel", repo))
    assert result.landed and result.commit == hub.store.resolve(key, "main")
    assert hub.store.commit_data(key, result.commit)["parents"][0] == old
    assert hub.requests.count("discussion_merge") >= 1 and hub.faults.pending == []
