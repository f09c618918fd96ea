"""Recipes a hostile release controls: any value in any recipe field of an evaluation, a safetensors
drafter or a GGUF drafter, paths through ``..``, absolute, a device, a FIFO, a symlink out of the
release, a file larger than recorded. ``rebuild --check`` meets the contract (tests/fuzz/harness.py)
and writes nothing outside its temporary folder, which it removes.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.factories.built_releases import keep_only
from tests.fuzz.harness import fuzz, run_case, snapshot
from tests.fuzz.values import set_path, values

RECIPES = (
    ("evaluations", "serving-evaluation.json"),
    ("artifacts", "model.safetensors"),
    ("artifacts", "gguf/drafter-q8_0.gguf"),
)
FIELDS = (
    ("builder",),
    ("source",),
    ("out",),
    ("options", "sources"),
    ("options", "sources", 0),
    ("options", "spec"),
    ("options", "tokenizer_from"),
    ("options", "max_shard_size"),
    ("options", "outtype"),
    ("inputs", 0, "path"),
    ("inputs", 0, "size"),
    ("inputs",),
)
HOSTILE = (
    "../" * 12 + "dev/zero", "/dev/zero", "/dev/null", "bench/fifo.jsonl", "bench/link.jsonl",
    "bench/big.jsonl", "../outside.jsonl", "../target.gguf", "..", ".", "a/../../x", "bench",
    "checkpoint/../../outside.jsonl", "../../../../site-packages", "sitecustomize.py", "~/x", "//x",
)  # fmt: skip
"""Paths a rebuild must neither read (devices, FIFOs, files outside) nor write to (outside its folder)."""
paths = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=12))


@pytest.fixture(scope="module")
def source(built_releases: Path) -> Path:
    return built_releases


def _release(built: Path, root: Path) -> Path:
    """A copy of the built release, beside a file outside it, with a FIFO, a symlink out and a big file."""
    shutil.copytree(built / "release", root / "release")
    shutil.copy(built / "target.gguf", root / "target.gguf")
    (root / "outside.jsonl").write_text("{}\n")
    bench = root / "release" / "bench"
    os.mkfifo(bench / "fifo.jsonl")
    (bench / "link.jsonl").symlink_to(root / "outside.jsonl")
    (bench / "big.jsonl").write_bytes(b"\n" * (1 << 20))
    return root / "release" / "hubrelease.yaml"


@fuzz(40)
@given(
    recipe=st.sampled_from(RECIPES),
    field=st.sampled_from(FIELDS),
    value=st.one_of(paths, paths.map(lambda p: [p]), values),
    inputs=st.booleans(),
)
def test_any_recipe_value(
    source: Path, recipe: tuple[str, str], field: tuple[str | int, ...], value: Any, inputs: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        manifest = _release(source, root)
        keep_only(manifest, *recipe, lambda r: set_path(r, field, value))
        work = root / "work"
        work.mkdir()
        before = snapshot(root)
        previous, tempfile.tempdir = tempfile.tempdir, str(work)
        try:
            extra = ["--inputs", str(root)] if inputs else []
            run_case(["rebuild", manifest, "--check", "--json", *extra], manifest.parent)
        finally:
            tempfile.tempdir = previous
        after = snapshot(root)
        changed = {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
        assert not {k for k in changed if not k.startswith("release/")}, changed
        assert list(work.iterdir()) == []
