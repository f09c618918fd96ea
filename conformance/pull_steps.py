"""The ``pull`` step: ``hubrelease pull`` per engine from the loopback Hub, then that engine's own loader.

The example release is published as ``hub_steps.published_example`` publishes it; for each engine
``hubrelease pull DRAFTER --engine E --target T --dir DIR`` downloads what E loads (each file checked
against its pinned sha256), and the folder or GGUF it wrote goes to the consumer unchanged: SGLang's
``load_weights`` (``sglang_load.py``), speculators' ``SpeculatorModel.from_pretrained`` (vLLM's format),
mainline and ik ``llama-server`` with the pulled GGUF as ``--model-draft``. The example publishes no
speculators folder, so vLLM's pull takes a speculators release of the same checkpoint published beside
it. A release that publishes nothing an engine loads is that engine's ``n/a`` row, with pull's own
refusal as the reason.
The control: a target whose config is not the pinned one is refused before any weight is requested
(the loopback Hub's request log counts the ``.safetensors`` / ``.gguf`` downloads).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from conformance.consumers import llama_server
from conformance.hub_steps import Published
from conformance.records import Result, json_subprocess
from hubrelease_loopback.faults import FILE_ROUTES

CONSUMERS = Path(__file__).resolve().parent / "consumers"
WEIGHTS = (".safetensors", ".gguf")
ENGINES = ("sglang", "vllm", "llama.cpp", "ik")
SPECULATORS_REPO = "hubrelease-example/tiny-dflash-speculators"


def _hubrelease(env: dict[str, str], *args: str | Path) -> subprocess.CompletedProcess[str]:
    argv = [str(Path(sys.executable).parent / "hubrelease"), *map(str, args)]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1800)


def _pull(
    published: Published, repo: str, engine: str, target: Path | None, out: Path
) -> tuple[int, dict[str, Any], str]:
    """``hubrelease pull --json`` as a consumer runs it (no token: the release is public)."""
    env = dict(os.environ)
    env.pop("HF_TOKEN", None)
    paired = ["--target", str(target)] if target is not None else []
    proc = _hubrelease(
        env, "pull", repo, "--engine", engine, *paired, "--dir", out, "--json", "--endpoint", published.url
    )
    report = json.loads(proc.stdout) if proc.stdout.lstrip().startswith("{") else {}
    return proc.returncode, report, proc.stderr.strip()


def _speculators_release(published: Published, work: Path) -> str:
    """The example's checkpoint as a speculators release (vLLM's format), published beside it.

    The example publishes no speculators folder, so vLLM's pull needs a release that does:
    ``build speculators-drafter`` (verifier pinned at the published target), ``init``, ``render-card``,
    ``push``. Its manifest pins no target (the verifier is in its config), so it is pulled unpaired.
    """
    out = work / "pull-speculators"
    shutil.rmtree(out, ignore_errors=True)
    env = dict(os.environ, HF_TOKEN=published.owner_token)
    verifier = f"{published.target_repo}@{published.target_commit}"
    manifest = out / "hubrelease.yaml"
    for args in (
        ("build", "speculators-drafter", published.release / "checkpoint", "--out", out, "--verifier", verifier,
         "--endpoint", published.url),
        ("init", out, "--repo-id", SPECULATORS_REPO, "--license", "apache-2.0"),
        ("render-card", manifest),
        ("push", manifest, "--endpoint", published.url),
    ):  # fmt: skip
        proc = _hubrelease(env, *args)
        if proc.returncode != 0:
            raise RuntimeError(f"hubrelease {args[0]} exited {proc.returncode}: {proc.stderr[-600:]}")
    return SPECULATORS_REPO


def _weight_requests(published: Published, route: str = FILE_ROUTES) -> list[str]:
    """Weight files requested on ``route`` (``resolve`` answers with a redirect to ``cdn``, the bytes)."""
    return [r.path for r in published.requests.on(route) if r.path.endswith(WEIGHTS)]


def _load(
    engine: str, folder: Path, files: list[str], target: Path, target_gguf: Path, endpoint: str
) -> dict[str, Any] | str:
    """The consumer's verdict on what pull wrote, or why it was not run."""
    env = os.environ
    if engine == "sglang":
        if not env.get("SGLANG_PYTHON"):
            return "set SGLANG_PYTHON"
        argv = [env["SGLANG_PYTHON"], str(CONSUMERS / "sglang_load.py"), str(folder), str(target)]
        return json_subprocess(argv, dict(env, SGLANG_USE_CPU_ENGINE="1"))
    if engine == "vllm":
        if not env.get("SPECULATORS_PYTHON"):
            return "set SPECULATORS_PYTHON"
        argv = [env["SPECULATORS_PYTHON"], str(CONSUMERS / "speculators_load.py"), str(folder), "-"]
        return json_subprocess(argv, dict(env, HF_ENDPOINT=endpoint, HF_HOME=str(folder.parent / "hf-home")))
    var = "LLAMA_SERVER" if engine == "llama.cpp" else "IK_LLAMA_SERVER"
    server = env.get(var, "")
    if not server or not Path(server).is_file():
        return f"set {var}"
    gguf = folder / next(f for f in files if f.endswith(".gguf"))
    flavor = "mainline" if engine == "llama.cpp" else "ik"
    expect = ("DFlash extract_layers",) if flavor == "mainline" else ("DFlash context ready",)
    return llama_server.run(flavor, Path(server), target_gguf, gguf, expect)  # type: ignore[arg-type]


def _engine_row(published: Published, engine: str, work: Path, target: Path, target_gguf: Path) -> Result:
    consumer, artifact = f"pull -> {engine}", "pulled from the loopback Hub"
    out = work / "pulled" / engine
    shutil.rmtree(out, ignore_errors=True)
    if engine == "vllm":
        repo, variant, paired = _speculators_release(published, work), "example-spec", None
    else:
        repo, variant = published.drafter_repo, "example"
        paired = target_gguf if engine in ("llama.cpp", "ik") else target
    published.requests.clear()
    code, report, err = _pull(published, repo, engine, paired, out)
    if code == 2 and "publishes no files" in err:
        return Result(consumer, variant, artifact, "n/a", err.removeprefix("error: "))
    if code != 0:
        return Result(consumer, variant, artifact, "fail", f"pull exited {code}: {err[-400:]}")
    files = [f["path"] for f in report["files"]]
    weights = _weight_requests(published, "resolve")  # before the loader: speculators fetches the verifier
    loaded = _load(engine, out, files, target, target_gguf, published.url)
    pulled = (
        f"pulled {', '.join(files)} at {report['commit'][:12]} ({len(weights)} weight file(s) resolved), "
        f"each = its pinned sha256; {'pairing ok' if paired else 'no target pinned, not paired'}"
    )
    if isinstance(loaded, str):
        return Result(consumer, variant, artifact, "not run", f"{pulled}; loader: {loaded}")
    status = loaded["status"]
    detail = "; ".join(loaded.get("checks", [])[:3]) if status == "pass" else str(loaded.get("error", ""))
    return Result(consumer, variant, artifact, status, f"{pulled}; {detail}")


def _control(published: Published, work: Path, target: Path) -> Result:
    """A target with 4 more layers than the pin: pull must refuse it before any weight is requested."""
    folder = work / "pull-wrong-target"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(target, folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["num_hidden_layers"] = int(config["num_hidden_layers"]) + 4
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    published.requests.clear()
    code, _, err = _pull(
        published, published.drafter_repo, "sglang", folder, work / "pulled" / "wrong-target"
    )
    weights = _weight_requests(published)
    first = next((line for line in err.splitlines() if line.startswith("error: ")), err[-200:])
    if code == 0 or weights:
        why = f"exit {code}, weight requests {weights}: {first}"
        return Result("pull (control)", "wrong target", "sglang", "fail", why)
    return Result("pull (control)", "wrong target", "sglang", "pass",
                  f"refused (exit {code}) with 0 weight requests on the Hub: {first}")  # fmt: skip


def run_pull(published: Published, work: Path, target: Path, target_gguf: Path) -> list[Result]:
    """One row per engine (pull, then its loader) and the wrong-target control."""
    rows = []
    for engine in ENGINES:
        rows.append(_engine_row(published, engine, work, target, target_gguf))
    rows.append(_control(published, work, target))
    return rows
