"""Seed-shaped releases: both committed seed releases with real, tiny weights, published to a loopback Hub.

Each keeps its seed's folder, file names, cards and evaluations (``seeds.shrink_seed``); only the weights
and the target are small. Seed 000 (``ornith-1.5-dflash2``, SGLang) gets a DFlash2 ``config.json`` +
``model.safetensors`` as ``build safetensors-drafter`` writes them (every key the seed's config states,
tiny dims) and its NVFP4 target pin, a commit, becomes the example target published under that name.
Seed 001 (``ornith-1.0-dflash-gguf``, ik_llama.cpp) gets its three drafter GGUFs from ``build
gguf-drafter --flavor ik`` (ik's ``dflash-draft`` keys and tensor names) and its target, pinned by the
sizes of five shards, becomes the example target's GGUF split into five files of the pinned names.
The stand-in of the "mixed" recommended file mixes Q8_0 and F16 tensors: ik's own mixed types
(IQ3_KS, IQ4_KSS) need rows of 256 elements, wider than any row of a tiny drafter.

Every repo id's namespace gets a suffix and the weights are drawn from it, so one session-wide Hub
holds any number of publications and no two share a stored blob (a test may corrupt its own); the
conformance tier publishes the same releases (``conformance.pull_steps``).
"""

from __future__ import annotations

import re
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from hubrelease.formats.gguf_header import read_gguf
from hubrelease.fsutil import STATE_DIR
from hubrelease.manifest import load_manifest
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import run_cli
from tests.factories.drafters import mutate_gguf, write_checkpoint
from tests.factories.hub import api_for, upload_release
from tests.factories.seeds import shrink_seed

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_TARGET = REPO_ROOT / "manifests" / "example-target"
TARGET_GGUF = "tiny-qwen3-f16.gguf"
SeedName = Literal["ornith-1.5-dflash2", "ornith-1.0-dflash-gguf"]
SEED_SHAPED: tuple[SeedName, ...] = ("ornith-1.5-dflash2", "ornith-1.0-dflash-gguf")
SHARDS = 5
GGUF_STEM = "Ornith-DFLASH-m1"
MIXED_F16 = ("ffn_up", "ffn_down", "ffn_gate")
"""Tensors the "mixed" stand-in keeps in F16 (the rest Q8_0, norms F32)."""


@dataclass(frozen=True)
class SeedRelease:
    """One seed-shaped release as published: what ``pull`` reads and what its engine loads."""

    name: SeedName
    repo: str
    commit: str
    manifest: Path
    engine: Literal["sglang", "ik"]
    """The engine the seed was measured with: the one its files are for."""
    loads: tuple[str, ...]
    """The repo paths that engine loads."""
    target: Path
    """The local target that pairs: a folder (seed 000) or the first GGUF shard (seed 001)."""
    target_repo: str
    target_commit: str


def _ok(*args: str | Path) -> None:
    code, _, err = run_cli(*args)
    assert code == 0, (args, err)


def _namespaced(folder: Path, suffix: str) -> None:
    """Every repo id the manifest names moved to ``namespace-suffix/`` in the manifest and evaluations
    (the same text replacement everywhere, so the evaluations' provenance still binds)."""
    manifest = folder / "hubrelease.yaml"
    seed = load_manifest(manifest)
    repos = [seed.release.repo_id, *(p.repo_id for kind in ("targets", "base_drafters", "datasets")
                                      for p in getattr(seed.pins, kind))]  # fmt: skip
    namespaces = sorted({r.split("/")[0] for r in repos}, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, namespaces)) + r")/")
    for path in [manifest, *(folder / e for e in seed.evaluation_paths)]:
        path.write_text(pattern.sub(rf"\1-{suffix}/", path.read_text(encoding="utf-8")), encoding="utf-8")


def _dflash2_weights(folder: Path, scratch: Path, seed: int) -> None:
    """config.json + model.safetensors as ``build safetensors-drafter`` writes a DFlash2 checkpoint."""
    checkpoint = write_checkpoint(scratch / "checkpoint", dflash2=True, seed=seed)
    built = scratch / "built"
    _ok("build", "safetensors-drafter", checkpoint, "--out", built)
    for name in ("config.json", "model.safetensors"):
        shutil.copyfile(built / name, folder / name)


def split_target(folder: Path, stem: str, *, source: Path = EXAMPLE_TARGET / TARGET_GGUF) -> list[Path]:
    """A target GGUF (the example target's) as five files ``STEM-0000N-of-00005.gguf`` (gguf-py's split layout)."""
    per_shard = -(-len(read_gguf(source).shards[0].tensors) // SHARDS)
    folder.mkdir(parents=True, exist_ok=True)
    mutate_gguf(source, folder / f"{stem}.gguf", split_max_tensors=per_shard)
    paths = [folder / f"{stem}-{i:05d}-of-{SHARDS:05d}.gguf" for i in range(1, SHARDS + 1)]
    assert all(p.is_file() for p in paths), sorted(folder.iterdir())
    return paths


def shallower_target(folder: Path, stem: str, drop: int = 2) -> list[Path]:
    """The example target without its last ``drop`` layers, split as ``split_target`` splits: another
    model whose shards have other sizes (a wrong target for seed 001)."""
    source = EXAMPLE_TARGET / TARGET_GGUF
    header = read_gguf(source).shards[0]
    layers = int(str(header.value("qwen3.block_count")))
    deeper = tuple(f"blk.{n}." for n in range(layers - drop, layers))
    dropped = [t.name for t in header.tensors if t.name.startswith(deeper)]
    folder.mkdir(parents=True, exist_ok=True)
    whole = mutate_gguf(
        source, folder / "whole.gguf", set_kv={"qwen3.block_count": layers - drop}, drop_tensors=dropped
    )
    return split_target(folder / "split", stem, source=whole)


def _gguf_weights(folder: Path, scratch: Path, tokenizer_from: Path, seed: int) -> None:
    """The seed's f16, q8_0 and mixed ("q4") drafters and its rope-1e7 benchmark file, ik flavour."""
    checkpoint = write_checkpoint(scratch / "checkpoint", dflash2=False, seed=seed)
    built = {}
    for outtype in ("f16", "q8_0"):
        built[outtype] = scratch / f"{GGUF_STEM}-{outtype}.gguf"
        _ok("build", "gguf-drafter", checkpoint, "--flavor", "ik", "--outtype", outtype,
            "--tokenizer-from", tokenizer_from, "--out", built[outtype])  # fmt: skip
        shutil.copyfile(built[outtype], folder / built[outtype].name)
    names = [t.name for t in read_gguf(built["f16"]).shards[0].tensors]
    mixed = [n for n in names if any(f".{part}." in n for part in MIXED_F16)]
    mutate_gguf(built["q8_0"], folder / f"{GGUF_STEM}-q4.gguf", take_from=built["f16"], take=mixed)
    (folder / "bench").mkdir(exist_ok=True)
    shutil.copyfile(built["f16"], folder / "bench" / "Ornith-DFLASH-rt-f16-rope1e7.gguf")


def publish_seed_shaped(hub: LoopbackHub, tmp_path: Path, name: SeedName) -> SeedRelease:
    """Seed ``name`` with tiny real weights and target, published to ``hub`` (see the module docstring)."""
    folder = shutil.copytree(
        REPO_ROOT / "manifests" / name, tmp_path / name, ignore=shutil.ignore_patterns(STATE_DIR)
    )
    scratch = tmp_path / f"{name}-scratch"
    suffix = uuid.uuid4().hex[:8]
    _namespaced(folder, suffix)
    seed = load_manifest(folder / "hubrelease.yaml")
    pin = seed.pins.targets[0]
    if name == "ornith-1.5-dflash2":
        _dflash2_weights(folder, scratch, int(suffix, 16))
        target = shutil.copytree(
            EXAMPLE_TARGET, scratch / "target", ignore=shutil.ignore_patterns(STATE_DIR, "*.yaml")
        )
        files = {p.name: p.read_bytes() for p in sorted(target.iterdir())}
        engine: Literal["sglang", "ik"] = "sglang"
        loads: tuple[str, ...] = ("config.json", "model.safetensors")
    else:
        stem = pin.files[0].path.removesuffix(f"-00001-of-{SHARDS:05d}.gguf")
        shards = split_target(scratch / "target", stem)
        _gguf_weights(folder, scratch, shards[0], int(suffix, 16))
        target, files = shards[0], {p.name: p.read_bytes() for p in shards}
        engine, loads = "ik", (f"{GGUF_STEM}-q4.gguf",)
    manifest = shrink_seed(folder, hub, {pin.repo_id: files})
    api = api_for(hub)
    repo = seed.release.repo_id
    target_commit = api.repo_info(pin.repo_id).sha or ""
    commit = upload_release(api, repo, folder, manifest)
    return SeedRelease(name, repo, commit, manifest, engine, loads, target, pin.repo_id, target_commit)
