"""Push preflight: honest unpinned pins are published; an unmarked branch and unpinned cards are not;
pins the Hub does not hold as pinned are refused before anything is written (loopback Hub, real client)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

import hubrelease.lint.drafter as drafter
from hubrelease.errors import CheckFailed
from hubrelease.manifest import load_manifest
from hubrelease.manifest.models import Manifest, PinnedRepo, Pins
from hubrelease.verify.preflight import preflight, unpinned_revisions
from hubrelease_loopback import LoopbackHub, RepoKey
from tests.factories.cli import run_cli
from tests.factories.drafters import write_ik_mixed_gguf
from tests.factories.hub import api_for, unique_repo, upload_files
from tests.factories.releases import example_release, write_release

# Routes that write: none may be reached by a refused push.
WRITES = {
    "repo_create",
    "preupload",
    "commit",
    "branch",
    "tag",
    "lfs_batch",
    "lfs_upload",
    "xet_xorb",
    "xet_shard",
}
TARGET = {"model-00001-of-00002.gguf": b"\x01" * 3000, "config.json": b"{}\n"}


def test_marked_pins_pass_and_an_unmarked_branch_is_refused(tmp_path: Path) -> None:
    pins = {"targets": [{"repo_id": "acme/target", "revision": "main", "unpinned": True, "files": [
        {"path": "t-00001-of-00002.gguf", "size": 10}, {"path": "t-00002-of-00002.gguf", "size": 11}]}]}  # fmt: skip
    manifest = write_release(tmp_path, {"a.bin": b"a"}, extra_manifest={"pins": pins})
    release = load_manifest(manifest)
    assert unpinned_revisions(release) == []
    preflight(release, manifest, tmp_path)  # no `lock` needed: the card states what it is
    # The models refuse an unmarked branch; one built in code is refused by preflight too.
    branch = PinnedRepo.model_construct(repo_id="acme/target", revision="main", unpinned=False)
    built = release.model_copy(update={"pins": Pins.model_construct(targets=[branch])})
    assert isinstance(built, Manifest) and unpinned_revisions(built) == ["acme/target@main"]
    with pytest.raises(CheckFailed, match="unpinned revision"):
        preflight(built, manifest, tmp_path)


def test_a_readme_neither_rendered_nor_pinned_is_not_published(tmp_path: Path) -> None:
    manifest = write_release(tmp_path, {"a.bin": b"a"})
    (tmp_path / "README.md").write_text("# hand-written, not pinned\n")
    with pytest.raises(CheckFailed, match="neither rendered by render-card nor pinned"):
        preflight(load_manifest(manifest), manifest, tmp_path)


def _target(hub: LoopbackHub) -> tuple[str, str]:
    repo = unique_repo("target")
    return repo, upload_files(api_for(hub), repo, TARGET)


def _pin(repo: str, commit: str, **file: object) -> dict[str, object]:
    shard = {"path": "model-00001-of-00002.gguf", "size": 3000, **file}
    return {"repo_id": repo, "revision": commit, "files": [shard]}


def _writes(hub: LoopbackHub) -> list[str]:
    return [r.route for r in hub.requests.records if r.route in WRITES]


def _refused(hub: LoopbackHub, tmp_path: Path, pin: dict[str, object], repo: str | None = None) -> str:
    """Push (and --dry-run) a release pinning ``pin``: both refused with exit 1; returns the error line."""
    repo = repo or unique_repo()
    manifest = write_release(
        tmp_path / "rel",
        {"a.bin": b"a"},
        extra_manifest={"release": {"repo_id": repo, "license": "mit"}, "pins": {"targets": [pin]}},
    )
    lines = []
    for extra in (("--dry-run",), ()):
        hub.requests.clear()
        code, out, err = run_cli("push", manifest, "--endpoint", hub.url, *extra)
        assert (code, out) == (1, ""), err
        assert _writes(hub) == []
        lines.append(err.strip())
    assert lines[0] == lines[1] and len(lines[0].splitlines()) == 1
    return lines[0]


def test_a_pinned_repo_that_does_not_exist_refuses_the_push_before_the_repo_is_created(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo = unique_repo()
    error = _refused(hub, tmp_path, {"repo_id": "acme/not-published", "revision": "f" * 40}, repo)
    assert error == (
        "error: pins: 1 pin(s) not on the Hub as pinned: acme/not-published@ffffffffffff: acme/not-published: "
        "repository not found; publish that repo first, or correct the pin's repo_id / revision (`hubrelease "
        "lock` records the commit a branch points to); nothing was pushed"
    )
    assert not hub.store.exists(RepoKey("model", repo))


def test_a_missing_revision_or_file_and_a_wrong_size_are_refused_on_an_existing_repo(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    target, commit = _target(hub)
    repo = unique_repo()
    before = upload_files(api_for(hub), repo, {"old.md": b"v0\n"})
    gone = _refused(hub, tmp_path / "1", {"repo_id": target, "revision": "e" * 40}, repo)
    assert (
        f"{target}@eeeeeeeeeeee: {target}: revision 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee' not found"
        in gone
    )
    missing = _refused(
        hub, tmp_path / "2", {**_pin(target, commit), "files": [{"path": "nope.gguf", "size": 1}]}, repo
    )
    assert (
        f"{target}@{commit[:12]}:nope.gguf: file is not on the Hub; correct the file's path in the pin"
        in missing
    )
    wrong = _refused(hub, tmp_path / "3", _pin(target, commit, size=2999), repo)
    assert (
        ":model-00001-of-00002.gguf: size mismatch on the Hub: expected 2999 bytes, got 3000; the repo no longer"
        in wrong
    )
    digest = _refused(hub, tmp_path / "4", _pin(target, commit, sha256="0" * 64), repo)
    assert "sha256 mismatch on the Hub" in digest
    assert hub.store.resolve(RepoKey("model", repo), "main") == before  # no commit, no branch
    assert list(hub.store.refs(RepoKey("model", repo))["branches"]) == ["main"]


def test_pins_as_the_hub_holds_them_push_unpinned_ones_at_their_branch_head(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    target, commit = _target(hub)
    sha = hashlib.sha256(TARGET["model-00001-of-00002.gguf"]).hexdigest()
    mutable = {
        "repo_id": target,
        "revision": "main",
        "unpinned": True,
        "files": [{"path": "config.json", "size": 3}],
    }
    repo = unique_repo()
    pins = {"targets": [_pin(target, commit, sha256=sha), mutable]}
    manifest = write_release(
        tmp_path,
        {"a.bin": b"a"},
        extra_manifest={"release": {"repo_id": repo, "license": "mit"}, "pins": pins},
    )
    code, out, err = run_cli("push", manifest, "--endpoint", hub.url, "--json")
    assert code == 0, err
    assert json.loads(out)["verify"]["pins_checked"] == 2


def test_a_licence_conflict_is_not_published(tmp_path: Path) -> None:
    pins = {"datasets": [{"repo_id": "acme/nc", "revision": "a" * 40, "license": "cc-by-nc-4.0"}]}
    manifest = write_release(tmp_path, {"a.bin": b"a"}, extra_manifest={"pins": pins})
    with pytest.raises(
        CheckFailed, match=re.escape("the release's apache-2.0 vs dataset acme/nc's cc-by-nc-4.0")
    ):
        preflight(load_manifest(manifest), manifest, tmp_path)


def _counted_lint(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The GGUF files drafter lint reads from now on (``lint_gguf`` is what both lint paths call)."""
    linted: list[str] = []
    real = drafter.lint_gguf

    def counted(*args: Any, **kwargs: Any) -> Any:
        linted.append("gguf")
        return real(*args, **kwargs)

    monkeypatch.setattr(drafter, "lint_gguf", counted)
    return linted


def test_a_linted_artifact_is_linted_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """verify lints each ``lint: true`` artifact (the example's GGUF): preflight does not read it again."""
    path = example_release(tmp_path, "acme/linted")
    assert run_cli("render-card", path, "--force")[0] == 0  # its card names the new repo
    linted = _counted_lint(monkeypatch)
    preflight(load_manifest(path), path, path.parent)
    assert linted == ["gguf"]


def test_a_lint_error_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gguf = write_ik_mixed_gguf(tmp_path / "drafter-q4.gguf")  # no dflash metadata: lint errors
    data = gguf.read_bytes()
    artifact = {
        "path": gguf.name,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "lint": True,
    }
    path = tmp_path / "hubrelease.yaml"
    manifest = {"schema_version": 1, "release": {"repo_id": "a/b", "license": "mit"}, "artifacts": [artifact]}
    path.write_text(json.dumps(manifest), encoding="utf-8")
    linted = _counted_lint(monkeypatch)
    with pytest.raises(CheckFailed, match=r"local verify found \d+ problem\(s\), first: drafter-q4.gguf: "):
        preflight(load_manifest(path), path, tmp_path)
    assert linted == ["gguf"]
