"""`hubrelease push` over real HTTP against the loopback Hub: atomicity, conflicts, faults, CI tools."""

from __future__ import annotations

import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import HfApi
from typer.testing import Result

import hubrelease.hub
import hubrelease.hub.publish
from hubrelease.errors import CheckFailed, HubUnavailable, RemoteMovedError
from hubrelease.hashing import sha256_file
from hubrelease.hub.plan import PushPlan, build_plan, read_remote
from hubrelease.hub.push import PushResult, push_release
from hubrelease.manifest import load_manifest
from hubrelease.sizes import human_bytes
from hubrelease_loopback import LoopbackHub, RepoKey
from tests.factories.cli import invoke, run_program
from tests.factories.hub import api_for, hf_env, unique_repo, upload_files
from tests.factories.releases import write_release

A = os.urandom(100_000)
B = os.urandom(50_000)


def _release(folder: Path, repo: str, files: dict[str, bytes], **extra: object) -> Path:
    return write_release(
        folder, files, extra_manifest={"release": {"repo_id": repo, "license": "mit"}, **extra}
    )


def _push(hub: LoopbackHub, manifest: Path, *args: str) -> Result:
    return invoke(["push", str(manifest), "--endpoint", hub.url, *args])


def _plan(api: HfApi, manifest: Path, folder: Path) -> PushPlan:
    """The plan push would make for ``manifest`` against the Hub as it is now."""
    release = load_manifest(manifest)
    return build_plan(release, manifest, folder, read_remote(api, release))


def _published_v1(hub: LoopbackHub, tmp_path: Path) -> tuple[str, Path]:
    """A new repo with a first release (``notes.md: v1``) pushed: its id and release folder."""
    repo = unique_repo()
    folder = tmp_path / "rel"
    assert _push(hub, _release(folder, repo, {"notes.md": b"v1\n"})).exit_code == 0
    return repo, folder


def _head(hub: LoopbackHub, repo: str) -> str:
    return hub.store.resolve(RepoKey("model", repo), "main")


def test_push_then_hf_download_cache_verify_and_checksums_agree(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    manifest = write_release(
        tmp_path / "rel", extra_manifest={"release": {"repo_id": repo, "license": "mit"}}
    )
    result = _push(hub, manifest, "--tag", "v1", "--message", "first release")
    assert result.exit_code == 0, result.stderr
    commit = _head(hub, repo)
    assert f"pushed {commit} to {repo}@main" in result.stderr
    assert result.stdout.strip().splitlines()[-1].startswith(f"OK (remote at {commit}): 5 files")
    assert api_for(hub).list_repo_commits(repo)[0].title == "first release"
    tagged = invoke(["verify", str(manifest), "--remote", "--revision", "v1", "--endpoint", hub.url])
    assert tagged.exit_code == 0 and tagged.stdout.startswith("OK (remote at v1): 5 files")
    env = hf_env(hub, tmp_path / "hf")
    download = run_program(
        ["hf", "download", repo, "--revision", "v1", "--quiet"],
        env=env,
    )
    assert download.returncode == 0, download.stderr
    verify = run_program(["hf", "cache", "verify", repo, "--revision", "v1"], env=env)
    assert verify.returncode == 0, verify.stderr
    checked = api_for(hub).verify_repo_checksums(repo, revision=commit, cache_dir=tmp_path / "hf" / "hub")
    assert checked.checked_count == 6 and not checked.mismatches  # 4 artifacts, manifest, .gitattributes
    cached = (
        tmp_path / "hf" / "hub" / f"models--{repo.replace('/', '--')}" / "snapshots" / commit / "config.json"
    )
    cached.resolve().write_bytes(cached.read_bytes().upper())  # same size, different bytes
    broken = run_program(["hf", "cache", "verify", repo, "--revision", "v1"], env=env)
    assert broken.returncode == 1


def test_dry_run_plans_without_touching_the_hub(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    manifest = _release(tmp_path, repo, {"a.safetensors": A, "notes.md": b"hi\n"})
    result = _push(hub, manifest, "--dry-run", "--json")
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    plan = payload["plan"]
    assert payload["warnings"] == []  # within every Hub limit
    assert plan["parent_commit"] is None and plan["upload_bytes"] == len(A) + 3 + manifest.stat().st_size
    assert [(f["path"], f["status"]) for f in plan["files"]] == [
        ("a.safetensors", "added"),
        ("notes.md", "added"),
        ("hubrelease.yaml", "added"),
    ]
    assert not hub.store.exists(RepoKey("model", repo))


def test_dry_run_text_lists_the_plan_one_line_per_file(hub: LoopbackHub, tmp_path: Path) -> None:
    manifest = _release(tmp_path, unique_repo(), {"a.safetensors": A, "notes [v1].md": b"hi\n"})
    result = _push(hub, manifest, "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert [line.split() for line in result.stdout.splitlines()] == [
        ["status", "path", "size"],
        ["added", "a.safetensors", "97.7", "KiB"],
        ["added", "notes", "[v1].md", "3", "B"],  # brackets are text, not markup
        ["added", "hubrelease.yaml", *human_bytes(manifest.stat().st_size).split()],
    ]


def test_repush_uploads_only_changes_and_deletes_dropped_files(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    folder = tmp_path / "rel"
    assert (
        _push(hub, _release(folder, repo, {"a.safetensors": A, "b.gguf": B, "old.md": b"x\n"})).exit_code == 0
    )
    first = _head(hub, repo)
    (folder / "old.md").unlink()
    changed = os.urandom(len(B))
    manifest = _release(folder, repo, {"a.safetensors": A, "b.gguf": changed})
    hub.requests.clear()
    result = _push(hub, manifest, "--json")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    statuses = {f["path"]: f["status"] for f in payload["plan"]["files"]}
    assert statuses == {"a.safetensors": "unchanged", "b.gguf": "changed", "hubrelease.yaml": "changed"}
    assert [d["path"] for d in payload["plan"]["deleted"]] == ["old.md"]
    assert payload["plan"]["parent_commit"] == first and payload["verify"]["ok"] is True
    sent = hub.requests.bytes_in("xet_xorb")  # chunk data plus chunk headers and the xorb footer
    assert len(changed) <= sent < len(changed) + 1000  # A was not sent again
    assert api_for(hub).file_exists(repo, "old.md") is False
    again = _push(hub, manifest)
    assert again.exit_code == 0 and "nothing to push" in again.stderr


def test_interrupted_push_leaves_remote_as_it_was_and_repush_sends_only_the_rest(
    hub: LoopbackHub, tmp_path: Path, no_backoff_sleep: None, lfs_only: None
) -> None:
    a, b = os.urandom(100_000), os.urandom(50_000)  # fresh: the session Hub must not hold them yet
    repo, folder = _published_v1(hub, tmp_path)
    before = _head(hub, repo)
    tree_before = hub.store.tree(RepoKey("model", repo), "main")[1]
    manifest = _release(folder, repo, {"notes.md": b"v2\n", "a.safetensors": a, "b.gguf": b})
    b_oid = hashlib.sha256(b).hexdigest()
    hub.faults.inject("drop", method="PUT", path=f"/__lfs/{b_oid}", times=1000, after_bytes=1000)
    result = _push(hub, manifest)
    assert result.exit_code == 4  # HubUnavailable: the Hub could not be reached
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: {repo}: batch 1/1 did not upload after 3 attempt(s) (")
    assert last.endswith(
        f"nothing landed: {repo}@main is unchanged at {before[:12]}; re-run push: what the Hub holds "
        "already is not sent again"
    )
    assert _head(hub, repo) == before
    assert hub.store.tree(RepoKey("model", repo), "main")[1] == tree_before
    hub.faults.clear()
    hub.requests.clear()
    result = _push(hub, manifest)
    assert result.exit_code == 0, result.stderr
    assert hub.requests.bytes_in("lfs_upload") == len(b)  # a landed in LFS storage during the failed push
    assert hub.requests.count("commit") == 1


def test_concurrent_pushes_from_one_parent_exactly_one_lands(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    base = _release(tmp_path / "base", repo, {"notes.md": b"base\n"})
    assert _push(hub, base).exit_code == 0
    api = api_for(hub)
    plans = []
    for name, data in (("one", A), ("two", B)):
        manifest = _release(tmp_path / name, repo, {"notes.md": name.encode(), f"{name}.safetensors": data})
        plans.append(_plan(api, manifest, manifest.parent))
    assert plans[0].parent_commit == plans[1].parent_commit
    outcomes: list[PushResult | BaseException] = []
    barrier = threading.Barrier(2)

    def run(index: int) -> None:
        barrier.wait()
        try:
            outcomes.append(push_release(api_for(hub), plans[index], message=f"push {index}"))
        except RemoteMovedError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    landed = [o for o in outcomes if isinstance(o, PushResult)]
    refused = [o for o in outcomes if isinstance(o, RemoteMovedError)]
    assert len(landed) == 1 and len(refused) == 1
    assert landed[0].commit == _head(hub, repo)
    assert len(hub.store.history(RepoKey("model", repo), "main")) == 3  # initial, base, the winner


def test_someone_else_pushing_after_planning_exits_1_with_a_clear_message(
    hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, folder = _published_v1(hub, tmp_path)
    parent = _head(hub, repo)
    real_push = push_release

    def racing_push(*args: object, **kwargs: object) -> PushResult:
        upload_files(api_for(hub), repo, {"theirs.md": b"someone else\n"})  # lands between plan and commit
        return real_push(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(hubrelease.hub.publish, "push_release", racing_push)
    result = _push(hub, _release(folder, repo, {"notes.md": b"v2\n"}))
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {repo}@main moved since the push was planned on {parent[:12]}: someone else pushed; "
        "nothing of this push landed; re-run push to plan again"
    )


def test_rate_limited_commit_waits_as_told_then_lands(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    manifest = _release(tmp_path, repo, {"notes.md": b"v1\n"})
    api = api_for(hub)
    api.create_repo(repo)
    plan = _plan(api, manifest, tmp_path)
    hub.faults.rate_limit(method="POST", path="/commit/", reset=7)
    waits: list[float] = []
    messages: list[str] = []
    result = push_release(api, plan, message="m", notify=messages.append, sleep=waits.append)
    assert result.landed and result.attempts == 2 and waits == [7]
    assert messages[-1] == "rate limited by the Hub: waiting 7s as it asks before retrying (attempt 2 of 3)"
    hub.faults.rate_limit(method="POST", path="/commit/", reset=0)
    cli = _push(hub, _release(tmp_path, repo, {"notes.md": b"v2\n"}))
    assert cli.exit_code == 0
    assert "rate limited by the Hub: waiting 0s as it asks before retrying (attempt 2 of 3)" in cli.stderr


def test_500_after_the_commit_landed_counts_as_landed(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    manifest = _release(tmp_path, repo, {"notes.md": b"v1\n"})
    assert _push(hub, manifest).exit_code == 0
    hub.faults.inject("after", method="POST", path="/commit/", status=500)
    result = _push(hub, _release(tmp_path, repo, {"notes.md": b"v2\n"}))
    assert result.exit_code == 0, result.stderr
    assert "but the commit landed" in result.stderr
    assert len(hub.store.history(RepoKey("model", repo), "main")) == 3  # no duplicate commit


def test_corrupted_upload_is_refused_and_nothing_lands(
    hub: LoopbackHub, tmp_path: Path, lfs_only: None
) -> None:
    repo = unique_repo()
    assert _push(hub, _release(tmp_path, repo, {"notes.md": b"v1\n"})).exit_code == 0
    before = _head(hub, repo)
    hub.faults.inject("corrupt", method="PUT", path="^/__lfs/", times=100)
    fresh = os.urandom(10_000)
    result = _push(hub, _release(tmp_path, repo, {"notes.md": b"v1\n", "a.safetensors": fresh}))
    assert result.exit_code == 4
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(
        f"error: {repo}: HTTP 400: uploaded bytes do not match the LFS object: got sha256 "
    )
    assert last.endswith(f"; nothing landed: {repo}@main is unchanged at {before[:12]}")
    assert _head(hub, repo) == before


def test_create_pr_leaves_main_alone(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    assert _push(hub, _release(tmp_path, repo, {"notes.md": b"v1\n"})).exit_code == 0
    main = _head(hub, repo)
    result = _push(hub, _release(tmp_path, repo, {"notes.md": b"v2\n"}), "--create-pr", "--json")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["result"]["pr_revision"] == "refs/pr/1" and payload["result"]["pr_url"].endswith(
        "/discussions/1"
    )
    assert payload["verify"]["ok"] is True
    assert _head(hub, repo) == main


def test_preflight_refuses_local_drift(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    manifest = _release(tmp_path / "b", repo, {"notes.md": b"x\n"})
    (tmp_path / "b" / "notes.md").write_bytes(b"y\n")
    result = _push(hub, manifest)
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        f"error: {manifest}: local verify found 1 problem(s), first: notes.md: sha256 mismatch: expected "
        f"{hashlib.sha256(b'x' + bytes([10])).hexdigest()}, got {hashlib.sha256(b'y' + bytes([10])).hexdigest()}; "
        "run `hubrelease verify`"
    )
    assert not hub.store.exists(RepoKey("model", repo))


def test_remote_drift_after_push_makes_verify_remote_exit_1(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    manifest = _release(tmp_path, repo, {"a.safetensors": A, "notes.md": b"n\n"})
    assert _push(hub, manifest).exit_code == 0
    hub.store.replace_file(RepoKey("model", repo), "main", "a.safetensors", bytes(reversed(A)))
    result = invoke(["verify", str(manifest), "--remote", "--endpoint", hub.url])
    assert result.exit_code == 1
    rows = [line.split() for line in result.stdout.splitlines()]
    assert ["error", "digest_mismatch", "a.safetensors"] in [row[:3] for row in rows]


def test_token_is_sent_but_never_printed(
    hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "hf_" + "S3CR3T" * 6
    monkeypatch.setenv("HF_TOKEN", secret)
    repo = unique_repo()
    ok = _push(hub, _release(tmp_path, repo, {"notes.md": b"v1\n"}), "--json")
    hub.faults.inject("status", method="POST", path="/commit/", status=403)
    refused = _push(hub, _release(tmp_path, repo, {"notes.md": b"v2\n"}))
    assert ok.exit_code == 0 and refused.exit_code == 4
    assert refused.stderr.strip().splitlines()[-1] == (
        f"error: {repo}: the Hub refused the token (HTTP 403: injected HTTP 403); check --token / HF_TOKEN "
        f"and its write access; nothing landed: {repo}@main is unchanged at {json.loads(ok.stdout)['result']['commit'][:12]}"
    )
    for result in (ok, refused):
        assert "S3CR3T" not in result.stdout + result.stderr


def test_existing_tag_stops_the_push_before_anything_lands(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    folder = tmp_path / "rel"
    assert _push(hub, _release(folder, repo, {"notes.md": b"v1\n"}), "--tag", "v1").exit_code == 0
    tagged = _head(hub, repo)
    again = _push(hub, _release(folder, repo, {"notes.md": b"v1\n"}), "--tag", "v1")
    assert again.exit_code == 0, again.stderr  # re-running a finished release job is fine
    hub.requests.clear()
    result = _push(hub, _release(folder, repo, {"notes.md": b"v2\n"}), "--tag", "v1")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {repo}: tag 'v1' already exists on {tagged[:12]}; nothing was pushed; "
        "choose another tag or delete that one"
    )
    assert _head(hub, repo) == tagged and hub.requests.count("commit") == 0


def test_someone_else_landing_while_a_lost_attempt_retries_is_not_taken_for_ours(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo, folder = _published_v1(hub, tmp_path)
    manifest = _release(folder, repo, {"notes.md": b"v2\n"})
    api = api_for(hub)
    plan = _plan(api, manifest, folder)

    class LostThenRaced(HfApi):
        def create_commit(self, *args: Any, **kwargs: Any) -> Any:  # forwards every overload
            hub.faults.inject("drop", method="POST", path="/commit/", after_bytes=10)
            try:
                return super().create_commit(*args, **kwargs)
            finally:  # our attempt is lost; theirs lands before we look at the branch again
                upload_files(api, repo, {"theirs.md": b"someone else\n"})

    theirs_later = LostThenRaced(endpoint=hub.url, token=False)
    with pytest.raises(RemoteMovedError, match="and that commit is not this release: someone else pushed"):
        push_release(theirs_later, plan, message="m", tag="v2", sleep=lambda _: None)
    assert [t.name for t in api.list_repo_refs(repo).tags] == []


def test_a_failure_after_the_commit_landed_says_the_release_is_published(
    hub: LoopbackHub, tmp_path: Path, no_backoff_sleep: None
) -> None:
    repo = unique_repo()
    hub.faults.inject("status", route="tree", status=500, times=6)  # the listing retries 5 times
    result = _push(hub, _release(tmp_path, repo, {"notes.md": b"v1\n"}))
    assert result.exit_code == 4
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {_head(hub, repo)} is on the Hub at {repo}@main, but the remote verify failed: {repo}: "
        "HTTP 500: "
        "injected HTTP 500"
    )


def test_retry_refused_by_our_own_late_landing_counts_as_landed(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    folder = tmp_path / "rel"
    assert _push(hub, _release(folder, repo, {"notes.md": b"v1\n", "old.md": b"x\n"})).exit_code == 0
    (folder / "old.md").unlink()
    manifest = _release(folder, repo, {"notes.md": b"v2\n"})
    api = api_for(hub)
    plan = _plan(api, manifest, folder)
    assert [f.path for f in plan.deleted] == ["old.md"]  # a deletion is always sent, so the retry gets 412
    hub.faults.inject("status", method="POST", path="/commit/", status=504)

    def server_finishes_the_first_attempt(_: float) -> None:  # after our check, before the retry
        push_release(api_for(hub), plan, message="late", verify=False)

    messages: list[str] = []
    result = push_release(
        api, plan, message="m", notify=messages.append, sleep=server_finishes_the_first_attempt
    )
    assert result.landed and result.attempts == 2 and result.commit == _head(hub, repo)
    assert messages[-1] == f"an earlier attempt landed after all: {repo}@main is at {result.commit[:12]}"
    assert result.report is not None and not result.report.has_drift
    assert len(hub.store.history(RepoKey("model", repo), "main")) == 3  # initial, v1, v2 once


def test_commit_in_progress_409_backs_off_and_lands(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    manifest = _release(tmp_path, repo, {"notes.md": b"v1\n"})
    api = api_for(hub)
    api.create_repo(repo)
    plan = _plan(api, manifest, tmp_path)
    hub.faults.commit_in_progress(times=2)
    waits: list[float] = []
    messages: list[str] = []
    result = push_release(api, plan, message="m", notify=messages.append, sleep=waits.append)
    assert result.landed and result.attempts == 3 and waits == [2, 4]
    assert messages[0].startswith("upload: 2 file(s), ")  # the card and the manifest
    assert messages[2].startswith("the Hub is landing another commit on this repo (HTTP 409: Another commit")


@pytest.mark.parametrize(
    ("inject", "exit_code", "last_line"),
    [
        (
            lambda hub: hub.faults.forbidden(route="preupload"),
            4,
            "error: {repo}: the Hub refused the token (HTTP 403: You don't have the rights to do this on this "
            "repository.); check --token / HF_TOKEN and its write access; nothing landed: {repo}@main is "
            "unchanged at {head}",
        ),
        (
            lambda hub: hub.faults.yaml_refusal(),
            2,
            'error: README.md: {repo}: the Hub refused README.md\'s metadata: Invalid metadata: "license" must be '
            "one of [...]; nothing landed: {repo}@main is unchanged at {head}",
        ),
        (
            lambda hub: hub.faults.bad_gateway(times=3),
            4,
            "error: {repo}: push did not land after 3 attempt(s) (Expecting value: line 1 column 1 (char 0)); "
            "nothing landed: {repo}@main is unchanged at {head}; re-run push: what the Hub holds already is "
            "not sent again",
        ),
    ],
    ids=["403", "validate-yaml-400", "validate-yaml-502-html"],
)
def test_refusals_are_one_line_saying_nothing_landed(
    hub: LoopbackHub, tmp_path: Path, inject: Any, exit_code: int, last_line: str
) -> None:
    repo = unique_repo()
    folder = tmp_path / "rel"
    assert _push(hub, _release(folder, repo, {"README.md": b"---\nlicense: mit\n---\nv1\n"})).exit_code == 0
    head = _head(hub, repo)
    inject(hub)
    result = _push(hub, _release(folder, repo, {"README.md": b"---\nlicense: mit\n---\nv2\n"}))
    assert result.exit_code == exit_code, result.stderr
    assert result.stderr.strip().splitlines()[-1] == last_line.format(repo=repo, head=head[:12])
    assert _head(hub, repo) == head


class XetFailing(HfApi):
    """hf_xet's failures are built-in exceptions raised from inside the upload (no HTTP status)."""

    def __init__(self, hub: LoopbackHub, errors: list[BaseException]) -> None:
        super().__init__(endpoint=hub.url, token=False)
        self.errors = errors

    def preupload_lfs_files(self, *args: Any, **kwargs: Any) -> None:
        if self.errors:
            raise self.errors.pop(0)
        super().preupload_lfs_files(*args, **kwargs)


def test_xet_errors_are_retried_or_refused_with_exit_4_never_exit_2(
    hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import hf_xet

    repo, folder = _published_v1(hub, tmp_path)
    head = _head(hub, repo)
    manifest = _release(folder, repo, {"notes.md": b"v2\n", "a.safetensors": os.urandom(5000)})
    dropped = ConnectionError("xorb upload: connection reset by peer")
    monkeypatch.setattr(hubrelease.hub.client, "hub_api", lambda *a, **k: XetFailing(hub, [dropped]))
    retried = _push(hub, manifest)
    assert retried.exit_code == 0, retried.stderr
    assert (
        "upload of batch 1/1 was lost (xorb upload: connection reset by peer); retrying (attempt 2 of 3)"
        in retried.stderr
    )
    assert _head(hub, repo) != head
    head = _head(hub, repo)
    refused = hf_xet.XetAuthenticationError("token expired")
    monkeypatch.setattr(hubrelease.hub.client, "hub_api", lambda *a, **k: XetFailing(hub, [refused]))
    result = _push(hub, _release(folder, repo, {"notes.md": b"v3\n", "a.safetensors": b"x"}))
    assert result.exit_code == 4, result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {repo}: Xet storage refused the write token (token expired); nothing landed: "
        f"{repo}@main is unchanged at {head[:12]}"
    )
    assert _head(hub, repo) == head


def test_retries_reuse_the_digests_nothing_is_hashed_by_the_client(
    hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_backoff_sleep: None
) -> None:
    repo = unique_repo()
    manifest = _release(tmp_path, repo, {"a.safetensors": os.urandom(300_000), "b.gguf": os.urandom(20_000)})
    hashed: list[object] = []
    real = sha256_file

    def client_sha(fileobj: object, *args: object) -> bytes:
        hashed.append(fileobj)
        return b""

    def plan_sha(fd: int) -> str:  # plan hashes an open descriptor (never a path a symlink could redirect)
        hashed.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real(fd)

    monkeypatch.setattr("huggingface_hub.lfs.sha_fileobj", client_sha)
    monkeypatch.setattr("hubrelease.hub.plan.sha256_file", plan_sha)
    hub.faults.inject("status", route="commit", status=503, times=1)
    result = _push(hub, manifest)
    assert result.exit_code == 0, result.stderr
    assert "commit attempt 1 was lost (HTTP 503" in result.stderr
    # Only the two files no manifest pins (the manifest itself, the card) are hashed, once each.
    assert [Path(str(p)).name for p in hashed] == ["hubrelease.yaml"]


def test_a_file_changed_after_planning_commits_nothing_and_is_named(hub: LoopbackHub, tmp_path: Path) -> None:
    repo, folder = _published_v1(hub, tmp_path)
    head = _head(hub, repo)
    weights = os.urandom(10_000)
    manifest = _release(folder, repo, {"notes.md": b"v1\n", "a.safetensors": weights})
    api = api_for(hub)
    plan = _plan(api, manifest, folder)
    hub.requests.clear()
    (folder / "a.safetensors").write_bytes(bytes(reversed(weights)))  # same size, other bytes
    with pytest.raises(CheckFailed, match=r"a\.safetensors: changed on disk since its sha256 was checked"):
        push_release(api, plan, message="m")

    class ChangesDuringUpload(HfApi):
        def preupload_lfs_files(self, *args: Any, **kwargs: Any) -> None:
            super().preupload_lfs_files(*args, **kwargs)
            (folder / "a.safetensors").write_bytes(bytes(reversed(weights)))

    (folder / "a.safetensors").write_bytes(weights)
    plan = _plan(api, manifest, folder)
    with pytest.raises(CheckFailed, match="nothing was committed"):
        push_release(ChangesDuringUpload(endpoint=hub.url, token=False), plan, message="m")
    assert _head(hub, repo) == head and hub.requests.count("commit") == 0


def test_create_pr_after_main_moved_opens_the_pr_from_the_planned_parent(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo, folder = _published_v1(hub, tmp_path)
    manifest = _release(folder, repo, {"notes.md": b"v2\n"})
    api = api_for(hub)
    plan = _plan(api, manifest, folder)
    upload_files(api, repo, {"theirs.md": b"someone else\n"})  # main moves after planning
    result = push_release(api, plan, message="m", create_pr=True)
    assert result.landed and result.pr_revision == "refs/pr/1"
    assert result.report is not None and not result.report.has_drift


@pytest.mark.parametrize("fault", ["refuse_shard", "drop_xorb"])
def test_real_xet_failures_end_in_one_line_and_exit_4(hub: LoopbackHub, tmp_path: Path, fault: str) -> None:
    repo, folder = _published_v1(hub, tmp_path)
    head = _head(hub, repo)
    if fault == "refuse_shard":
        hub.faults.refuse_shard(times=1000)
    else:
        hub.faults.drop_xorb(times=1000)
    result = _push(hub, _release(folder, repo, {"notes.md": b"v1\n", "w.safetensors": os.urandom(70_000)}))
    assert result.exit_code == 4, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: {repo}: batch 1/1 did not upload after 3 attempt(s) (")
    assert last.endswith(
        f"nothing landed: {repo}@main is unchanged at {head[:12]}; re-run push: what the Hub holds "
        "already is not sent again"
    )
    assert _head(hub, repo) == head


def test_visibility_new_repo_is_created_as_stated_and_never_flipped(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    manifest = _release(tmp_path / "a", repo, {"notes.md": b"v1\n"})
    created = _push(hub, manifest, "--private", "--token", hub.owner_token)  # private repos need a token
    assert created.exit_code == 0, created.stderr
    assert f"created private repo {repo}" in created.stderr
    assert api_for(hub).model_info(repo).private is True
    refused = _push(
        hub, _release(tmp_path / "a", repo, {"notes.md": b"v2\n"}), "--public", "--token", hub.owner_token
    )
    assert refused.exit_code == 2
    assert (
        refused.stderr.strip()
        .splitlines()[-1]
        .startswith(f"error: release.private: {repo} is private on the Hub but this push asks for public")
    )
    assert "nothing was pushed" in refused.stderr and api_for(hub).model_info(repo).private is True
    public = unique_repo()
    release = {"repo_id": public, "license": "mit", "private": False}
    from_manifest = write_release(tmp_path / "b", {"notes.md": b"v1\n"}, extra_manifest={"release": release})
    result = _push(hub, from_manifest, "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["result"]["created"] == "public"
    assert api_for(hub).model_info(public).private is False


def test_revision_pushes_to_a_new_branch_created_from_main(hub: LoopbackHub, tmp_path: Path) -> None:
    repo, folder = _published_v1(hub, tmp_path)
    main = _head(hub, repo)
    result = _push(hub, _release(folder, repo, {"notes.md": b"rc\n"}), "--revision", "rc1")
    assert result.exit_code == 0, result.stderr
    assert f"on {main[:12]} (new branch 'rc1' from it)" in result.stderr
    assert _head(hub, repo) == main
    key = RepoKey("model", repo)
    assert len(hub.store.history(key, "rc1")) == len(hub.store.history(key, "main")) + 1
    assert api_for(hub).hf_hub_download(repo, "notes.md", revision="rc1", local_dir=tmp_path / "dl")
    assert (tmp_path / "dl" / "notes.md").read_bytes() == b"rc\n"


def test_quiet_prints_only_the_result(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    result = _push(hub, _release(tmp_path, repo, {"notes.md": b"v1\n"}), "-q")
    assert result.exit_code == 0
    assert result.stderr == ""
    assert result.stdout.strip().splitlines()[-1].startswith("OK (remote at")


def test_a_5xx_then_an_unreadable_hub_says_the_outcome_is_unknown_not_a_bare_500(
    hub: LoopbackHub, tmp_path: Path, no_backoff_sleep: None
) -> None:
    repo, folder = _published_v1(hub, tmp_path)
    head = _head(hub, repo)
    hub.faults.inject("status", route="tree", status=500, times=100)
    planning = _push(hub, _release(folder, repo, {"notes.md": b"v2\n"}))
    assert planning.exit_code == 4
    assert planning.stderr.strip().splitlines()[-1] == (
        f"error: {repo}: HTTP 500: injected HTTP 500; nothing was pushed"
    )
    hub.faults.clear()
    manifest = _release(folder, repo, {"notes.md": b"v2\n"})
    plan = _plan(api_for(hub), manifest, folder)
    hub.faults.inject("after", route="commit", status=500)  # the commit lands, the answer is a 500
    hub.faults.inject("status", route="tree", status=500, times=100)  # and the tree cannot be read
    with pytest.raises(HubUnavailable) as raised:
        push_release(api_for(hub), plan, message="m", sleep=lambda _: None)
    assert str(raised.value) == (
        f"{repo}: a push attempt failed (HTTP 500: injected HTTP 500) and the Hub could not be read back "
        f"({repo}: HTTP 500: injected HTTP 500); whether the commit landed is unknown: run "
        "`hubrelease verify --remote`"
    )
    assert _head(hub, repo) != head  # it had landed
