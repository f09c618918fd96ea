"""`hubrelease verify` end to end: every drift and error path, its message and its exit code."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from hubrelease.fsutil import STATE_DIR
from hubrelease.hashing.statcache import CACHE_NAME
from tests.factories.cli import run_cli
from tests.factories.releases import write_release


def verify_json(manifest: Path, *extra: str) -> tuple[int, dict[str, object]]:
    code, out, _ = run_cli("verify", str(manifest), "--json", *extra)
    return code, json.loads(out)


def findings(report: dict[str, object]) -> list[tuple[str, str, str]]:
    return [(f["kind"], f["path"], f["message"]) for f in report["findings"]]  # type: ignore[index,union-attr]


def test_clean_release_exits_0_and_second_run_uses_the_cache(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    code, report = verify_json(manifest)
    assert code == 0
    assert report["ok"] is True
    assert report["summary"]["files"] == 4  # type: ignore[index]
    os.utime(tmp_path / "model.safetensors", ns=(10**9, 10**9))  # not racy any more: safe to trust
    for name in ("config.json", "sub/dir/notes.md", "empty.bin"):
        os.utime(tmp_path / name, ns=(10**9, 10**9))
    verify_json(manifest)  # records non-racy entries
    code, report = verify_json(manifest)
    assert code == 0
    assert report["summary"]["from_cache"] == 4  # type: ignore[index]
    assert report["summary"]["hashed_bytes"] == 0  # type: ignore[index]


def test_human_output_says_ok(tmp_path: Path) -> None:
    code, out, _ = run_cli("verify", str(write_release(tmp_path)))
    assert code == 0
    assert out.startswith("OK (local): 4 files")


def test_missing_file(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    (tmp_path / "config.json").unlink()
    code, report = verify_json(manifest)
    assert code == 1
    assert findings(report) == [("missing", "config.json", "file is missing")]


def test_truncated_file_is_caught_by_size_without_hashing(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    with open(tmp_path / "model.safetensors", "r+b") as handle:
        handle.truncate(100)
    code, report = verify_json(manifest)
    assert code == 1
    assert findings(report) == [
        ("size_mismatch", "model.safetensors", "size mismatch: expected 4103 bytes, got 100")
    ]


def _corrupt_same_size(path: Path, keep_mtime: bool) -> None:
    before = os.stat(path)
    data = bytearray(path.read_bytes())
    data[10] ^= 0xFF
    path.write_bytes(bytes(data))
    if keep_mtime:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_same_size_corruption_caught_with_no_cache(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    assert verify_json(manifest)[0] == 0
    _corrupt_same_size(tmp_path / "model.safetensors", keep_mtime=True)
    code, report = verify_json(manifest, "--no-cache")
    assert code == 1
    assert [(k, p) for k, p, _ in findings(report)] == [("digest_mismatch", "model.safetensors")]


@pytest.mark.parametrize("keep_mtime", [False, True], ids=["mtime-changed", "mtime-restored"])
def test_same_size_corruption_caught_with_the_cache(tmp_path: Path, keep_mtime: bool) -> None:
    manifest = write_release(tmp_path)
    old = 10**9
    os.utime(tmp_path / "model.safetensors", ns=(old, old))
    assert verify_json(manifest)[0] == 0
    _corrupt_same_size(tmp_path / "model.safetensors", keep_mtime=keep_mtime)
    code, report = verify_json(manifest)
    assert code == 1
    kinds = findings(report)
    assert kinds[0][0] == "digest_mismatch"
    assert kinds[0][2].startswith("sha256 mismatch: expected ")


def test_unlisted_file_is_drift(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    (tmp_path / "sub" / "stray.bin").write_bytes(b"?")
    code, report = verify_json(manifest)
    assert code == 1
    assert findings(report) == [
        ("unlisted", "sub/stray.bin", "file is in the release folder but not in the manifest")
    ]


def test_ignore_patterns_silence_unlisted_files(tmp_path: Path) -> None:
    manifest = write_release(tmp_path, extra_manifest={"ignore": ["scratch/*"]})
    (tmp_path / "scratch").mkdir()
    (tmp_path / "scratch" / "a").write_bytes(b"a")
    assert verify_json(manifest)[0] == 0


def test_symlink_refused_unless_followed(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    real = tmp_path / "sub" / "real.json"
    os.replace(tmp_path / "config.json", real)
    os.symlink(real, tmp_path / "config.json")
    code, report = verify_json(manifest)
    assert code == 1
    assert (
        "symlink",
        "config.json",
        "is a symlink; refused (pass --follow-symlinks to hash its target)",
    ) in findings(report)
    code, report = verify_json(manifest, "--follow-symlinks")
    assert [k for k, _, _ in findings(report)] == ["unlisted"]  # only real.json, which the manifest omits


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = write_release(tmp_path)
    target = tmp_path / "config.json"
    target.chmod(0)
    if os.geteuid() == 0:  # root reads mode-000 files: make the open fail the way it would for a user
        real_open = open

        def deny(file: object, *args: object, **kwargs: object) -> object:
            if str(file) == str(target):
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

        monkeypatch.setattr("builtins.open", deny)
    code, report = verify_json(manifest, "--no-cache")
    target.chmod(0o644)
    assert code == 1
    assert findings(report) == [("unreadable", "config.json", "cannot read: Permission denied")]


def test_corrupt_cache_warns_and_still_verifies(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    (tmp_path / STATE_DIR).mkdir()
    (tmp_path / STATE_DIR / CACHE_NAME).write_bytes(b"garbage" * 50)
    code, report = verify_json(manifest)
    assert code == 0
    assert [(k, f) for k, f, _ in findings(report)] == [("cache_rebuilt", STATE_DIR)]
    assert report["findings"][0]["severity"] == "warning"  # type: ignore[index]


def test_unpinned_artifact_is_reported_with_its_actual_digest(tmp_path: Path) -> None:
    manifest = write_release(tmp_path, {"a.bin": b"a"})
    text = manifest.read_text()
    manifest.write_text("\n".join(line for line in text.splitlines() if "sha256" not in line) + "\n")
    code, report = verify_json(manifest)
    assert code == 1
    assert report["findings"][0]["kind"] == "unpinned"  # type: ignore[index]
    assert (
        report["findings"][0]["actual"] == "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"
    )  # type: ignore[index]


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


def test_dir_option_verifies_another_folder(tmp_path: Path) -> None:
    manifest = write_release(tmp_path / "a")
    other = tmp_path / "b"
    write_release(other)
    (other / "hubrelease.yaml").unlink()
    code, report = verify_json(manifest, "--dir", str(other))
    assert code == 0
    assert report["root"] == str(other.resolve())


def test_github_annotations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    manifest = write_release(tmp_path)
    (tmp_path / "config.json").unlink()
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code, out, _ = run_cli("verify", str(manifest))
    assert code == 1
    assert "::error file=config.json::config.json: file is missing" in out.splitlines()


def test_checksums_round_trip_through_verify(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    code, _, _ = run_cli("checksums", str(manifest), "--out", str(tmp_path / "SHA256SUMS"))
    assert code == 0
    code, report = verify_json(tmp_path / "SHA256SUMS")
    assert code == 0
    assert report["summary"]["files"] == 4  # type: ignore[index]
    _corrupt_same_size(tmp_path / "config.json", keep_mtime=False)
    code, report = verify_json(tmp_path / "SHA256SUMS", "--no-cache")
    assert code == 1
    assert [(k, p) for k, p, _ in findings(report)] == [("digest_mismatch", "config.json")]


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
    proc = subprocess.Popen(
        [sys.executable, "-c", "from hubrelease.cli.app import main; main()", "verify", str(manifest)],
        stdout=follower,
        stderr=subprocess.PIPE,
        env={**os.environ, "COLUMNS": "120", "TERM": "dumb"},
    )
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
    assert proc.wait(timeout=60) == 1
    os.close(leader)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode())
    lines = text.replace("\r\n", "\n").strip().splitlines()
    assert sum(1 for line in lines if "file is missing" in line) == TTY_ROWS
    assert lines[-2].strip() == "... and 7 more findings (all of them: --json, or without a terminal)"
    assert lines[-1].startswith(f"DRIFT (local): {TTY_ROWS + 7} problem(s)")
