"""`hubrelease verify` end to end: every drift and error path, its message and its exit code."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from hubrelease.fsutil import STATE_DIR
from tests.factories.cli import finish, run_cli, spawn, verify_json
from tests.factories.releases import write_release


def test_clean_release_exits_0_and_second_run_uses_the_cache(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    code, report = verify_json(manifest)
    assert code == 0
    assert report["ok"] is True
    assert report["summary"]["files"] == 4
    os.utime(tmp_path / "model.safetensors", ns=(10**9, 10**9))  # not racy any more: safe to trust
    for name in ("config.json", "sub/dir/notes.md", "empty.bin"):
        os.utime(tmp_path / name, ns=(10**9, 10**9))
    verify_json(manifest)  # records non-racy entries
    code, report = verify_json(manifest)
    assert code == 0
    assert report["summary"]["from_cache"] == 4
    assert report["summary"]["hashed_bytes"] == 0


def test_human_output_says_ok(tmp_path: Path) -> None:
    code, out, _ = run_cli("verify", str(write_release(tmp_path)))
    assert code == 0
    assert out.startswith("OK (local): 5 files: hubrelease.yaml and the 4 it pins")


def test_invalid_manifest_exits_2_with_one_line(tmp_path: Path) -> None:
    manifest = tmp_path / "hubrelease.yaml"
    manifest.write_text("schema_version: 1\nrelease:\n  repo_id: a/b\n  license: mit\n  colour: red\n")
    code, out, err = run_cli("verify", str(manifest))
    assert code == 2
    assert out == ""
    assert err == (
        f"error: {manifest}:5: release.colour: unknown key (allowed keys are listed by `hubrelease schema`)\n"
    )


def test_missing_manifest_exits_2(tmp_path: Path) -> None:
    code, _, err = run_cli("verify", str(tmp_path / "nope.yaml"))
    assert code == 2
    assert err == f"error: {tmp_path / 'nope.yaml'}: manifest not found\n"


def test_bad_option_is_usage_error() -> None:
    code, _, _ = run_cli("verify", "x.yaml", "--jobs", "0")
    assert code == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--revision", "v1"], "--revision needs --remote"),
        (["--endpoint", "http://127.0.0.1:9", "--token", "hf_x"], "--endpoint, --token need --remote"),
        (["--remote", "--no-cache", "-j", "2"], "--jobs, --no-cache apply to the local check, not --remote"),
    ],
)
def test_an_option_the_mode_would_ignore_is_a_usage_error(
    tmp_path: Path, args: list[str], message: str
) -> None:
    manifest = write_release(tmp_path)
    code, out, err = run_cli("verify", str(manifest), *args)
    assert (code, out) == (2, "")
    assert err.startswith("error: ") and err.endswith(f"{message}\n") and err.count("\n") == 1
    assert "hf_x" not in err
    assert not (tmp_path / ".hubrelease").exists()  # refused before anything ran


def test_github_annotations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = write_release(tmp_path)
    (tmp_path / "config.json").unlink()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, out, _ = run_cli("verify", str(manifest))
    assert code == 1
    assert "::error file=config.json::config.json: file is missing" in out.splitlines()


def test_schema_command_prints_json_schema() -> None:
    code, out, _ = run_cli("schema")
    assert code == 0
    schema = json.loads(out)
    assert schema["title"] == "Manifest"
    assert "artifacts" in schema["properties"]


def test_example_release_verifies(repo_root: Path, tmp_path: Path) -> None:
    import shutil

    shutil.copytree(
        repo_root / "manifests" / "example", tmp_path / "example", ignore=shutil.ignore_patterns(STATE_DIR)
    )
    code, report = verify_json(tmp_path / "example" / "hubrelease.yaml")
    assert code == 0, report


def test_error_lines_keep_square_brackets(tmp_path: Path) -> None:
    missing = tmp_path / "[bold]release[/bold]" / "hubrelease.yaml"
    code, _, err = run_cli("verify", str(missing))
    assert code == 2
    assert err == f"error: {missing}: manifest not found\n"


def _many_missing(tmp_path: Path, count: int) -> Path:
    names = {f"shard/file-{i:04d}.bin": b"%d" % i for i in range(count)}
    manifest = write_release(tmp_path, names)
    for name in names:
        (tmp_path / name).unlink()
    return manifest


def test_text_output_lists_every_finding_on_its_own_line_without_a_terminal(tmp_path: Path) -> None:
    from hubrelease.cli.output import TTY_ROWS

    count = TTY_ROWS + 50  # more than a terminal shows: a pipe gets them all
    manifest = _many_missing(tmp_path, count)
    (tmp_path / "notes [draft].md").write_text("x")  # brackets are text, not rich markup
    (tmp_path / "two\nlines.txt").write_text("x")  # a newline in a name must not split its row
    code, out, _ = run_cli("verify", str(manifest))
    assert code == 1
    lines = out.splitlines()
    assert lines[0].split() == ["severity", "kind", "path", "detail"]
    rows = [line.split(None, 3) for line in lines[1:-1]]
    assert [row[3] for row in rows if row[1] == "missing"] == ["file is missing"] * count
    assert sorted(row[2] for row in rows if row[1] == "missing") == [
        f"shard/file-{i:04d}.bin" for i in range(count)
    ]
    unlisted = [line for line in lines if "unlisted" in line]
    assert len(unlisted) == 2 and "notes [draft].md" in unlisted[0] and repr("two\nlines.txt") in unlisted[1]
    assert lines[-1].startswith(f"DRIFT (local): {count + 2} problem(s)")
    assert len({line.index("file is") for line in lines[1:-1] if "missing" in line}) == 1  # aligned


def test_a_terminal_shows_the_first_findings_and_how_many_more(tmp_path: Path) -> None:
    import pty

    from hubrelease.cli.output import TTY_ROWS

    manifest = _many_missing(tmp_path, TTY_ROWS + 7)
    leader, follower = pty.openpty()
    proc = spawn("verify", manifest, env={**os.environ, "COLUMNS": "120", "TERM": "dumb"}, stdout=follower)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:  # EIO once the child has closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert finish(proc)[0] == 1
    os.close(leader)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode())
    lines = text.replace("\r\n", "\n").strip().splitlines()
    assert sum(1 for line in lines if "file is missing" in line) == TTY_ROWS
    assert lines[-2].strip() == "... and 7 more findings (all of them: --json, or without a terminal)"
    assert lines[-1].startswith(f"DRIFT (local): {TTY_ROWS + 7} problem(s)")
