"""Ctrl-C (SIGINT) at any point is one ``error: interrupted`` line, exit 130, and nothing half-written.

Each test signals a real process at a point it observes, not after a guessed delay: the hashing
thread holding the file open, the loopback Hub receiving the first bytes of the upload.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import threading
from pathlib import Path

from hubrelease_loopback import LoopbackHub, RepoKey
from tests.factories.cli import finish, spawn
from tests.factories.hub import api_for, unique_repo
from tests.factories.waiting import wait_until


def _hubrelease(*args: str | Path) -> subprocess.Popen[str]:
    return spawn(*args, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def test_ctrl_c_while_hashing_exits_130_with_one_line_and_no_temp_files(tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    with big.open("wb") as handle:
        handle.truncate(8 << 30)  # sparse: hashing it takes far longer than the test waits
    manifest = tmp_path / "hubrelease.yaml"
    manifest.write_text(
        "schema_version: 1\nrelease: {repo_id: acme/x, license: mit}\n"
        f'artifacts:\n  - path: big.bin\n    size: {8 << 30}\n    sha256: "{"0" * 64}"\n',
        encoding="utf-8",
    )
    proc = _hubrelease("verify", manifest)
    # until a hashing thread has big.bin open (Linux /proc)
    assert wait_until(lambda: proc.poll() is not None or _has_open(proc.pid, big))
    proc.send_signal(signal.SIGINT)
    code, _, err = finish(proc)
    assert code == 130, err
    assert err.strip().splitlines() == ["error: interrupted"]
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".hubrelease-tmp-")]


def _has_open(pid: int, path: Path) -> bool:
    try:
        return any(os.readlink(fd) == str(path) for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False


def test_ctrl_c_during_a_push_upload_exits_130_at_once_and_commits_nothing(tmp_path: Path) -> None:
    # A Hub of its own: the killed upload's request may still end on the server after this test,
    # and would land in the shared session Hub's request log of the next test.
    with LoopbackHub(tmp_path / "hub") as hub:
        big = tmp_path / "big.safetensors"
        data = os.urandom(4 << 20)  # random: Xet cannot dedup it away, so its xorb carries it
        big.write_bytes(data)
        repo = unique_repo("interrupted")
        manifest = tmp_path / "hubrelease.yaml"
        manifest.write_text(
            f"schema_version: 1\nrelease: {{repo_id: {repo}, license: mit}}\n"
            f"artifacts:\n  - path: big.safetensors\n    size: {len(data)}\n"
            f"    sha256: {hashlib.sha256(data).hexdigest()}\n",
            encoding="utf-8",
        )
        uploading = threading.Event()
        procs: list[subprocess.Popen[str]] = []

        def interrupt() -> None:  # the Hub's first bytes of release data: the upload is under way
            uploading.set()
            procs[0].send_signal(signal.SIGINT)

        hub.faults.trip_after(1, interrupt)
        procs.append(_hubrelease("push", manifest, "--endpoint", hub.url))
        code, _, err = finish(procs[0])
        assert uploading.is_set(), err
        assert code == 130, err
        assert err.strip().splitlines()[-1] == "error: interrupted"
        if hub.store.exists(RepoKey("model", repo)):  # push creates the repo before uploading
            assert "big.safetensors" not in api_for(hub).list_repo_files(repo)
