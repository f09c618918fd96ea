"""Header pins: `lock` records header digests and compositions from range reads; `verify --remote` re-reads them.

The target is a 5-shard ik GGUF set on a mutable branch; re-uploads keep every size and change only
header bytes (a renamed model, one tensor retyped F32 -> I32), which sizes alone cannot catch.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from hubrelease.formats.gguf_header import GGUFSet, read_gguf_header
from hubrelease.manifest import load_manifest
from hubrelease.onboarding.facts import inspect_composition
from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.faults import FILE_ROUTES
from tests.factories.cli import invoke
from tests.factories.hub import api_for, logged, unique_repo, upload_files
from tests.factories.split_models import write_ik_split_target


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_ik_split_target(tmp_path_factory.mktemp("pins") / "gguf")


def _manifest(folder: Path, release: str, target: str, names: list[str]) -> Path:
    files = "".join(f"        - path: {name}\n" for name in names)
    path = folder / "hubrelease.yaml"
    path.write_text(
        f"schema_version: 1\nrelease:\n  repo_id: {release}\n  license: mit\npins:\n  targets:\n"
        f"    - repo_id: {target}\n      revision: main\n      files:\n{files}",  # a branch: lock resolves it
        encoding="utf-8",
    )
    return path


def _retyped(data: bytes, tensor: str, type_id: int) -> bytes:
    """``data`` with ``tensor``'s type id in its tensor info overwritten (a 1-D tensor: one dim)."""
    name = tensor.encode()
    at = data.index(struct.pack("<Q", len(name)) + name) + 8 + len(name) + 4 + 8
    return data[:at] + struct.pack("<I", type_id) + data[at + 4 :]


def test_lock_pins_headers_and_verify_remote_catches_same_size_reuploads(
    hub: LoopbackHub, tmp_path: Path, shards: list[Path]
) -> None:
    api = api_for(hub)
    target = unique_repo("mutable-target")
    upload_files(api, target, {p.name: p.read_bytes() for p in shards})
    release = unique_repo("release")
    path = _manifest(tmp_path, release, target, [p.name for p in shards])
    upload_files(api, release, {path.name: path.read_bytes()})
    hub.requests.clear()
    result = invoke(["lock", str(path), "--endpoint", hub.url, "--json"])
    assert result.exit_code == 0, result.stderr
    assert hub.requests.count("resolve") <= 2 * len(shards)
    assert hub.requests.bytes_out(FILE_ROUTES) < sum(p.stat().st_size for p in shards) / 100
    fields = {c["field"] for c in json.loads(result.stdout)["changes"]}
    assert {"header_sha256", "composition", "size", "sha256"} <= fields
    pin = load_manifest(path).pins.targets[0]
    local = [read_gguf_header(p) for p in shards]
    assert [f.header_sha256 for f in pin.files] == [h.header_sha256 for h in local]
    assert [f.composition for f in pin.files] == [GGUFSet((h,)).composition() for h in local]

    # Keep following the branch, as a pin of a mutable repo does (sizes + header pins, no sha256).
    tree = YAML().load(path)
    node = tree["pins"]["targets"][0]
    node["revision"], node["unpinned"] = "main", True
    for item in node["files"]:
        del item["sha256"]
    YAML().dump(tree, path)
    upload_files(api, release, {path.name: path.read_bytes()})  # published as edited, as push would
    clean = invoke(["verify", str(path), "--remote", "--endpoint", hub.url, "--json"])
    assert clean.exit_code == 0, clean.stdout + clean.stderr
    renamed = shards[0].read_bytes().replace(b"Ornith-mini", b"Ornith-mimi")
    retyped = _retyped(
        shards[1].read_bytes(), next(t.name for t in local[1].tensors if len(t.shape) == 1), 26
    )
    upload_files(api, target, {shards[0].name: renamed, shards[1].name: retyped})
    hub.requests.clear()
    result = invoke(["verify", str(path), "--remote", "--endpoint", hub.url, "--json"])
    assert result.exit_code == 1
    findings = [f for f in json.loads(result.stdout)["findings"] if f["severity"] == "error"]
    assert {f["kind"] for f in findings} == {"header_mismatch"}
    assert sorted(f["path"].rsplit(":", 1)[1] for f in findings) == sorted(
        [shards[0].name, *[shards[1].name] * 2]
    )
    composition = next(f for f in findings if f["message"].startswith("tensor composition"))
    assert (composition["expected"], composition["actual"]) == (
        "3 F32, 2 IQ2_KS, 2 IQ3_KS, 2 IQ4_KS",
        "2 F32, 2 IQ2_KS, 2 IQ3_KS, 2 IQ4_KS, 1 I32",
    )
    assert hub.requests.count("resolve") <= 2 * len(shards)


def test_a_model_file_whose_header_does_not_parse_is_locked_without_a_header_pin(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    api = api_for(hub)
    target, release = unique_repo("odd-target"), unique_repo("release")
    upload_files(api, target, {"weights.safetensors": b"\x02" * 5000})
    path = _manifest(tmp_path, release, target, ["weights.safetensors"])
    result = invoke(["lock", str(path), "--endpoint", hub.url])
    assert result.exit_code == 0, result.stderr
    assert (
        "weights.safetensors: header length field says" in result.stderr
        and "; no header pin" in result.stderr
    )
    [item] = load_manifest(path).pins.targets[0].files
    assert (item.size, item.header_sha256, item.composition) == (5000, None, None)


def test_import_of_the_split_set_fills_compositions_from_headers(
    hub: LoopbackHub, tmp_path: Path, shards: list[Path]
) -> None:
    api = api_for(hub)
    repo = unique_repo("import-target")
    upload_files(api, repo, {p.name: p.read_bytes() for p in shards})
    hub.requests.clear()
    out = tmp_path / "hubrelease.yaml"
    result = invoke(["import", repo, "--out", str(out), "--endpoint", hub.url])
    assert result.exit_code == 0, result.stderr
    compositions = {a.path: a.composition for a in load_manifest(out).artifacts if a.path.endswith(".gguf")}
    assert compositions == {p.name: inspect_composition(p)[0] for p in shards}
    resolve = [r for r in logged(hub, "resolve", len(shards)) if r.path.endswith(".gguf")]
    assert len(resolve) <= 2 * len(shards)
    assert hub.requests.bytes_out(FILE_ROUTES) < sum(p.stat().st_size for p in shards) / 100
