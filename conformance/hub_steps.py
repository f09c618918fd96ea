"""Conformance steps that need the example release published: speculators' own classes, llama.cpp's ``-hf``.

The example release (manifests/example) and its target (manifests/example-target) are published to a
loopback Hub on 127.0.0.1 the way the demo publishes them (``push`` the target, ``lock``,
``render-card``, ``push``; ``lock --pin`` the target, as the demo does), then:
- ``speculators``: ``build speculators-drafter`` for each variant's checkpoint with the verifier pinned
  at the target's published commit; speculators 0.9.0 loads it (``SpeculatorModel.from_pretrained``,
  the verifier's weights fetched by name from ``HF_ENDPOINT``) and, for DFlash, its ``DFlashConverter``
  converts the same drafter for a tensor-by-tensor and key-by-key comparison;
- ``hf``: the real ``llama-server -hf TARGET:F16 -hfd DRAFTER:Q8_0 --spec-type draft-dflash`` with
  ``MODEL_ENDPOINT`` at the loopback Hub (``common/common.cpp:1462`` ``common_get_model_endpoint``; plain
  http through cpp-httplib, ``common/http.h:100``), an empty ``LLAMA_CACHE``: the engine resolves the
  tags from the repo tree (``common/download.cpp`` ``find_best_model``), downloads the published files
  and must draft; the files it stored must be the bytes the manifest pins.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from conformance.consumers import llama_server
from conformance.records import Result, Variant, json_subprocess

if TYPE_CHECKING:
    from hubrelease_loopback import LoopbackHub
    from hubrelease_loopback.faults import RequestLog

ROOT = Path(__file__).resolve().parent.parent
CONSUMERS = Path(__file__).resolve().parent / "consumers"
SPECULATORS_EXPLAINED = {
    "auto_map": "save_pretrained copies speculators' own config module (config.py) beside the checkpoint and points "
    "auto_map at it; the installed package registers the class, so hubrelease writes neither",
}
"""Config keys where speculators' converter and hubrelease differ after speculators loaded both."""


@dataclass(frozen=True)
class Published:
    url: str
    release: Path
    """The published copy of the example release (its manifest locked to the target's commit)."""
    target_repo: str
    target_commit: str
    drafter_repo: str
    requests: RequestLog
    """The loopback Hub's request log: what a step's consumer downloaded."""
    owner_token: str
    """The token a step publishes another release with."""
    hub: LoopbackHub
    """The Hub itself, for a step that publishes with the test factories (the seed-shaped releases)."""


def _hubrelease(env: dict[str, str], *args: str | Path) -> None:
    exe = Path(sys.executable).parent / "hubrelease"
    proc = subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(
            f"hubrelease {' '.join(map(str, args[:2]))} exited {proc.returncode}: {proc.stderr[-600:]}"
        )


@contextlib.contextmanager
def published_example(work: Path) -> Iterator[Published]:
    """A loopback Hub holding the example release and its target, published as scripts/demo.sh does."""
    from hubrelease_loopback import LoopbackHub

    shutil.rmtree(work / "published", ignore_errors=True)
    folder = work / "published"
    for name in ("example", "example-target"):
        shutil.copytree(ROOT / "manifests" / name, folder / name)
    manifest = folder / "example" / "hubrelease.yaml"
    with LoopbackHub(folder / "hub") as hub:
        env = dict(os.environ, HF_TOKEN=hub.owner_token, HF_HUB_DISABLE_TELEMETRY="1")
        _hubrelease(env, "push", folder / "example-target" / "hubrelease.yaml", "--endpoint", hub.url)
        target_repo = yaml.safe_load(manifest.read_text(encoding="utf-8"))["pins"]["targets"][0]["repo_id"]
        _hubrelease(env, "lock", manifest, "--endpoint", hub.url, "--pin", target_repo)
        _hubrelease(env, "render-card", manifest)
        _hubrelease(env, "push", manifest, "--endpoint", hub.url)
        data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
        target = data["pins"]["targets"][0]
        yield Published(
            hub.url,
            folder / "example",
            target["repo_id"],
            target["revision"],
            data["release"]["repo_id"],
            hub.requests,
            hub.owner_token,
            hub,
        )


def run_speculators(variants: list[Variant], work: Path, published: Published) -> list[Result]:
    python = os.environ.get("SPECULATORS_PYTHON", "")
    if not python:
        return [
            Result("speculators", v.name, "speculators", "not run", "set SPECULATORS_PYTHON")
            for v in variants
        ]
    results = []
    env = dict(os.environ, HF_ENDPOINT=published.url, HF_HOME=str(work / "speculators-hf-home"))
    env.pop("HF_TOKEN", None)  # the verifier is public: fetched as any user fetches it
    shutil.rmtree(work / "speculators-hf-home", ignore_errors=True)
    verifier = f"{published.target_repo}@{published.target_commit}"
    for v in variants:
        out = work / "speculators" / v.name
        checkpoint = published.release / "checkpoint" if v.name == "example" else v.checkpoint
        assert checkpoint is not None
        _hubrelease(dict(env, HF_TOKEN="hf_unused"), "build", "speculators-drafter", checkpoint, "--out", out,
                    "--verifier", verifier, "--endpoint", published.url)  # fmt: skip
        zlab = "-" if v.dflash2 else str(v.folder)
        r = json_subprocess([python, str(CONSUMERS / "speculators_load.py"), str(out), zlab], env)
        detail = "; ".join(r.get("checks", [])[:2]) if r["status"] == "pass" else _failure(r)
        results.append(Result("speculators", v.name, "speculators", r["status"], detail))
        if v.dflash2:
            why = ("speculators' converter knows DFlash only (convert/dflash/converter.py:142 builds a "
                   "DFlashSpeculatorConfig, :218 a DFlashDraftModel); DFlash2 is compared by loading only")  # fmt: skip
            results.append(Result("converter speculators", v.name, "speculators", "n/a", why))
        else:
            results.append(_converter_row(v.name, r))
    return results


def _failure(r: dict[str, Any]) -> str:
    where = f" [{r['where']}]" if r.get("where") else ""
    return f"{r.get('error', '')}{where}"


def _converter_row(variant: str, r: dict[str, Any]) -> Result:
    if r["status"] != "pass":
        return Result("converter speculators", variant, "speculators", "fail", _failure(r))
    unexplained = [k for k in r["config_differences"] if k not in SPECULATORS_EXPLAINED]
    if unexplained:
        return Result("converter speculators", variant, "speculators", "fail",
                      f"configs differ as speculators loads them: {unexplained}")  # fmt: skip
    detail = (
        f"{r['checks'][2]}; both configs equal as SpeculatorModelConfig loads them but the explained "
        f"{', '.join(r['config_differences']) or 'none'}; raw JSON keys only the converter writes "
        f"(transformers' to_diff_dict of Qwen3Config, the same values at load): {', '.join(r['raw_only_converter'])}; "
        f"only hubrelease: {', '.join(r['raw_only_ours']) or 'none'}"
    )
    return Result("converter speculators", variant, "speculators", "pass", detail)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _stored(cache: Path, repo: str, commit: str, name: str) -> Path:
    """Where llama.cpp's HF cache keeps a file of ``repo`` at ``commit`` (common/hf-cache.cpp:78-87, :287)."""
    return cache / f"models--{repo.replace('/', '--')}" / "snapshots" / commit / name


def run_hf_fetch(work: Path, published: Published) -> list[Result]:
    server = os.environ.get("LLAMA_SERVER", "")
    artifact = "published example (-hf / -hfd)"
    if not server or not Path(server).is_file():
        return [Result("llama.cpp mainline -hf", "example", artifact, "not run", "set LLAMA_SERVER")]
    cache = work / "llama-cache"
    shutil.rmtree(cache, ignore_errors=True)
    env = dict(os.environ, MODEL_ENDPOINT=f"{published.url}/", LLAMA_CACHE=str(cache))
    env.pop("HF_TOKEN", None)
    args = ["-hf", f"{published.target_repo}:F16", "-hfd", f"{published.drafter_repo}:Q8_0",
            "--spec-type", "draft-dflash", "--spec-draft-n-max", str(llama_server.DRAFT_MAX), "-lv", "4",
            *llama_server.mainline_cpu_args()]  # fmt: skip
    r = llama_server.serve(
        Path(server), args, " ".join(args[:6]), ("DFlash extract_layers", "DFlash2 conv kernel"), env
    )
    if r["status"] != "pass":
        return [Result("llama.cpp mainline -hf", "example", artifact, "fail", _failure(r))]
    manifest = yaml.safe_load((published.release / "hubrelease.yaml").read_text(encoding="utf-8"))
    drafter = next(a for a in manifest["artifacts"] if a["path"].endswith("q8_0.gguf"))
    target = yaml.safe_load(
        (published.release.parent / "example-target" / "hubrelease.yaml").read_text(encoding="utf-8")
    )
    target_gguf = next(a for a in target["artifacts"] if a["path"].endswith("f16.gguf"))
    release_commit = _branch_head(cache, published.drafter_repo)
    checks = list(r["checks"])
    for repo, commit, entry in (
        (published.target_repo, published.target_commit, target_gguf),
        (published.drafter_repo, release_commit, drafter),
    ):
        stored = _stored(cache, repo, commit, entry["path"])
        if not stored.is_file() or _sha256(stored) != entry["sha256"]:
            return [Result("llama.cpp mainline -hf", "example", artifact, "fail",
                           f"{stored} is not the pinned {entry['path']} (sha256 {entry['sha256']})")]  # fmt: skip
        checks.append(
            f"downloaded {repo}@{commit[:12]}/{entry['path']} = its pinned sha256 {entry['sha256'][:16]}"
        )
    return [Result("llama.cpp mainline -hf", "example", artifact, "pass", "; ".join(checks))]


def _branch_head(cache: Path, repo: str) -> str:
    """The commit llama.cpp resolved ``main`` to (it writes refs/main, common/hf-cache.cpp:262)."""
    return (
        (cache / f"models--{repo.replace('/', '--')}" / "refs" / "main").read_text(encoding="utf-8").strip()
    )
