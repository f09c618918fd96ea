"""Releases whose every artifact was written by a ``hubrelease build ... --manifest``, one per builder
flavour: the raw material of the rebuild and BOM tests.

``write_built_release``: a DFlash2 safetensors drafter, mainline GGUFs in Q8_0 and F16 (the F16 one
split into shards), an ik_llama.cpp F16 GGUF of a DFlash drafter, and two evaluations (bench_serving
JSONL; llama-server rows of an A/B). ``write_dataset_release``: a dataset card built from parquet
shards with a tokenizer. Everything is tiny (a few hundred KiB) and seeded.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.factories.bench_runs import (
    ab_rows,
    eval_spec,
    sglang_line,
    write_csv,
    write_jsonl,
    write_spec,
)
from tests.factories.cli import run_cli
from tests.factories.datasets import conversations, write_parquet_shards, write_tokenizer
from tests.factories.drafters import write_checkpoint, write_target_gguf, write_training_checkpoint

MANIFEST = """\
schema_version: 1
release:
  repo_id: acme/tiny-dflash2
  license: apache-2.0
ignore: [checkpoint/*, ck-ik/*]
"""
DATASET_MANIFEST = """\
schema_version: 1
release:
  repo_id: acme/tiny-conversations
  repo_type: dataset
  license: cc-by-4.0
  title: Tiny conversations
"""
SPLIT_MAX = "96K"
"""The F16 drafter (about 250 KiB) splits into three shards."""


def _ok(*args: str | Path) -> None:
    code, _, err = run_cli(*args)
    assert code == 0, err


def write_built_release(root: Path) -> Path:
    """``root/release`` built by every drafter builder and both evaluation ingests; returns the manifest."""
    release = root / "release"
    release.mkdir(parents=True)
    manifest = release / "hubrelease.yaml"
    manifest.write_text(MANIFEST, encoding="utf-8")
    target = write_target_gguf(root / "target.gguf")
    checkpoint = write_training_checkpoint(release / "checkpoint")
    write_checkpoint(release / "ck-ik", rope="nested")
    m = ("--manifest", manifest)
    _ok("build", "safetensors-drafter", checkpoint, "--out", release, *m)
    gguf = ("build", "gguf-drafter", release, "--flavor", "mainline", "--tokenizer-from", target)
    _ok(*gguf, "--outtype", "q8_0", "--out", release / "gguf" / "drafter-q8_0.gguf", *m)
    _ok(
        *gguf,
        "--outtype",
        "f16",
        "--split-max-size",
        SPLIT_MAX,
        "--out",
        release / "split" / "drafter-f16.gguf",
        *m,
    )
    _ok(
        "build", "gguf-drafter", release / "ck-ik", "--flavor", "ik", "--outtype", "f16",
        "--tokenizer-from", target, "--out", release / "gguf" / "ik-f16.gguf", *m,
    )  # fmt: skip
    bench = release / "bench"
    write_jsonl(bench / "ar.jsonl", [sglang_line(max_concurrency=c) for c in (1, 4)])
    write_jsonl(
        bench / "df.jsonl", [sglang_line(max_concurrency=c, tag="dflash2", accept_length=4.0) for c in (1, 4)]
    )
    write_spec(bench / "serving-spec.json", eval_spec())
    _ok(
        "build", "eval", f"autoregressive={bench / 'ar.jsonl'}", bench / "df.jsonl",
        "--spec", bench / "serving-spec.json", "--flushed-cache",
        "--out", release / "serving-evaluation.json", *m,
    )  # fmt: skip
    write_csv(bench / "ab.csv", ab_rows())
    _ok(
        "build", "eval", bench / "ab.csv", "--hardware", "Test GPU", "--target", "acme/target",
        "--baseline", "A", "--treatment", "B", "--primary", "n_max=3",
        "--out", release / "ab-evaluation.json", *m,
    )  # fmt: skip
    return manifest


def write_dataset_release(root: Path) -> Path:
    """``root/dataset``: parquet shards and a card built from them (tokenizer counts); returns the manifest."""
    release = root / "dataset"
    release.mkdir(parents=True)
    manifest = release / "hubrelease.yaml"
    manifest.write_text(DATASET_MANIFEST, encoding="utf-8")
    write_parquet_shards(release / "data", conversations(40, counts=False), shards=2)
    tokenizer = write_tokenizer(release / "tokenizer.json")
    _ok(
        "build", "dataset-card", release / "data", "--out", release / "README.md", "--tokenizer", tokenizer,
        "--language", "en", "--manifest", manifest,
    )  # fmt: skip
    return manifest


def keep_only(manifest: Path, kind: str, path: str, edit: Callable[[dict[str, Any]], None]) -> None:
    """Keep only the artifact or evaluation ``path`` (``kind``: artifacts, evaluations) in a built
    release's manifest, its recipe changed by ``edit``: one recipe to rebuild."""
    data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    for key in ("artifacts", "evaluations"):
        data[key] = [e for e in data.get(key, []) if key == kind and e["path"] == path]
    [entry] = data[kind]
    edit(entry["recipe"])
    manifest.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
