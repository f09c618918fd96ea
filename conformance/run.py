"""The conformance tier: build the drafter variants, run each real consumer on them, report pass/fail.

Run by ``scripts/conformance.sh`` (which installs or locates the consumers and exports their paths);
``python -m conformance.run --help`` lists the options. Variants:
- ``example``: the committed example release (manifests/example) as published, plus its mainline f16;
- ``dflash`` / ``dflash2``: the test factories' checkpoints (tests/factories/drafters.py) through
  ``hubrelease build safetensors-drafter`` and ``build gguf-drafter`` (ik and mainline, f16 and q8_0).
The ``speculators`` and ``hf`` steps publish the example release to a loopback Hub first (``hub_steps``).
All take the example target (manifests/example-target: the tiny Qwen3 HF folder and its GGUF).
A consumer whose path is not set is reported "not run" with the variable to set, never skipped silently.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import yaml

from conformance.compare import compare, tensor_names
from conformance.consumers import llama_server
from conformance.hub_steps import Published, published_example, run_hf_fetch, run_speculators
from conformance.pull_steps import ZLAB_NA, run_pull
from conformance.records import Result, Variant, json_subprocess

ROOT = Path(__file__).resolve().parent.parent
CONSUMERS = Path(__file__).resolve().parent / "consumers"
OUTTYPES = ("f16", "q8_0")
EXPLAINED = {
    "general.name": "the converter names the file after the folder / card (Metadata.load); hubrelease writes no name",
    "general.size_label": "the converter's parameter-count label; hubrelease writes none",
    "general.type": "the converter's 'model'; hubrelease writes none",
    "general.license": "the converter copies the folder's README.md front matter; the card is not an input of the build",
    "general.tags": "the converter copies the folder's README.md front matter; the card is not an input of the build",
    "dflash.rope.dimension_count": "hubrelease always writes head_dim x partial_rotary_factor; mainline's converter only "
    "with partial_rotary_factor, and the loader's default is the head dim (the same value)",
}
"""Key differences that do not change what the engine loads, and why (README "Conformance tier")."""


def _hubrelease(*args: str) -> None:
    exe = Path(sys.executable).parent / "hubrelease"
    subprocess.run([str(exe), *args], check=True, capture_output=True, text=True)


def _build_ggufs(variant: Variant, out: Path, target_gguf: Path, flavors: tuple[str, ...]) -> None:
    for flavor in flavors:
        for outtype in OUTTYPES:
            if (flavor, outtype) in variant.ggufs:
                continue
            path = out / f"{variant.name}-{flavor}-{outtype}.gguf"
            _hubrelease(
                "build", "gguf-drafter", str(variant.folder), "--flavor", flavor, "--outtype", outtype,
                "--tokenizer-from", str(target_gguf), "--out", str(path),
            )  # fmt: skip
            variant.ggufs[(flavor, outtype)] = path


def prepare(work: Path, target_gguf: Path) -> list[Variant]:
    """The example as published, and the factories' DFlash / DFlash2 built the way a user builds them."""
    from tests.factories.drafters import write_checkpoint

    shutil.rmtree(work / "variants", ignore_errors=True)
    out = work / "variants"
    out.mkdir(parents=True)
    example_dir = ROOT / "manifests" / "example"
    manifest = yaml.safe_load((example_dir / "hubrelease.yaml").read_text(encoding="utf-8"))
    config = json.loads((example_dir / "config.json").read_text(encoding="utf-8"))
    example = Variant("example", "DFlash2DraftModel" in config["architectures"], example_dir)
    for artifact in manifest["artifacts"]:
        recipe = artifact.get("recipe") or {}
        if recipe.get("builder") == "gguf-drafter":
            options = recipe.get("options") or {}
            example.ggufs[(options["flavor"], options["outtype"])] = example_dir / artifact["path"]
    _build_ggufs(example, out, target_gguf, ("mainline",))
    variants = [example]
    for name, dflash2 in (("dflash", False), ("dflash2", True)):
        checkpoint = write_checkpoint(out / name / "checkpoint", dflash2=dflash2)
        variant = Variant(name, dflash2, out / name / "drafter", checkpoint=checkpoint)
        _hubrelease("build", "safetensors-drafter", str(checkpoint), "--out", str(variant.folder))
        # hubrelease refuses ik + DFlash2 (ik 8337e4cd has no DFlash2 architecture).
        _build_ggufs(variant, out / name, target_gguf, ("mainline",) if dflash2 else ("ik", "mainline"))
        variants.append(variant)
    return variants


def _detail(result: dict[str, Any]) -> str:
    if result["status"] == "pass":
        return "; ".join(result.get("checks", []))
    where = f" [{result['where']}]" if result.get("where") else ""
    return f"{result.get('error', '')}{where}"


def run_sglang(variants: list[Variant], target: Path) -> list[Result]:
    python = os.environ.get("SGLANG_PYTHON", "")
    results = []
    for v in variants:
        if not python:
            results.append(Result("sglang", v.name, "safetensors", "not run", "set SGLANG_PYTHON"))
            continue
        env = dict(os.environ, SGLANG_USE_CPU_ENGINE="1")
        r = json_subprocess([python, str(CONSUMERS / "sglang_load.py"), str(v.folder), str(target)], env)
        results.append(Result("sglang", v.name, "safetensors", r["status"], _detail(r)))
    return results


def run_zlab(variants: list[Variant], target: Path) -> list[Result]:
    python, src = os.environ.get("ZLAB_PYTHON", ""), os.environ.get("ZLAB_DFLASH_SRC", "")
    results = []
    for v in variants:
        if v.dflash2:
            results.append(Result("z-lab", v.name, "safetensors", "n/a", ZLAB_NA))
        elif not (python and src):
            results.append(Result("z-lab", v.name, "safetensors", "not run", "set ZLAB_DFLASH_SRC"))
        else:
            r = json_subprocess([python, str(CONSUMERS / "zlab_load.py"), src, str(v.folder)])
            results.append(Result("z-lab", v.name, "safetensors", r["status"], _detail(r)))
    return results


def run_servers(variants: list[Variant], target_gguf: Path) -> list[Result]:
    results = []
    for engine, env_name, consumer in (
        ("mainline", "LLAMA_SERVER", "llama.cpp mainline"),
        ("ik", "IK_LLAMA_SERVER", "ik_llama.cpp"),
    ):
        server = os.environ.get(env_name, "")
        for v in variants:
            for outtype in OUTTYPES:
                gguf = v.ggufs.get((engine, outtype))
                artifact = f"{engine} {outtype} GGUF"
                if gguf is None:
                    why = "ik_llama.cpp 8337e4cd has no DFlash2 architecture (hubrelease refuses --flavor ik)"
                    results.append(Result(consumer, v.name, artifact, "n/a", why))
                elif not server or not Path(server).is_file():
                    why = f"{env_name}={server} is not a file" if server else f"set {env_name}"
                    results.append(Result(consumer, v.name, artifact, "not run", why))
                else:
                    expect = ("DFlash extract_layers", "DFlash2 conv kernel")[: 2 if v.dflash2 else 1]
                    expect = expect if engine == "mainline" else ("DFlash context ready",)
                    r = llama_server.run(engine, Path(server), target_gguf, gguf, expect)  # type: ignore[arg-type]
                    results.append(Result(consumer, v.name, artifact, r["status"], _detail(r)))
    return results


def _convert(python: str, src: str, model: Path, target: str, outtype: str, out: Path) -> str | None:
    """Run the engine's converter; the error's last lines when it fails."""
    out.parent.mkdir(parents=True, exist_ok=True)
    argv = [python, str(CONSUMERS / "convert.py"), src, str(model), target, outtype, str(out)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    return None if proc.returncode == 0 else " | ".join(proc.stderr.strip().splitlines()[-3:])


def _compared(consumer: str, variant: str, artifact: str, ours: Path, theirs: Path) -> Result:
    diffs = compare(ours, theirs)
    unexplained = [d for d in diffs if d.what != "tensor order" and d.what[4:] not in EXPLAINED]
    explained = sorted(d.what[4:] for d in diffs if d.what[4:] in EXPLAINED)
    detail = "; ".join(str(d) for d in unexplained) or (
        f"all {len(tensor_names(ours))} tensors identical (type, shape, bytes); every key identical but "
        f"the explained {', '.join(explained) or 'none'}"
    )
    return Result(consumer, variant, artifact, "fail" if unexplained else "pass", detail)


def run_converters(variants: list[Variant], target: Path, target_gguf: Path, work: Path) -> list[Result]:
    python = os.environ.get("CONVERT_PYTHON", "")
    results = []
    for flavor, env_name, consumer in (
        ("mainline", "LLAMA_SRC", "converter mainline"),
        ("ik", "IK_LLAMA_SRC", "converter ik"),
    ):
        src = os.environ.get(env_name, "")
        if not (python and src):
            results.append(Result(consumer, "all", "GGUF", "not run", f"set {env_name} and CONVERT_PYTHON"))
            continue
        # The target GGUF the drafters borrow from: tests/factories/targets.py writes what the converter writes.
        theirs = work / "converted" / f"target-{flavor}-f16.gguf"
        error = _convert(python, src, target, "-", "f16", theirs)
        results.append(
            Result(consumer, "target", "f16 GGUF", "fail", f"converter failed: {error}")
            if error
            else _compared(consumer, "target", "f16 GGUF", target_gguf, theirs)
        )
        for v in variants:
            for outtype in OUTTYPES:
                ours = v.ggufs.get((flavor, outtype))
                artifact = f"{flavor} {outtype} GGUF"
                if ours is None:
                    why = "ik's converter has no DFlash2DraftModel (convert_hf_to_gguf.py registers DFlashDraftModel only)"
                    results.append(Result(consumer, v.name, artifact, "n/a", why))
                    continue
                theirs = work / "converted" / f"{v.name}-{flavor}-{outtype}.gguf"
                error = _convert(python, src, v.folder, str(target), outtype, theirs)
                results.append(
                    Result(consumer, v.name, artifact, "fail", f"converter failed: {error}")
                    if error
                    else _compared(consumer, v.name, artifact, ours, theirs)
                )
    return results


def _rejected(consumer: str, variant: str, artifact: str, result: dict[str, Any]) -> Result:
    """A control passes when the consumer refuses the broken input."""
    if result["status"] == "fail":
        return Result(consumer, variant, artifact, "pass", f"rejected as it must be: {_detail(result)}")
    return Result(consumer, variant, artifact, "fail", f"accepted a broken input: {_detail(result)}")


def run_controls(variants: list[Variant], target: Path, target_gguf: Path, work: Path) -> list[Result]:
    """Broken inputs each consumer must refuse, so a pass above means something.

    - a checkpoint without ``layers.0.mlp.up_proj.weight``: SGLang's ``load_weights`` skips what is not
      there without a word, the harness's parameter check must catch it; z-lab's strict load refuses it;
    - GGUFs without ``blk.0.ffn_up.weight``: both loaders must refuse them;
    - GGUFs whose target layers include the target's last layer (what ``build gguf-drafter`` refuses):
      mainline must not serve it, ik must not draft with it.
    """
    from tests.factories.drafters import mutate_gguf, write_checkpoint

    out = work / "controls"
    shutil.rmtree(out, ignore_errors=True)
    dflash = next(v for v in variants if v.name == "dflash")
    missing = write_checkpoint(out / "missing-up-proj", drop=["layers.0.mlp.up_proj.weight"], rotary=False)
    # The built drafter's config (block_size at the top level too), so the missing tensor is the only fault.
    shutil.copy(dflash.folder / "config.json", missing / "config.json")
    results = []
    env = os.environ
    name, artifact = "no up_proj", "safetensors"
    if env.get("SGLANG_PYTHON"):
        argv = [env["SGLANG_PYTHON"], str(CONSUMERS / "sglang_load.py"), str(missing), str(target)]
        r = json_subprocess(argv, dict(env, SGLANG_USE_CPU_ENGINE="1"))
        results.append(_rejected("sglang (control)", name, artifact, r))
    if env.get("ZLAB_PYTHON") and env.get("ZLAB_DFLASH_SRC"):
        r = json_subprocess(
            [env["ZLAB_PYTHON"], str(CONSUMERS / "zlab_load.py"), env["ZLAB_DFLASH_SRC"], str(missing)]
        )
        results.append(_rejected("z-lab (control)", name, artifact, r))
    last = int(json.loads((target / "config.json").read_text(encoding="utf-8"))["num_hidden_layers"]) - 1
    for engine, env_name, consumer, layers in (
        (
            "mainline",
            "LLAMA_SERVER",
            "llama.cpp mainline (control)",
            {"dflash.target_layers": [2, 4, last + 1]},
        ),
        (
            "ik",
            "IK_LLAMA_SERVER",
            "ik_llama.cpp (control)",
            {"dflash-draft.dflash.target_layer_ids": [1, 3, last]},
        ),
    ):
        server = env.get(env_name, "")
        if not server or not Path(server).is_file():
            continue
        source = dflash.ggufs[(engine, "f16")]
        dropped = mutate_gguf(source, out / f"{engine}-no-ffn-up.gguf", drop_tensors=["blk.0.ffn_up.weight"])
        r = llama_server.run(engine, Path(server), target_gguf, dropped)  # type: ignore[arg-type]
        results.append(_rejected(consumer, "no ffn_up", f"{engine} f16 GGUF", r))
        last_layer = mutate_gguf(source, out / f"{engine}-last-layer.gguf", set_kv=layers)
        r = llama_server.run(engine, Path(server), target_gguf, last_layer)  # type: ignore[arg-type]
        results.append(_rejected(consumer, f"layer {last}", f"{engine} f16 GGUF", r))
    return results


def _version(argv: list[str]) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except OSError:
        return "unknown"
    text = proc.stdout + proc.stderr
    match = re.search(r"version: (.+)", text)
    return match.group(1) if match else (text.strip().splitlines() or ["unknown"])[-1][:120]


def _packages(python: str, package: str) -> str | None:
    """``package x (PyPI), torch y, transformers z`` as installed for ``python``."""
    code = f"import importlib.metadata as m; print(*(m.version(p) for p in ({package!r}, 'torch', 'transformers')))"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True).stdout.split()
    return f"{package} {out[0]} (PyPI), torch {out[1]}, transformers {out[2]}" if len(out) == 3 else None


def environment() -> dict[str, str]:
    """Machine and consumer versions, for RESULTS.md."""
    env = os.environ
    cpuinfo = Path("/proc/cpuinfo")
    model = re.search(r"model name\s*: (.+)", cpuinfo.read_text() if cpuinfo.exists() else "")
    info = {
        "machine": f"{model.group(1) if model else platform.machine()}, {os.cpu_count()} cores, "
        f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
    }
    for name, var in (("sglang", "SGLANG_PYTHON"), ("speculators", "SPECULATORS_PYTHON")):
        if env.get(var):
            found = _packages(env[var], name)
            if found:
                info[name] = found
    if env.get("ZLAB_DFLASH_SRC"):
        info["z-lab dflash"] = (
            f"{env['ZLAB_DFLASH_SRC']} (commit {env.get('ZLAB_DFLASH_COMMIT', 'not given')})"
        )
    for name, var in (("llama.cpp mainline", "LLAMA"), ("ik_llama.cpp", "IK_LLAMA")):
        if env.get(f"{var}_SERVER"):
            version = _version([env[f"{var}_SERVER"], "--version"])
            info[name] = f"llama-server {version}, commit {env.get(f'{var}_COMMIT', 'not given')}"
    return info


def _markdown(results: list[Result], info: dict[str, str]) -> str:
    lines = ["| | |", "|---|---|", *(f"| {k} | {v} |" for k, v in info.items()), ""]
    lines += ["| consumer | variant | artifact | result | detail |", "|---|---|---|---|---|"]
    for r in results:
        detail = r.detail.replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r.consumer} | {r.variant} | {r.artifact} | **{r.status}** | {detail} |")
    return "\n".join(lines)


_START, _END = "<!-- conformance:start -->", "<!-- conformance:end -->"


def _previous(block: str) -> tuple[list[Result], dict[str, str]]:
    """The rows and machine lines of an earlier generated block (``_markdown``'s layout)."""
    rows, info = [], {}
    for line in block.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
        if len(cells) == 5 and cells[0] not in ("consumer", "---"):
            rows.append(
                Result(cells[0], cells[1], cells[2], cells[3].strip("*"), cells[4].replace("\\|", "|"))
            )
        elif len(cells) == 2 and cells[0] not in ("", "---"):
            info[cells[0]] = cells[1]
    return rows, info


def write_results(path: Path, results: list[Result], info: dict[str, str]) -> None:
    """Update the generated block of RESULTS.md: the rows of the consumers that ran are replaced, the
    others kept (a run of some steps does not erase the rest); the hand-written notes around it stay."""
    text = (
        path.read_text(encoding="utf-8") if path.exists() else f"# Conformance results\n\n{_START}\n{_END}\n"
    )
    head, _, rest = text.partition(_START)
    block, _, tail = rest.partition(_END)
    rows, known = _previous(block)
    ran = {r.consumer for r in results}
    merged = [r for r in rows if r.consumer not in ran]
    at = next((i for i, r in enumerate(rows) if r.consumer in ran), len(merged))
    merged[at:at] = results
    path.write_text(f"{head}{_START}\n{_markdown(merged, known | info)}\n{_END}{tail}", encoding="utf-8")


Step = Callable[[], list[Result]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--work", type=Path, default=Path(os.environ.get("CONFORMANCE_WORK", "conformance-work"))
    )
    parser.add_argument(
        "--only",
        default="sglang,z-lab,servers,converters,controls,speculators,hf,pull",
        help="comma-separated steps",
    )
    parser.add_argument(
        "--results", type=Path, help="update this RESULTS.md's generated block (rows of the consumers run)"
    )
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    target = ROOT / "manifests" / "example-target"
    target_gguf = next(iter(sorted(target.glob("*.gguf"))))
    variants = prepare(args.work, target_gguf)
    steps: dict[str, Step] = {
        "sglang": lambda: run_sglang(variants, target),
        "z-lab": lambda: run_zlab(variants, target),
        "servers": lambda: run_servers(variants, target_gguf),
        "converters": lambda: run_converters(variants, target, target_gguf, args.work),
        "controls": lambda: run_controls(variants, target, target_gguf, args.work),
        "speculators": lambda: run_speculators(variants, args.work, hub()),
        "hf": lambda: run_hf_fetch(args.work, hub()),
        "pull": lambda: run_pull(hub(), args.work, target, target_gguf),
    }
    results: list[Result] = []
    with contextlib.ExitStack() as stack:
        published: list[Published] = []

        def hub() -> Published:
            """The example release on a loopback Hub, published once for the steps that need it."""
            if not published:
                published.append(stack.enter_context(published_example(args.work)))
            return published[0]

        for name in args.only.split(","):
            step = steps[name.strip()]
            for result in step():
                print(
                    f"{result.status:8} {result.consumer:20} {result.variant:8} {result.artifact:18} {result.detail[:200]}"
                )
                results.append(result)
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2) + "\n", encoding="utf-8")
    if args.results:
        write_results(args.results, results, environment())
    return 1 if any(r.status == "fail" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
