"""A release larger than one commit, pushed through the loopback Hub, SIGKILLed twice, then finished.

Slow tier (not in the test suite): ``hubrelease push`` with its default limits (25,000 files or
20 GB per commit) stages the release on a pull request and merges it. The first run is killed
when its ``--kill-at``-th staged commit reaches the server, the second (which resumes) when its
own ``--kill-at``-th does (or at the merge, if fewer parts are left), the third finishes. Checked
after each kill: the branch is still at the old release. At the end: the branch moved once (one
merge commit), and ``hubrelease verify --remote`` at that commit passes without reading a byte of
any file. Printed: per run, exit code, staged commits the server took, seconds.

    python bench/large_release_bench.py small [--files 100000] [--kill-at 30]
    python bench/large_release_bench.py sparse [--gib 20] [--kill-at 2]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml
from huggingface_hub import HfApi

from hubrelease_loopback import LoopbackHub, RepoKey

BIN = Path(sys.executable).parent
SPARSE_FILE = 4 << 30


def small_release(folder: Path, files: int, repo: str) -> Path:
    """``files`` distinct small text files, 1,000 a folder (the Hub recommends < 10k entries)."""
    artifacts = []
    for index in range(files):
        name = f"shards/{index // 1000:03d}/{index:06d}.txt"
        data = f"shard {index} {os.urandom(8).hex()}\n".encode()
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
        artifacts.append({"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    return write_manifest(folder, repo, artifacts)


def sparse_release(folder: Path, gib: int, repo: str) -> Path:
    """``gib`` GiB in 4 GiB files that are holes but for 1 MiB of random bytes at the start of each."""
    folder.mkdir(parents=True, exist_ok=True)
    artifacts = []
    for index in range(max(1, (gib << 30) // SPARSE_FILE)):
        name = f"model-{index + 1:05d}.safetensors"
        head = os.urandom(1 << 20)
        with open(folder / name, "wb") as handle:
            handle.write(head)
            handle.truncate(SPARSE_FILE)
        digest = hashlib.sha256(head)
        zeros = bytes(1 << 24)
        left = SPARSE_FILE - len(head)
        while left:
            digest.update(zeros[: min(left, len(zeros))])
            left -= min(left, len(zeros))
        artifacts.append({"path": name, "size": SPARSE_FILE, "sha256": digest.hexdigest()})
    return write_manifest(folder, repo, artifacts)


def write_manifest(folder: Path, repo: str, artifacts: list[dict[str, object]]) -> Path:
    manifest = {"schema_version": 1, "release": {"repo_id": repo, "license": "mit"}, "artifacts": artifacts}
    path = folder / "hubrelease.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    return path


def environment(hub: LoopbackHub, home: Path) -> dict[str, str]:
    env = dict(os.environ, HF_ENDPOINT=hub.url, HF_HOME=str(home), HF_TOKEN=hub.owner_token)
    env.update(HF_HUB_DISABLE_TELEMETRY="1", HF_HUB_DISABLE_PROGRESS_BARS="1")
    return env


def push(hub: LoopbackHub, manifest: Path, home: Path, kill_at: int | None) -> tuple[int, int, float, str]:
    """(exit code, staged commits the server took, seconds, last line) of one run, killed when the
    ``kill_at``-th commit (or the merge) reaches the server."""
    hub.requests.clear()
    start = time.monotonic()
    command = [str(BIN / "hubrelease"), "push", str(manifest)]
    process = subprocess.Popen(
        command, env=environment(hub, home), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    if kill_at is not None:
        kill = lambda: os.kill(process.pid, signal.SIGKILL)  # noqa: E731
        hub.faults.inject("drop", route="commit", skip=kill_at - 1, action=kill)
        hub.faults.inject("drop", route="discussion_merge", action=kill)
    _, err = process.communicate()
    hub.faults.clear()
    took = sum(1 for r in hub.requests.on("commit") if r.status == 200)
    lines = err.strip().splitlines()
    return process.returncode, took, time.monotonic() - start, lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=("small", "sparse"))
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--gib", type=int, default=20)
    parser.add_argument("--kill-at", type=int, default=None, help="default: 30 (small), 2 (sparse)")
    options = parser.parse_args()
    kill_at = options.kill_at or (30 if options.kind == "small" else 2)
    with (
        tempfile.TemporaryDirectory(prefix="large-release-bench-", dir=os.environ.get("TMPDIR")) as name,
        LoopbackHub(Path(name) / "hub") as hub,
    ):
        tmp = Path(name)
        repo = f"acme/large-{options.kind}"
        start = time.monotonic()
        if options.kind == "small":
            manifest = small_release(tmp / "release", options.files, repo)
        else:
            manifest = sparse_release(tmp / "release", options.gib, repo)
        print(f"release written in {time.monotonic() - start:.1f} s: {manifest}")
        api = HfApi(endpoint=hub.url, token=hub.owner_token)
        api.create_repo(repo)
        old = api.upload_file(path_or_fileobj=b"old release\n", path_in_repo="README.md", repo_id=repo).oid
        key = RepoKey("model", repo)
        for run in (1, 2, 3):
            code, took, seconds, last = push(
                hub, manifest, tmp / f"home-{run}", None if run == 3 else kill_at
            )
            head = hub.store.resolve(key, "main")
            print(
                f"run {run}: exit {code}, {took} staged commit(s) taken, {seconds:.1f} s; main at {head[:12]}"
            )
            if run < 3:
                assert code == -signal.SIGKILL, last
                assert head == old, "the branch moved while the release was staged"
            else:
                assert code == 0, last
        history = hub.store.history(key, "main")
        assert history[1]["id"] == old, "the branch moved more than once"
        merge = history[0]
        prs = hub.store.refs(key)["prs"]
        print(
            f"main: {old[:12]} -> {merge['id'][:12]} (parents {len(merge['parents'])}); pull requests: "
            + ", ".join(f"#{n} {pr.get('status')}" for n, pr in prs.items())
        )
        hub.requests.clear()
        start = time.monotonic()
        verify = subprocess.run(
            [str(BIN / "hubrelease"), "verify", str(manifest), "--remote", "--revision", merge["id"]],
            env=environment(hub, tmp / "home-verify"),
            capture_output=True,
            text=True,
        )
        read = hub.requests.bytes_out("resolve|cdn")
        print(
            f"verify --remote at the merge commit: exit {verify.returncode} in {time.monotonic() - start:.1f} s, "
            f"{read} file bytes read; {verify.stdout.strip().splitlines()[-1][:120]}"
        )
        assert verify.returncode == 0 and read == 0


if __name__ == "__main__":
    main()
