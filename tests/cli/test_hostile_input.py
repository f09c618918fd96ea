"""Hostile local input through the commands that read it: one ``error:`` line, exit 2.

Each case ended in exit 3 (an internal error) or exit 0 on main before the input screen
(hubrelease/safe_parse.py): 5,000-digit integers in ``build eval`` and ``render-card --check`` inputs,
a NUL in a safetensors index, a sum file or a GGUF key, a lone surrogate in an evaluation file,
3,000 safetensors shape dimensions of 4,200 digits (minutes of CPU, then exit 3), shapes whose
element count overflows 64 bits.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from hubrelease.fsutil import STATE_DIR
from hubrelease.lint.target import TARGETS_CACHE, TargetFacts, remember_target
from hubrelease.verify.plan_cache import CACHE_NAME
from tests.factories.bench_runs import ab_spec_parts, eval_spec
from tests.factories.cli import invoke
from tests.factories.drafters import write_raw_gguf
from tests.factories.hostile_input import READERS, write_safetensors
from tests.factories.releases import write_release

BIG = "9" * 5000
DEEP = "[" * 100_000 + "]" * 100_000
SURROGATE = '"\\ud800"'
Case = Callable[[Path], list[str]]


def reader(name: str, raw: str) -> Case:
    """The input of ``READERS[name]`` with ``raw`` as the value of a key of its own."""
    return lambda root: READERS[name](root, raw, "extra")


def spec_text(text: Callable[[dict[str, object]], str], name: str) -> Case:
    def case(root: Path) -> list[str]:
        args = READERS["spec"](root, "1", "extra")
        (root / "spec.json").unlink()
        (root / name).write_text(text(eval_spec(**ab_spec_parts())))
        return [str(root / name) if arg == str(root / "spec.json") else arg for arg in args]

    return case


def labelled(document: dict[str, object]) -> str:
    """A spec whose first configuration's label is a lone surrogate escape."""
    configurations = document["configurations"]
    assert isinstance(configurations, list)
    configurations[0]["label"] = "SURROGATE"
    return json.dumps(document).replace('"SURROGATE"', SURROGATE)


def safetensors(header: str) -> Case:
    def case(root: Path) -> list[str]:
        write_safetensors(root / "model.safetensors", header)
        return ["inspect", str(root / "model.safetensors")]

    return case


def index(weight_map: str) -> Case:
    def case(root: Path) -> list[str]:
        args = READERS["index"](root, "1", "extra")
        (root / "model.safetensors.index.json").write_text(
            '{"metadata": {}, "weight_map": ' + weight_map + "}"
        )
        return args

    return case


def sums(name: bytes) -> Case:
    def case(root: Path) -> list[str]:
        (root / "a.bin").write_bytes(b"a")
        (root / "SHA256SUMS").write_bytes(hashlib.sha256(b"a").hexdigest().encode() + b"  " + name + b"\n")
        return ["verify", str(root / "SHA256SUMS")]

    return case


def gguf(edit: Callable[[bytearray], None]) -> Case:
    def case(root: Path) -> list[str]:
        path = write_raw_gguf(root / "g.gguf", "llama", {"general.x": 1}, [("t", (4, 4), 0, 64)])
        raw = bytearray(path.read_bytes())
        edit(raw)
        path.write_bytes(bytes(raw))
        return ["inspect", str(path)]

    return case


def nul_in_key(raw: bytearray) -> None:
    at = raw.find(b"general.x")
    raw[at + 3] = 0


def overflowing_dims(raw: bytearray) -> None:
    at = raw.find(b"t\x02\x00\x00\x00") + 5  # tensor 't', 2 dims: ne0, ne1 follow
    raw[at : at + 16] = struct.pack("<QQ", 2**62, 2**62)


def shape(dims: str) -> str:
    return '{"a":{"dtype":"F32","shape":[' + dims + '],"data_offsets":[0,4]}}'


CASES: dict[str, tuple[Case, str]] = {
    "bench_serving 5,000-digit integer": (reader("bench_serving", BIG), "more than 4,300 digits"),
    "bench_serving lone surrogate": (reader("bench_serving", SURROGATE), "lone surrogate"),
    "llama-server 5,000-digit integer": (reader("llama_server", BIG), "more than 4,300 digits"),
    "llama-server 100,000-deep": (reader("llama_server", DEEP), "nested more than 64 levels deep"),
    "spec 5,000-digit integer": (reader("spec", BIG), "more than 4,300 digits"),
    "spec 100,000-deep": (reader("spec", DEEP), "nested more than 64 levels deep"),
    "spec YAML 5,000-digit integer": (
        spec_text(lambda d: f"title: {BIG}\n", "spec.yaml"),
        "more than 4,300 digits",
    ),
    "spec label lone surrogate": (spec_text(labelled, "spec.json"), "lone surrogate"),
    "render-card 5,000-digit integer": (reader("render-card", BIG), "more than 4,300 digits"),
    "render-card 100,000-deep": (reader("render-card", DEEP), "nested more than 64 levels deep"),
    "render-card lone surrogate": (reader("render-card", SURROGATE), "lone surrogate"),
    "safetensors 3,000 dims of 4,200 digits": (
        safetensors(shape(",".join(["9" * 4200] * 3000))),
        "more than 20 digits",
    ),
    "safetensors shape overflow": (
        safetensors(shape("4294967296,4294967296,4294967296")),
        "overflows a 64-bit",
    ),
    "safetensors NUL tensor name": (safetensors(shape("1").replace('"a"', '"a\\u0000b"')), "holds a NUL"),
    "safetensors surrogate tensor name": (
        safetensors(shape("1").replace('"a"', '"a\\ud800"')),
        "lone surrogate",
    ),
    "index NUL tensor name": (index('{"a\\u0000b": "model-1.safetensors"}'), "holds a NUL"),
    "index NUL file name": (index('{"a": "model\\u0000.safetensors"}'), "holds a NUL"),
    "sum file NUL in a name": (sums(b"a\x00b"), "holds a NUL"),
    "GGUF NUL in a key name": (gguf(nul_in_key), "holds a NUL"),
    "GGUF element count past INT64_MAX": (gguf(overflowing_dims), "more than INT64_MAX elements"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_input_is_one_line_exit_2(tmp_path: Path, name: str) -> None:
    case, phrase = CASES[name]
    result = invoke(case(tmp_path))
    lines = result.stderr.strip("\n").split("\n")
    assert result.exit_code == 2, (name, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: ") and phrase in lines[0], lines
    assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize("text", [DEEP, '{"a": ' + BIG + "}", '{"a\\u0000b": 1}'])
def test_init_lists_a_hostile_json_file_as_an_artifact(tmp_path: Path, text: str) -> None:
    """init asks each .json whether it is an evaluation file; a hostile one is not, and not exit 3."""
    (tmp_path / "config.json").write_text(text)
    (tmp_path / "w.bin").write_bytes(b"w")
    result = invoke(["init", str(tmp_path), "--repo-id", "acme/x"])
    assert result.exit_code == 0, result.stderr
    assert "path: config.json" in (tmp_path / "hubrelease.yaml").read_text()


def test_a_hostile_plan_cache_is_rebuilt_not_an_internal_error(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    assert invoke(["verify", str(manifest)]).exit_code == 0
    cache = tmp_path / STATE_DIR / CACHE_NAME
    assert cache.exists()
    cache.write_text(DEEP)  # on main: RecursionError, exit 3
    result = invoke(["verify", str(manifest)])
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert cache.read_text() != DEEP  # written again


def test_a_hostile_target_cache_is_forgotten_and_filled_again(tmp_path: Path) -> None:
    (tmp_path / TARGETS_CACHE).parent.mkdir()
    (tmp_path / TARGETS_CACHE).write_text(DEEP)  # on main: RecursionError, exit 3
    facts = TargetFacts(depth=2, hidden=64, vocab=100, source="t.gguf")
    remember_target(tmp_path, "header:abc", facts)
    assert json.loads((tmp_path / TARGETS_CACHE).read_text()) == {"header:abc": facts.to_dict()}
