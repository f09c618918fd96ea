"""`pull --check REPO@COMMIT`: a consumer's pin against the branch's head, with what changed and whether
the target still pairs; nothing is downloaded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hubrelease_loopback import LoopbackHub, RepoKey
from hubrelease_loopback.faults import FILE_ROUTES
from tests.factories.cli import invoke
from tests.factories.published import publish_example


def _check(hub: LoopbackHub, *args: str) -> tuple[int, dict[str, Any], str]:
    result = invoke(["pull", *args, "--check", "--endpoint", hub.url, "--json"])
    return result.exit_code, json.loads(result.stdout or "{}"), result.stderr


def test_an_unmoved_pin_is_exit_0(hub: LoopbackHub, tmp_path: Path) -> None:
    example = publish_example(hub, tmp_path)
    code, report, err = _check(hub, f"{example.repo}@{example.commit}")
    assert code == 0, err
    assert report["moved"] is False and report["head"] == example.commit and report["branch"] == "main"


def test_a_moved_release_names_the_new_commit_the_changed_files_and_the_pairing(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    example = publish_example(hub, tmp_path)
    head = hub.store.replace_file(RepoKey("model", example.repo), "main", "model.safetensors", b"\0" * 10)
    hub.requests.clear()
    code, report, _ = _check(hub, f"{example.repo}@{example.commit}", "--target", str(example.target))
    assert code == 1
    assert (report["pinned"], report["head"], report["moved"]) == (example.commit, head, True)
    assert [(f["change"], f["path"]) for f in report["files"]] == [("changed", "model.safetensors")]
    assert report["pairing"]["ok"] is True
    weights = [r for r in hub.requests.on(FILE_ROUTES) if r.path.endswith(".safetensors")]
    assert weights == []


def test_check_needs_the_pinned_commit(hub: LoopbackHub, tmp_path: Path) -> None:
    example = publish_example(hub, tmp_path)
    result = invoke(["pull", f"{example.repo}@main", "--check", "--endpoint", hub.url])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --check compares the commit you pinned with its branch")
