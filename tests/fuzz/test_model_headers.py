"""Mutated GGUF and safetensors files from the factories, and mutated drafter configs, through ``inspect`` and ``lint``.

Edits land in the header (where lengths, counts, types and offsets live); a cut may land anywhere.
Bounds per case and the contract: tests/fuzz/harness.py.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hubrelease.formats.gguf_header import read_gguf_header
from tests.factories.drafters import write_checkpoint, write_ik_mixed_gguf, write_target_gguf
from tests.fuzz.harness import fuzz, run_case
from tests.fuzz.values import set_path

Edits = st.lists(st.tuples(st.integers(min_value=0), st.integers(0, 255)), min_size=1, max_size=8)


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("headers")
    write_ik_mixed_gguf(root / "ik.gguf")
    write_target_gguf(root / "target.gguf")
    write_checkpoint(root / "ck")
    return root


def _mutate(data: bytes, header_end: int, edits: list[tuple[int, int]], cut: int | None) -> bytes:
    out = bytearray(data)
    for at, value in edits:
        out[at % header_end] = value
    return bytes(out[:cut] if cut is not None else out)


def _case(folder: Path, name: str) -> Path:
    case = folder / "case"
    shutil.rmtree(case, ignore_errors=True)
    case.mkdir()
    return case / name


@fuzz(150)
@given(
    which=st.sampled_from(["ik.gguf", "target.gguf"]),
    edits=Edits,
    cut=st.none() | st.integers(0, 4000),
    command=st.sampled_from(["inspect", "inspect --json", "lint", "lint --json", "lint --config"]),
)
def test_mutated_gguf(
    sources: Path, which: str, edits: list[tuple[int, int]], cut: int | None, command: str
) -> None:
    source = sources / which
    path = _case(sources, which)
    path.write_bytes(_mutate(source.read_bytes(), read_gguf_header(source).data_offset, edits, cut))
    args = command.split()
    if args[-1] == "--config":
        args.append(str(sources / "ck" / "config.json"))
    run_case([args[0], path, *args[1:]], path.parent)


@fuzz(120)
@given(
    edits=Edits,
    cut=st.none() | st.integers(0, 3000),
    length=st.none() | st.sampled_from([0, 1, 7, 2**31, 2**63, 2**64 - 1]),
    command=st.sampled_from(["inspect", "inspect --json", "lint"]),
)
def test_mutated_safetensors(
    sources: Path, edits: list[tuple[int, int]], cut: int | None, length: int | None, command: str
) -> None:
    source = sorted((sources / "ck").glob("*.safetensors"))[0]
    data = source.read_bytes()
    header_end = 8 + int.from_bytes(data[:8], "little")
    mutated = _mutate(data, header_end, edits, cut)
    if length is not None:
        mutated = length.to_bytes(8, "little") + mutated[8:]
    path = _case(sources, "model.safetensors")
    path.write_bytes(mutated)
    args = command.split()
    run_case([args[0], path, *args[1:]], path.parent)


config_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**65), max_value=2**65),
    st.sampled_from([10**400, -1, 0, 2**31]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.lists(st.integers(-3, 2**40), max_size=4),
    st.dictionaries(st.text(max_size=6), st.integers(), max_size=2),
)
CONFIG_KEYS = (
    "hidden_size",
    "num_hidden_layers",
    "num_attention_heads",
    "head_dim",
    "vocab_size",
    "rms_norm_eps",
    "rope_parameters",
    "rope_theta",
    "sliding_window",
    "layer_types",
    "architectures",
    "dflash_config",
    "dflash_config.block_size",
    "dflash_config.target_layer_ids",
    "dflash_config.mask_token_id",
)


@fuzz(80)
@given(
    key=st.sampled_from(CONFIG_KEYS),
    value=config_values,
    raw=st.booleans(),
    target=st.sampled_from(["ik.gguf", "ck"]),
)
def test_lint_against_a_mutated_config(sources: Path, key: str, value: Any, raw: bool, target: str) -> None:
    """Wrong types and out-of-range numbers in config.json (JSON allows 10**400; Python parses it)."""
    config = json.loads((sources / "ck" / "config.json").read_text(encoding="utf-8"))
    set_path(config, tuple(key.split(".")), value)
    path = _case(sources, "config.json")
    path.write_text(
        json.dumps(config) if not raw else json.dumps(config)[: len(json.dumps(config)) // 2],
        encoding="utf-8",
    )
    subject = sources / target
    if target == "ck":
        subject = path.parent / "ck"
        shutil.copytree(sources / "ck", subject)
        shutil.copy(path, subject / "config.json")
    run_case(["lint", subject, "--config", path], path.parent)
