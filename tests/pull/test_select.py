"""Which files each engine loads, from the manifest alone: flavours, split sets, z-lab vs speculators folders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hubrelease.errors import InputError
from hubrelease.manifest import load_manifest
from hubrelease.manifest.models import Manifest
from hubrelease.pull.select import EngineName, config_paths, engine_files
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import invoke
from tests.factories.hub import api_for, unique_repo, upload_release

SHA = "0" * 64


def _manifest(*artifacts: dict[str, Any]) -> Manifest:
    return Manifest.model_validate(
        {
            "schema_version": 1,
            "release": {"repo_id": "acme/drafter", "license": "mit"},
            "artifacts": [{"size": 1, "sha256": SHA, **a} for a in artifacts],
        }
    )


def _gguf(path: str, flavor: str | None = None, **extra: Any) -> dict[str, Any]:
    recipe = {"recipe": {"builder": "gguf-drafter", "options": {"flavor": flavor}}} if flavor else {}
    return {"path": path, **recipe, **extra}


RELEASE = _manifest(
    {"path": "config.json"},
    {"path": "model.safetensors", "role": "recommended"},
    {"path": "speculators/config.json"},
    {"path": "speculators/model.safetensors"},
    _gguf("gguf/q8_0.gguf", "mainline"),
    _gguf("split/f16-00001-of-00002.gguf", "mainline", role="recommended"),
    _gguf("split/f16-00002-of-00002.gguf", "mainline"),
    _gguf("gguf/ik-iq4.gguf", composition={"IQ4_KS": 3, "F32": 2}),
)
CONFIGS: dict[str, dict[str, Any]] = {
    "config.json": {"architectures": ["DFlashDraftModel"]},
    "speculators/config.json": {"speculators_model_type": "dflash"},
}


@pytest.mark.parametrize(
    ("engine", "paths"),
    [
        ("sglang", ["config.json", "model.safetensors"]),
        ("vllm", ["speculators/config.json", "speculators/model.safetensors"]),
        ("llama.cpp", ["split/f16-00001-of-00002.gguf", "split/f16-00002-of-00002.gguf"]),
        ("ik", ["gguf/ik-iq4.gguf"]),  # no recipe: a type only ik_llama.cpp loads marks it
    ],
)
def test_each_engine_gets_only_its_files(engine: Any, paths: list[str]) -> None:
    assert [a.path for a in engine_files(RELEASE, engine, CONFIGS)] == paths


def test_a_split_set_the_manifest_lists_in_part_is_refused() -> None:
    partial = _manifest(
        _gguf("f16-00001-of-00003.gguf", "mainline"), _gguf("f16-00002-of-00003.gguf", "mainline")
    )
    with pytest.raises(InputError, match="lists 2 of the 3 shards"):
        engine_files(partial, "llama.cpp", {})


def test_a_release_without_files_for_the_engine_is_exit_2() -> None:
    with pytest.raises(InputError, match="no files ik loads") as caught:
        engine_files(_manifest(_gguf("q8_0.gguf", "mainline")), "ik", {})
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("engine", "expected"),
    [
        ("ik", {"gguf/ik-f16.gguf"}),
        ("llama.cpp", {"gguf/drafter-q8_0.gguf"}),  # no GGUF is recommended: the first mainline one
        ("sglang", {"config.json", "model.safetensors"}),
    ],
)
def test_a_release_every_builder_wrote_pulls_each_engines_files_from_the_hub(
    hub: LoopbackHub, built_releases: Path, tmp_path: Path, engine: str, expected: set[str]
) -> None:
    manifest = built_releases / "release" / "hubrelease.yaml"
    repo = unique_repo()
    upload_release(api_for(hub), repo, manifest.parent, manifest)
    out = tmp_path / "pulled"
    result = invoke(["pull", repo, "--engine", engine, "--dir", str(out), "--endpoint", hub.url])
    assert result.exit_code == 0, result.stderr
    assert {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} == expected


SEEDS = Path(__file__).resolve().parent.parent.parent / "manifests"


@pytest.mark.parametrize(
    ("seed", "engine", "expected"),
    [
        ("ornith-1.0-dflash-gguf", "ik", ["Ornith-DFLASH-m1-q4.gguf"]),
        ("ornith-1.0-dflash-gguf", "llama.cpp", None),  # measured with ik only: no mainline file
        ("ornith-1.0-dflash-gguf", "sglang", None),
        ("ornith-1.0-dflash-gguf", "vllm", None),
        ("ornith-1.5-dflash2", "sglang", ["config.json", "model.safetensors"]),
        ("ornith-1.5-dflash2", "vllm", None),
        ("ornith-1.5-dflash2", "llama.cpp", None),
        ("ornith-1.5-dflash2", "ik", None),
    ],
)
def test_the_seed_releases_select_what_each_engine_loads(
    seed: str, engine: EngineName, expected: list[str] | None
) -> None:
    """The seeds publish no weights here: the selection their manifests imply, from their own configs."""
    manifest = load_manifest(SEEDS / seed / "hubrelease.yaml")
    configs = {p: json.loads((SEEDS / seed / p).read_text(encoding="utf-8")) for p in config_paths(manifest)}
    if expected is None:
        with pytest.raises(InputError, match=f"the release publishes no files {engine} loads"):
            engine_files(manifest, engine, configs)
    else:
        assert [a.path for a in engine_files(manifest, engine, configs)] == expected
