"""`hubrelease init`, `add`, `rm` and `import` end to end: output lines, exact errors, exit codes."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import get_args

import pytest

from hubrelease.cli.add import RoleChoice
from hubrelease.hashing import sha256_file
from hubrelease.manifest.models import ArtifactRole
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import run_cli
from tests.factories.hub import api_for
from tests.factories.onboarding import deny_reading, publish_author_folder, write_author_folder


def test_add_role_choices_are_the_manifest_roles() -> None:
    assert get_args(RoleChoice) == get_args(ArtifactRole)


def test_init_then_verify_passes(tmp_path: Path) -> None:
    root = write_author_folder(tmp_path / "rel")
    code, out, err = run_cli("init", root, "--repo-id", "acme/tiny")
    assert code == 0, err
    weights = (root / "weights/checkpoint-0.safetensors").stat().st_size
    assert f"recommended {weights:>14}  weights/checkpoint-0.safetensors" in out.splitlines()
    assert (
        err.splitlines()[-1] == f"wrote {root / 'hubrelease.yaml'}: 6 artifact(s), 1 evaluation(s), 4 ignored"
    )
    assert (
        "warning: LINK.md: is a symlink; not published (verify refuses symlinks); skipped and listed under ignore"
        in err
    )
    code, out, _ = run_cli("verify", root / "hubrelease.yaml")
    assert code == 0
    assert out.startswith("OK (local): 9 files: hubrelease.yaml and the 8 it pins")


def test_init_refuses_to_overwrite(tmp_path: Path) -> None:
    root = write_author_folder(tmp_path / "rel")
    assert run_cli("init", root)[0] == 0
    code, out, err = run_cli("init", root)
    assert (code, out) == (2, "")
    assert err == f"error: {root / 'hubrelease.yaml'}: already exists; pass --force to overwrite it\n"
    assert run_cli("init", root, "--force")[0] == 0


def test_init_json(tmp_path: Path) -> None:
    root = write_author_folder(tmp_path / "rel", symlink=False)
    code, out, _ = run_cli("init", root, "--out", root / "m.yaml", "--json", "--exclude", "docs/")
    assert code == 0
    payload = json.loads(out)
    assert payload["schema_version"] == 1 and payload["command"] == "init"
    assert payload["evaluations"] == ["results/spark.json"]
    assert payload["ignored"] == [".gitignore", "docs", "scratch", "train.log"]
    assert {a["path"]: a["role"] for a in payload["artifacts"]}["gguf/drafter-q4.gguf"] == "variant"


def test_init_missing_folder_is_one_line(tmp_path: Path) -> None:
    code, _, err = run_cli("init", tmp_path / "nope")
    assert code == 2
    assert err == f"error: {tmp_path / 'nope'}: release folder does not exist or is not a folder\n"


def test_init_unreadable_file_warns_and_skips(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_author_folder(tmp_path / "rel", symlink=False)
    deny_reading(monkeypatch, "config.json")
    code, _, err = run_cli("init", root)
    assert code == 0
    assert (
        "warning: weights/config.json: cannot read: Permission denied; skipped and listed under ignore\n"
        in err
    )
    monkeypatch.undo()
    assert run_cli("verify", root / "hubrelease.yaml")[0] == 0


def test_add_changed_file_prints_old_and_new(tmp_path: Path) -> None:
    root = write_author_folder(tmp_path / "rel", symlink=False)
    manifest = root / "hubrelease.yaml"
    run_cli("init", root)
    target = root / "weights" / "config.json"
    old = (target.stat().st_size, sha256_file(target))
    target.write_text("{}\n", encoding="utf-8")
    code, out, _ = run_cli("add", manifest, target)
    assert code == 0
    assert out == (
        f"changed weights/config.json: size {old[0]} -> 3, sha256 {old[1]} -> {sha256_file(target)}\n"
    )
    assert run_cli("verify", manifest)[0] == 0
    code, out, _ = run_cli("add", manifest, target, "--json")
    assert json.loads(out)["files"][0]["status"] == "unchanged"


def test_add_unreadable_file_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_author_folder(tmp_path / "rel", symlink=False)
    run_cli("init", root)
    (root / "new.md").write_text("new\n", encoding="utf-8")
    deny_reading(monkeypatch, "new.md")
    code, out, err = run_cli("add", root / "hubrelease.yaml", root / "new.md")
    assert (code, out) == (2, "")
    assert err == f"error: {root / 'new.md'}: cannot read: Permission denied\n"


def test_rm_and_rm_unknown(tmp_path: Path) -> None:
    root = write_author_folder(tmp_path / "rel", symlink=False)
    manifest = root / "hubrelease.yaml"
    run_cli("init", root)
    code, out, _ = run_cli("rm", manifest, "empty.txt")
    assert (code, out) == (0, "removed empty.txt\n")
    code, _, err = run_cli("rm", manifest, "empty.txt")
    assert code == 2
    assert err == f"error: {manifest}: not in the manifest: empty.txt\n"


def test_the_check_import_prints_passes_until_the_hub_changes(
    loopback_hub: LoopbackHub, tmp_path: Path
) -> None:
    repo_id, folder, commit = publish_author_folder(api_for(loopback_hub), tmp_path / "release")
    out = tmp_path / "imported" / "hubrelease.yaml"
    out.parent.mkdir()
    code, _, err = run_cli("import", f"{repo_id}@dev", "--out", out, "--endpoint", loopback_hub.url)
    assert code == 0, err
    assert f"wrote {out}: {repo_id}@dev = {commit} (described), 7 artifact(s)" in err
    printed = err.splitlines()[-1].removeprefix("check the Hub against it: ")
    assert f"# Check the Hub against it: `{printed}`." in out.read_text(encoding="utf-8").splitlines()
    words = shlex.split(printed)
    assert words[0] == "hubrelease"
    code, stdout, err = run_cli(*words[1:])
    assert code == 0, stdout + err
    code, stdout, _ = run_cli(*words[1:], "--json")
    report = json.loads(stdout)
    assert (code, report["ok"], report["commit"]) == (0, True, commit)
    assert [(f["kind"], f["severity"]) for f in report["findings"] if f["path"] == out.name] == [
        ("missing", "info")
    ]
    # One weights file changes on the branch the import read (same size, one byte): the same command
    # is now drift, naming it.
    name = "gguf/drafter-q4.gguf"
    changed = bytearray((folder / name).read_bytes())
    changed[-1] ^= 1
    api_for(loopback_hub).upload_file(
        path_or_fileobj=bytes(changed), path_in_repo=name, repo_id=repo_id, revision="dev"
    )
    code, stdout, _ = run_cli(*words[1:], "--json")
    errors = [(f["kind"], f["path"]) for f in json.loads(stdout)["findings"] if f["severity"] == "error"]
    assert (code, errors) == (1, [("digest_mismatch", name)])
    code, _, err = run_cli("import", f"{repo_id}@dev", "--out", out, "--endpoint", loopback_hub.url)
    assert (code, err) == (2, f"error: {out}: already exists; pass --force to overwrite it\n")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("acme/never-published", "acme/never-published: repository not found"),
        ("{repo}@no-such-branch", "{repo}: revision 'no-such-branch' not found"),
        (
            "not a repo id",
            "'not a repo id' is not a Hub repo id (expected namespace/name, optionally @revision)",
        ),
    ],
)
def test_import_missing_repo_or_revision_exits_2(
    loopback_hub: LoopbackHub, tmp_path: Path, spec: str, message: str
) -> None:
    repo_id, _, _ = publish_author_folder(api_for(loopback_hub), tmp_path / "release")
    out = tmp_path / "m.yaml"
    code, stdout, err = run_cli(
        "import", spec.format(repo=repo_id), "--out", out, "--endpoint", loopback_hub.url
    )
    assert (code, stdout) == (2, "")
    assert err == f"error: {message.format(repo=repo_id)}\n"
    assert not out.exists()


def test_push_of_an_unchanged_import_uploads_no_artifact(loopback_hub: LoopbackHub, tmp_path: Path) -> None:
    repo_id, folder, _ = publish_author_folder(api_for(loopback_hub), tmp_path / "release", branch="main")
    manifest = folder / "hubrelease.yaml"
    code, _, err = run_cli("import", repo_id, "--out", manifest, "--endpoint", loopback_hub.url)
    assert code == 0, err
    code, out, err = run_cli("push", manifest, "--endpoint", loopback_hub.url, "--dry-run", "--json")
    assert code == 0, err
    plan = json.loads(out)["plan"]
    statuses = {f["path"]: f["status"] for f in plan["files"]}
    assert statuses.pop("hubrelease.yaml") == "added"  # the manifest itself is the only new file
    assert set(statuses.values()) == {"unchanged"} and plan["deleted"] == []
    assert plan["upload_bytes"] == manifest.stat().st_size
    assert run_cli("push", manifest, "--endpoint", loopback_hub.url)[0] == 0
    code, _, err = run_cli("push", manifest, "--endpoint", loopback_hub.url)
    assert code == 0
    assert "nothing to push" in err
