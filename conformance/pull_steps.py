"""The ``pull`` step: ``hubrelease pull`` per engine from the loopback Hub, then that engine's own loader.

The example release is published as ``hub_steps.published_example`` publishes it; for each engine
``hubrelease pull DRAFTER --engine E --target T --dir DIR`` downloads what E loads (each file checked
against its pinned sha256), and the folder or GGUF it wrote goes to the consumer unchanged: SGLang's
``load_weights`` (``sglang_load.py``), speculators' ``SpeculatorModel.from_pretrained`` (vLLM's format),
mainline and ik ``llama-server`` with the pulled GGUF as ``--model-draft``. The example publishes no
speculators folder, so vLLM's pull takes a speculators release of the same checkpoint published beside
it. A release that publishes nothing an engine loads is that engine's ``n/a`` row, with pull's own
refusal as the reason.
The seed-shaped releases (``tests/factories/seed_releases.py``: both seeds' layout with tiny real weights
and target) go through the same rows, each paired with its own target: seed 000 (DFlash2 safetensors)
into SGLang's loader, seed 001 (ik GGUFs, target a five-shard GGUF set pinned by sizes) into ik's
``llama-server`` started with the command pull prints (the seed's own flags; ``--model`` is the local
target pull paired with); every other engine is its ``n/a`` row with pull's refusal.
z-lab's loader has its own rows: a DFlash (v1) release of the factories' ``dflash`` checkpoint (the
tier's ``dflash`` variant, built as ``run.prepare`` builds it), pinned to the published example target,
is pulled with ``--engine sglang`` (config.json + safetensors) paired with that target and loaded with
z-lab's ``DFlashDraftModel`` (``zlab_load.py``); the example itself is DFlash2, its z-lab row ``n/a``.
The controls: a target whose config is not the pinned one, and a target set whose shard sizes are not
the pinned ones, are refused before any weight is requested (the loopback Hub's request log counts the
``.safetensors`` / ``.gguf`` downloads).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from conformance.consumers import llama_server
from conformance.hub_steps import Published
from conformance.records import Result, json_subprocess
from hubrelease_loopback.faults import FILE_ROUTES

CONSUMERS = Path(__file__).resolve().parent / "consumers"
WEIGHTS = (".safetensors", ".gguf")
ENGINES = ("sglang", "vllm", "llama.cpp", "ik")
SPECULATORS_REPO = "hubrelease-example/tiny-dflash-speculators"
DFLASH_REPO = "hubrelease-example/tiny-dflash-v1-drafter"
ZLAB = "z-lab"
ZLAB_NA = "z-lab dflash defines DFlashDraftModel only (dflash/model.py); no DFlash2 model to load into"


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
    verifier = f"{published.target_repo}@{published.target_commit}"
    build = ("build", "speculators-drafter", published.release / "checkpoint", "--out", out,
             "--verifier", verifier, "--endpoint", published.url)  # fmt: skip
    _publish(published, out, SPECULATORS_REPO, build, pin=False)
    return SPECULATORS_REPO


def _dflash_release(published: Published, work: Path) -> str:
    """The tier's ``dflash`` variant (DFlash v1, what z-lab loads) as a release pinned to the example target.

    ``build safetensors-drafter`` of the factories' DFlash checkpoint, as ``run.prepare`` builds it; the
    manifest takes the published example's target pin (locked to the target's commit), so pull pairs it.
    """
    from tests.factories.drafters import write_checkpoint

    folder = work / "pull-dflash"
    shutil.rmtree(folder, ignore_errors=True)
    checkpoint = write_checkpoint(folder / "checkpoint", dflash2=False)
    out = folder / "drafter"
    _publish(
        published, out, DFLASH_REPO, ("build", "safetensors-drafter", checkpoint, "--out", out), pin=True
    )
    return DFLASH_REPO


def _publish(published: Published, out: Path, repo: str, build: tuple[str | Path, ...], *, pin: bool) -> None:
    """``build`` into ``out``, ``init``, with ``pin`` the example's target pin, ``render-card``, ``push``."""
    env = dict(os.environ, HF_TOKEN=published.owner_token)
    manifest = out / "hubrelease.yaml"

    def ok(*args: str | Path) -> None:
        proc = _hubrelease(env, *args)
        if proc.returncode != 0:
            raise RuntimeError(f"hubrelease {args[0]} exited {proc.returncode}: {proc.stderr[-600:]}")

    ok(*build)
    ok("init", out, "--repo-id", repo, "--license", "apache-2.0")
    if pin:
        data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
        example = yaml.safe_load((published.release / "hubrelease.yaml").read_text(encoding="utf-8"))
        data.setdefault("pins", {})["targets"] = example["pins"]["targets"]
        manifest.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    ok("render-card", manifest)
    ok("push", manifest, "--endpoint", published.url)


def _weight_requests(published: Published, route: str = FILE_ROUTES) -> list[str]:
    """Weight files requested on ``route`` (``resolve`` answers with a redirect to ``cdn``, the bytes)."""
    return [r.path for r in published.requests.on(route) if r.path.endswith(WEIGHTS)]


@dataclass(frozen=True)
class Source:
    """One release the rows pull: its variant name, ``REPO[@COMMIT]``, and the target each engine pairs
    with (None: unpaired) and its loader starts (a folder for SGLang, a GGUF for the llama-servers)."""

    variant: str
    repo: str
    paired: dict[str, Path | None]
    target: Path
    target_gguf: Path
    run_command: bool = False
    """The llama-server runs the command pull printed (a seed's own flags), not the tier's own."""


def _load(
    engine: str, folder: Path, report: dict[str, Any], source: Source, endpoint: str
) -> dict[str, Any] | str:
    """The consumer's verdict on what pull wrote, or why it was not run."""
    env = os.environ
    if engine == ZLAB:
        if not (env.get("ZLAB_PYTHON") and env.get("ZLAB_DFLASH_SRC")):
            return "set ZLAB_DFLASH_SRC"
        return json_subprocess(
            [env["ZLAB_PYTHON"], str(CONSUMERS / "zlab_load.py"), env["ZLAB_DFLASH_SRC"], str(folder)]
        )
    if engine == "sglang":
        if not env.get("SGLANG_PYTHON"):
            return "set SGLANG_PYTHON"
        argv = [env["SGLANG_PYTHON"], str(CONSUMERS / "sglang_load.py"), str(folder), str(source.target)]
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
    flavor = "mainline" if engine == "llama.cpp" else "ik"
    expect = ("DFlash extract_layers",) if flavor == "mainline" else ("DFlash context ready",)
    if source.run_command:
        argv = report["commands"][0]["argv"]
        return llama_server.serve(Path(server), argv[1:], " ".join(argv[3:7]), expect)
    gguf = folder / next(f["path"] for f in report["files"] if f["path"].endswith(".gguf"))
    return llama_server.run(flavor, Path(server), source.target_gguf, gguf, expect)  # type: ignore[arg-type]


def _engine_row(
    published: Published, engine: str, work: Path, source: Source, *, loader: str | None = None
) -> Result:
    """``pull --engine engine``, then ``loader``'s verdict (default: that engine's own loader)."""
    loader = loader or engine
    consumer, artifact, variant = f"pull -> {loader}", "pulled from the loopback Hub", source.variant
    out = work / "pulled" / variant / loader
    shutil.rmtree(out, ignore_errors=True)
    paired = source.paired.get(engine)
    published.requests.clear()
    code, report, err = _pull(published, source.repo, engine, paired, out)
    if code == 2 and "publishes no files" in err:
        return Result(consumer, variant, artifact, "n/a", err.removeprefix("error: "))
    if code != 0:
        return Result(consumer, variant, artifact, "fail", f"pull exited {code}: {err[-400:]}")
    files = [f["path"] for f in report["files"]]
    weights = _weight_requests(published, "resolve")  # before the loader: speculators fetches the verifier
    loaded = _load(loader, out, report, source, published.url)
    pulled = (
        f"pulled {', '.join(files)} at {report['commit'][:12]} ({len(weights)} weight file(s) resolved), "
        f"each = its pinned sha256; {'pairing ok' if paired else 'no target pinned, not paired'}"
    )
    if isinstance(loaded, str):
        return Result(consumer, variant, artifact, "not run", f"{pulled}; loader: {loaded}")
    status = loaded["status"]
    detail = "; ".join(loaded.get("checks", [])[:3]) if status == "pass" else str(loaded.get("error", ""))
    return Result(consumer, variant, artifact, status, f"{pulled}; {detail}")


def _refused(published: Published, source: Source, engine: str, target: Path, variant: str) -> Result:
    """``target`` must be refused before any weight is requested."""
    published.requests.clear()
    code, _, err = _pull(published, source.repo, engine, target, target.parent / "pulled-refused")
    weights = _weight_requests(published)
    lines = [line for line in err.splitlines() if line.startswith("error: ")] or [err[-200:]]
    if code == 0 or weights:
        return Result(
            "pull (control)", variant, engine, "fail", f"exit {code}, weight requests {weights}: {lines[0]}"
        )
    return Result("pull (control)", variant, engine, "pass",
                  f"refused (exit {code}) with 0 weight requests on the Hub: {' '.join(lines[:2])}")  # fmt: skip


def _control(published: Published, work: Path, source: Source) -> Result:
    """A target with 4 more layers than the pin: pull must refuse it before any weight is requested."""
    folder = work / "pull-wrong-target"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(source.target, folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["num_hidden_layers"] = int(config["num_hidden_layers"]) + 4
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return _refused(published, source, "sglang", folder, "wrong target")


def _seed_control(work: Path, published: Published, source: Source) -> Result:
    """Seed 001's target set without its last two layers (other shard sizes): refused before weights."""
    from tests.factories.seed_releases import shallower_target

    folder = work / "pull-wrong-shards"
    shutil.rmtree(folder, ignore_errors=True)
    shards = shallower_target(folder, source.target_gguf.name.removesuffix("-00001-of-00005.gguf"))
    return _refused(published, source, "ik", shards[0], f"{source.variant} wrong target")


def _seed_sources(published: Published, work: Path) -> list[Source]:
    """Both seed-shaped releases published beside the example, each paired with its own target."""
    from tests.factories.seed_releases import SEED_SHAPED, TARGET_GGUF, publish_seed_shaped

    folder = work / "seeds"
    shutil.rmtree(folder, ignore_errors=True)
    sources = []
    for index, name in enumerate(SEED_SHAPED):
        seed = publish_seed_shaped(published.hub, folder, name)
        gguf = seed.target if seed.engine == "ik" else seed.target / TARGET_GGUF
        sources.append(Source(f"seed {index:03d}", f"{seed.repo}@{seed.commit}", {seed.engine: seed.target},
                              seed.target if seed.engine == "sglang" else seed.target.parent, gguf,
                              run_command=seed.engine == "ik"))  # fmt: skip
    return sources


def run_pull(published: Published, work: Path, target: Path, target_gguf: Path) -> list[Result]:
    """One row per release x engine (pull, then its loader), the z-lab rows and the wrong-target controls."""
    example = Source("example", published.drafter_repo,
                     {"sglang": target, "llama.cpp": target_gguf, "ik": target_gguf}, target, target_gguf)  # fmt: skip
    rows = [_engine_row(published, engine, work, example) for engine in ENGINES if engine != "vllm"]
    spec = Source("example-spec", _speculators_release(published, work), {}, target, target_gguf)
    rows.insert(1, _engine_row(published, "vllm", work, spec))
    rows.append(Result(f"pull -> {ZLAB}", "example", "pulled from the loopback Hub", "n/a", ZLAB_NA))
    dflash = Source("dflash", _dflash_release(published, work), {"sglang": target}, target, target_gguf)
    rows.append(_engine_row(published, "sglang", work, dflash, loader=ZLAB))
    seeds = _seed_sources(published, work)
    for source in seeds:
        rows += [_engine_row(published, engine, work, source) for engine in ENGINES]
    rows.append(_control(published, work, example))
    rows.append(_seed_control(work, published, seeds[1]))
    return rows
