"""Bytes read from disk by `hubrelease push` vs `hf upload`, same release, same loopback Hub, same run.

Each command runs in its own process under a wrapper that reports the process's ``rchar`` from
``/proc/self/io`` at exit (every byte read(2) returned: files, sockets and Python's own imports);
the same wrapper around ``--help`` gives each tool's fixed cost, subtracted. The release is a few
large random files, so the figure is dominated by how many times each file is read.

Runs: ``hubrelease verify`` (warms the stat cache as CI's gate does), then ``hubrelease push``
(preflight verify hits the stat cache; the upload is the one read); a second push after a
change, with the commit answered 503 once (the retry must not hash or read again); ``hf upload``
of the same folder to another repo (hf_xet hashes while it uploads: one read). Xet on for all.

    python bench/push_bench.py [--files 3] [--mib 96]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from hubrelease_loopback import LoopbackHub

WRAP = """
import atexit, importlib, sys
def _report():
    for line in open('/proc/self/io'):
        if line.startswith('rchar:'):
            sys.__stderr__.write('RCHAR ' + line.split()[1] + '\\n')
atexit.register(_report)
entry, sys.argv = sys.argv[1], sys.argv[1:]
module, _, function = entry.partition(':')
sys.exit(getattr(importlib.import_module(module), function)())
"""
HUBRELEASE = "hubrelease.cli.start:main"
HF = "huggingface_hub.cli.hf:main"


def make_release(folder: Path, files: int, mib: int, repo: str) -> Path:
    artifacts = []
    for index in range(files):
        data = os.urandom(mib << 20)
        name = f"model-{index + 1:05d}-of-{files:05d}.safetensors"
        (folder / name).write_bytes(data)
        artifacts.append({"path": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
    manifest = {"schema_version": 1, "release": {"repo_id": repo, "license": "mit"}, "artifacts": artifacts}
    path = folder / "hubrelease.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    return path


def run(entry: str, *args: str, env: dict[str, str]) -> int:
    """rchar of one process running the console-script ``entry`` (module:function) with ``args``."""
    done = subprocess.run(
        [sys.executable, "-c", WRAP, entry, *args], env=env, capture_output=True, text=True, check=False
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("RCHAR ")]
    if not lines or done.returncode != 0:
        raise SystemExit(f"{entry} {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return int(lines[-1].split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3)
    parser.add_argument("--mib", type=int, default=96)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="push-bench-") as tmp, LoopbackHub(Path(tmp) / "hub") as hub:
        env = dict(
            os.environ, HF_ENDPOINT=hub.url, HF_HOME=str(Path(tmp) / "hf"), HF_HUB_DISABLE_TELEMETRY="1"
        )
        env.pop("HF_HUB_DISABLE_XET", None)
        env["HF_TOKEN"] = hub.owner_token
        folder = Path(tmp) / "release"
        folder.mkdir()
        manifest = make_release(folder, options.files, options.mib, "bench/push")
        size = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
        base_hr = run(HUBRELEASE, "--help", env=env)
        base_hf = run(HF, "--help", env=env)
        verify = run(HUBRELEASE, "verify", str(manifest), env=env) - base_hr
        dry = (
            run(HUBRELEASE, "push", str(manifest), "--endpoint", hub.url, "--dry-run", "-q", env=env)
            - base_hr
        )
        push = run(HUBRELEASE, "push", str(manifest), "--endpoint", hub.url, "-q", env=env) - base_hr
        # A changed shard, and a commit answered 503 once: the retry reuses operations and digests.
        changed = folder / f"model-00001-of-{options.files:05d}.safetensors"
        data = os.urandom(options.mib << 20)
        changed.write_bytes(data)
        text = manifest.read_text(encoding="utf-8")
        old = next(a for a in yaml.safe_load(text)["artifacts"] if a["path"] == changed.name)["sha256"]
        manifest.write_text(text.replace(old, hashlib.sha256(data).hexdigest()), encoding="utf-8")
        run(HUBRELEASE, "verify", str(manifest), env=env)
        hub.faults.inject("status", route="commit", status=503, times=1)
        retry = run(HUBRELEASE, "push", str(manifest), "--endpoint", hub.url, env=env) - base_hr
        assert not hub.faults.pending, "the 503 did not fire"
        upload = run(HF, "upload", "bench/hf-upload", str(folder), ".", "--quiet", env=env)
        upload -= base_hf
    mib = 1 << 20
    print(f"release: {options.files} x {options.mib} MiB = {size / mib:.0f} MiB (Xet uploads)")
    print(f"{'command':58} {'MiB read':>9} {'x release':>9}")
    rows = [
        ("hubrelease verify (cold stat cache)", verify, size),
        ("hubrelease push --dry-run (imports, preflight, plan)", dry, size),
        ("hubrelease push (first, stat cache warm from verify)", push, size),
        ("  the same minus --dry-run's reads", push - dry, size),
        ("hubrelease push (1 changed shard, commit 503 once, retried)", retry, options.mib * mib),
        ("  the same minus --dry-run's reads", retry - dry, options.mib * mib),
        ("hf upload (same folder, new repo)", upload, size),
    ]
    for name, read, reference in rows:
        print(f"{name:58} {read / mib:9.1f} {read / reference:9.2f}")
    print(f"push / hf upload: {push / upload:.2f}")


if __name__ == "__main__":
    main()
