"""The committed example release and its target published to the loopback Hub, the target pinned by
commit and by its files' digests: what ``pull``, ``pull --check`` and ``diff`` tests read back."""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from hubrelease.formats.gguf_header import read_gguf
from hubrelease.fsutil import STATE_DIR
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import invoke, run_cli
from tests.factories.hub import api_for, unique_repo, upload_files, upload_release

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = REPO_ROOT / "manifests" / "example"
EXAMPLE_TARGET = REPO_ROOT / "manifests" / "example-target"
TARGET_GGUF = "tiny-qwen3-f16.gguf"


@dataclass(frozen=True)
class PublishedExample:
    repo: str
    commit: str
    target_repo: str
    target_commit: str
    release: Path
    """The local release folder that was published (its manifest: ``release / "hubrelease.yaml"``)."""
    target: Path
    """The target's local folder (config.json, safetensors, GGUF)."""

    @property
    def manifest(self) -> Path:
        return self.release / "hubrelease.yaml"


def _pin(path: Path, *, header: bool = False) -> dict[str, Any]:
    data = path.read_bytes()
    pin: dict[str, Any] = {"path": path.name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    if header:
        pin["header_sha256"] = read_gguf(path).shards[0].header_sha256
    return pin


def publish_example(hub: LoopbackHub, tmp_path: Path, signing_key: Path | None = None) -> PublishedExample:
    """The example target, then the example drafter pinning it (commit, config.json, GGUF header).

    With ``signing_key`` (an EC private key) the drafter is signed and published by ``push``, as a
    publisher would (only the files it publishes, ``model.sig`` among them).
    """
    api = api_for(hub)
    ignore = shutil.ignore_patterns(STATE_DIR)
    target = shutil.copytree(EXAMPLE_TARGET, tmp_path / "example-target", ignore=ignore)
    target_repo = unique_repo("target")
    files = {p.name: p.read_bytes() for p in sorted(target.iterdir()) if p.is_file()}
    target_commit = upload_files(api, target_repo, files)
    release = shutil.copytree(EXAMPLE, tmp_path / "example", ignore=ignore)
    manifest = release / "hubrelease.yaml"
    data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    repo = unique_repo()
    data["release"]["repo_id"] = repo
    data["pins"]["targets"] = [
        {
            "repo_id": target_repo,
            "revision": target_commit,
            "license": "apache-2.0",
            "files": [_pin(target / "config.json"), _pin(target / TARGET_GGUF, header=True)],
        }
    ]
    note = "the test's target is a copy of the example target under another repo id"
    data["evaluations"][0]["deviations"] = [{"field": "target", "note": note}]
    for usage in data["card"]["usage"]:
        usage["target"] = target_repo
    manifest.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    if signing_key is None:
        commit = upload_release(api, repo, release, manifest)
    else:
        for args in (
            ("render-card", manifest),
            ("sign", manifest, "--key", signing_key),
            ("push", manifest, "--endpoint", hub.url),
        ):
            code, _, err = run_cli(*args)
            assert code == 0, err
        commit = api.repo_info(repo).sha or ""
    return PublishedExample(repo, commit, target_repo, target_commit, release, target)


def pull_json(hub: LoopbackHub, *args: str | Path) -> tuple[int, dict[str, Any] | None, str]:
    """``hubrelease pull ARGS --json`` against ``hub``: exit code, the report (when 0), stderr."""
    result = invoke(["pull", *map(str, args), "--endpoint", hub.url, "--json"])
    report = json.loads(result.stdout) if result.exit_code == 0 else None
    return result.exit_code, report, result.stderr


def files_below(folder: Path) -> set[str]:
    """Every file below ``folder`` (relative POSIX paths; empty when it does not exist): what a pull wrote."""
    return (
        {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
        if folder.exists()
        else set()
    )


def publish_example_locally(folder: Path) -> Path:
    """A root for ``--endpoint local`` (``HUBRELEASE_LOCAL_HUB``) where the committed example's target
    and the example release, as committed, are each pushed once, as the example tutorial pushes them.

    Pages of the manual that start from a published release run on a copy of it, so no page pays for
    those two pushes again.
    """
    root = folder / "local-hub"
    env = {"HUBRELEASE_LOCAL_HUB": str(root), "HF_HOME": str(folder / "hf-home")}
    for source in (EXAMPLE_TARGET, EXAMPLE):
        release = shutil.copytree(source, folder / source.name, ignore=shutil.ignore_patterns(STATE_DIR))
        done = invoke(["push", release / "hubrelease.yaml", "--endpoint", "local", "-q"], env=env)
        assert done.exit_code == 0, done.stderr
    return root
