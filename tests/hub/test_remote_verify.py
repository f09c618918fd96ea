"""Remote verify against the loopback Hub: clean, drift on the Hub, pins that moved or vanished."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from hubrelease.cli import output
from hubrelease.hub import client
from hubrelease.hub.remote_verify import verify_remote
from hubrelease.manifest import load_manifest
from hubrelease_loopback import LoopbackHub, RepoKey
from hubrelease_loopback.faults import FILE_ROUTES
from tests.factories.cli import invoke
from tests.factories.hub import api_for, unique_repo, upload_files, upload_release
from tests.factories.releases import write_release

TARGET_FILES = {"model-00001-of-00002.safetensors": b"\x01" * 3000, "config.json": b'{"hidden_size": 8}\n'}


def _release(tmp_path: Path, repo: str, pins: dict[str, object] | None = None) -> Path:
    extra: dict[str, object] = {"release": {"repo_id": repo, "license": "apache-2.0"}}
    if pins:
        extra["pins"] = pins
    return write_release(tmp_path / "release", extra_manifest=extra)


def test_published_release_verifies_clean_from_repo_info_and_the_tree(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo = unique_repo()
    manifest = _release(tmp_path, repo)
    commit = upload_release(api_for(hub), repo, manifest.parent, manifest)
    hub.requests.clear()
    report = verify_remote(
        load_manifest(manifest), api_for(hub), manifest_path=manifest, root=manifest.parent
    )
    assert report.errors == []
    assert [f.kind for f in report.findings] == []
    assert report.extra["commit"] == commit
    assert [(c.path, c.status) for c in report.files] == [
        ("model.safetensors", "ok"),
        ("config.json", "ok"),
        ("sub/dir/notes.md", "ok"),
        ("empty.bin", "ok"),
        ("hubrelease.yaml", "ok"),  # the manifest, compared by git blob id with the local one
    ]
    # repo info + the recursive tree: 6 files (4 artifacts, manifest, .gitattributes), 4 per page here
    assert hub.requests.count() == 3 and hub.requests.count("tree") == 2
    assert hub.requests.bytes_out(FILE_ROUTES) == 0


def test_file_replaced_on_the_hub_makes_verify_remote_exit_1(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    manifest = _release(tmp_path, repo)
    upload_release(api_for(hub), repo, manifest.parent, manifest)
    hub.store.replace_file(RepoKey("model", repo), "main", "model.safetensors", b"\x00" * 4096 + b"WEIGHTS")
    hub.store.replace_file(
        RepoKey("model", repo), "main", "config.json", b'{"architectures": ["DFlashDraftModeX"]}\n'
    )
    endpoint = ["--endpoint", hub.url]
    result = invoke(["verify", str(manifest), "--remote", "--json", *endpoint])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["mode"] == "remote" and report["ok"] is False
    kinds = {(f["kind"], f["path"]) for f in report["findings"]}
    assert kinds == {("digest_mismatch", "model.safetensors"), ("digest_mismatch", "config.json")}
    human = invoke(["verify", str(manifest), "--remote", *endpoint])
    assert human.exit_code == 1
    assert "model.safetensors" in human.stdout
    assert human.stdout.strip().splitlines()[-1].startswith("DRIFT (remote at main): 2 problem(s)")


def test_missing_and_unlisted_files_on_the_hub(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    manifest = _release(tmp_path, repo)
    upload_files(
        api_for(hub), repo, {"model.safetensors": (manifest.parent / "model.safetensors").read_bytes()}
    )
    upload_files(api_for(hub), repo, {"stray.txt": b"x"})
    report = verify_remote(
        load_manifest(manifest), api_for(hub), manifest_path=manifest, root=manifest.parent
    )
    assert sorted((f.kind, f.path) for f in report.errors) == [
        ("missing", "config.json"),
        ("missing", "empty.bin"),
        ("missing", "hubrelease.yaml"),
        ("missing", "sub/dir/notes.md"),
        ("unlisted", "stray.txt"),
    ]


def test_pins_checked_for_existence_size_and_digest(hub: LoopbackHub, tmp_path: Path) -> None:
    target = unique_repo("target")
    api = api_for(hub)
    commit = upload_files(api, target, TARGET_FILES)
    shard = TARGET_FILES["model-00001-of-00002.safetensors"]
    good = {
        "repo_id": target,
        "revision": commit,
        "files": [
            {
                "path": "model-00001-of-00002.safetensors",
                "size": 3000,
                "sha256": hashlib.sha256(shard).hexdigest(),
            }
        ],
    }
    mutable = {
        "repo_id": target,
        "revision": "main",
        "unpinned": True,
        "files": [{"path": "config.json", "size": 19}],
    }
    gone = {"repo_id": target, "revision": "f" * 40}
    repo = unique_repo()
    manifest = _release(tmp_path, repo, {"targets": [good, mutable, gone]})
    upload_release(api, repo, manifest.parent, manifest)
    upload_files(api, target, {"config.json": b'{"hidden_size": 16, "x": 1}\n'})  # the mutable pin drifts
    report = verify_remote(load_manifest(manifest), api, manifest_path=manifest, root=manifest.parent)
    assert sorted((f.kind, f.path) for f in report.errors) == [
        ("revision_missing", f"{target}@ffffffffffff"),
        ("size_mismatch", f"{target}@main:config.json"),
    ]
    assert report.extra["pins_checked"] == 3


def test_truncated_siblings_hide_nothing_from_verify_remote(hub: LoopbackHub, tmp_path: Path) -> None:
    repo = unique_repo()
    manifest = _release(tmp_path, repo)
    upload_release(api_for(hub), repo, manifest.parent, manifest)
    upload_files(api_for(hub), repo, {"zz/stray.bin": b"unlisted"})
    hub.faults.truncate_siblings(2)  # repo_info lists 2 of 7 files, as the Hub does for big repos
    assert len(api_for(hub).model_info(repo).siblings or []) == 2
    report = verify_remote(
        load_manifest(manifest), api_for(hub), manifest_path=manifest, root=manifest.parent
    )
    assert [(f.kind, f.path) for f in report.errors] == [("unlisted", "zz/stray.bin")]
    assert [c.status for c in report.files] == ["ok"] * 5


def test_rate_limited_metadata_reads_wait_as_told_then_retry(
    hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = unique_repo()
    manifest = _release(tmp_path, repo)
    upload_release(api_for(hub), repo, manifest.parent, manifest)
    waits: list[float] = []
    monkeypatch.setattr(client, "sleep", waits.append)
    hub.faults.rate_limit(route="repo_info", reset=7)
    result = invoke(["verify", str(manifest), "--remote", "--endpoint", hub.url])
    assert result.exit_code == 0, result.stderr
    assert waits[0] == 7 and hub.faults.pending == []
    assert "rate limited" not in result.stderr  # announced only on a terminal: a log keeps one line a case
    hub.faults.rate_limit(route="repo_info", reset=200, times=10)
    refused = invoke(["verify", str(manifest), "--remote", "--endpoint", hub.url])
    assert refused.exit_code == 4
    (line,) = refused.stderr.strip().splitlines()  # the wait it made is counted in the one line
    assert line.endswith("(rate limited 2 times: waited 200s, the Hub asks for 200s more)")
    hub.faults.clear()
    monkeypatch.setattr(output, "interactive", lambda json_mode=False: True)  # someone watches stderr
    hub.faults.rate_limit(route="repo_info", reset=7)
    watched = invoke(["verify", str(manifest), "--remote", "--endpoint", hub.url])
    assert watched.exit_code == 0
    assert f"rate limited by the Hub ({repo}): waiting 7s before retrying" in watched.stderr
