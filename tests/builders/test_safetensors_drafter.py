"""`build safetensors-drafter`: tensor-set checks, bf16 cast, sharding, normalised config, determinism."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors import safe_open

from hubrelease.builders.safetensors_drafter import build_safetensors_drafter
from hubrelease.errors import BuildError, InputError
from hubrelease.formats.safetensors_header import read_safetensors
from tests.factories.drafters import (
    ROPE_THETA,
    drafter_config,
    drafter_tensors,
    edit_checkpoint,
    write_checkpoint,
)


def test_drops_rotary_strips_prefix_and_casts_to_bf16(tmp_path: Path) -> None:
    source = write_checkpoint(tmp_path / "ck", dflash2=True, shards=2, prefix="model.")
    files = build_safetensors_drafter(source, tmp_path / "out")
    assert [f.path.name for f in files] == ["model.safetensors", "config.json"]
    model = read_safetensors(tmp_path / "out")
    expected = drafter_tensors(drafter_config(dflash2=True))
    assert sorted(t.name for t in model.tensors) == sorted(expected)
    assert model.composition() == {"BF16": len(expected)}
    with safe_open(str(files[0].path), framework="numpy") as handle:
        assert handle.metadata() == {"format": "pt"}
    raw = np.fromfile(files[0].path, dtype=np.uint16, count=64, offset=model.by_name()["norm.weight"].start)
    restored = (raw.astype(np.uint32) << 16).view(np.float32)
    np.testing.assert_allclose(restored, expected["norm.weight"], rtol=2**-8)


def test_config_carries_rope_theta_nested_and_top_level(tmp_path: Path) -> None:
    build_safetensors_drafter(write_checkpoint(tmp_path / "ck", rope="nested"), tmp_path / "out")
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["rope_theta"] == ROPE_THETA
    assert config["rope_parameters"] == {"rope_theta": ROPE_THETA, "rope_type": "default"}
    assert config["torch_dtype"] == "bfloat16"


def test_legacy_rope_scaling_is_carried_into_rope_parameters(tmp_path: Path) -> None:
    # A yarn rope_scaling next to a new rope_parameters {"rope_type": "default"} contradicted itself:
    # loaders that read rope_parameters first would drop the yarn scaling.
    build_safetensors_drafter(write_checkpoint(tmp_path / "ck", rope="scaling"), tmp_path / "out")
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["rope_parameters"] == {"rope_theta": ROPE_THETA, "rope_type": "yarn", "factor": 2.0}
    assert config["rope_scaling"] == {"rope_theta": ROPE_THETA, "rope_type": "yarn", "factor": 2.0}
    assert config["rope_theta"] == ROPE_THETA


def test_byte_deterministic_and_sharded_with_index(tmp_path: Path) -> None:
    source = write_checkpoint(tmp_path / "ck")
    first = build_safetensors_drafter(source, tmp_path / "a", max_shard_size=30_000)
    second = build_safetensors_drafter(source, tmp_path / "b", max_shard_size=30_000)
    assert [(f.path.name, f.sha256) for f in first] == [(f.path.name, f.sha256) for f in second]
    names = [f.path.name for f in first]
    assert names[0] == "model-00001-of-00008.safetensors" and names[-2:] == [
        "model.safetensors.index.json",
        "config.json",
    ]
    index = json.loads((tmp_path / "a" / "model.safetensors.index.json").read_text())
    assert index["metadata"]["total_size"] == sum(t.nbytes for t in read_safetensors(tmp_path / "a").tensors)
    # Rebuilding unsharded into the same folder removes the old shards and index.
    build_safetensors_drafter(source, tmp_path / "a")
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == ["config.json", "model.safetensors"]


def test_keep_dtype_copies_bytes(tmp_path: Path) -> None:
    build_safetensors_drafter(write_checkpoint(tmp_path / "ck"), tmp_path / "out", cast="keep")
    assert read_safetensors(tmp_path / "out").composition() == {"F32": 25}


def test_missing_tensor_is_refused(tmp_path: Path) -> None:
    source = write_checkpoint(tmp_path / "ck", dflash2=True, drop=("layers.1.mlp_conv.base_kernel",))
    with pytest.raises(
        BuildError,
        match=r"does not match the DFlash2 config: 1 missing \(first: layers\.1\.mlp_conv\.base_kernel\)",
    ):
        build_safetensors_drafter(source, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_lying_layer_count_is_refused_without_enumerating_it(tmp_path: Path) -> None:
    config = drafter_config(swa=False) | {"num_hidden_layers": 100_000, "layer_types": []}
    source = write_checkpoint(tmp_path / "ck", config=config | {"num_hidden_layers": 2})
    (source / "config.json").write_text(json.dumps(config))
    with pytest.raises(
        BuildError,
        match=r"num_hidden_layers 100000 claims more layers than the checkpoint has tensors \(25\)",
    ):
        build_safetensors_drafter(source, tmp_path / "out")


def test_config_without_rope_is_refused(tmp_path: Path) -> None:
    source = write_checkpoint(tmp_path / "ck", rope="none")
    with pytest.raises(BuildError, match="config has no rope_theta"):
        build_safetensors_drafter(source, tmp_path / "out")


def test_source_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="expected a checkpoint folder"):
        build_safetensors_drafter(tmp_path / "nope", tmp_path / "out")


def test_a_tensor_shaped_against_the_config_is_refused(tmp_path: Path) -> None:
    # Every loader builds fc as Linear(K * hidden, hidden): [64, 96] fails SGLang's load_weights.
    source = edit_checkpoint(write_checkpoint(tmp_path / "ck"), shapes={"fc.weight": (64, 96)})
    with pytest.raises(BuildError, match=r"fc.weight is \[64, 96\], the loader builds \[64, 192\]"):
        build_safetensors_drafter(source, tmp_path / "out")
    kv = edit_checkpoint(write_checkpoint(tmp_path / "kv"), config={"num_key_value_heads": 4})
    with pytest.raises(BuildError, match=r"k_proj.weight \(2 layers\) is \[32, 64\].* \(and 1 more\)$"):
        build_safetensors_drafter(kv, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_block_size_is_written_in_both_placements(tmp_path: Path) -> None:
    build_safetensors_drafter(write_checkpoint(tmp_path / "ck"), tmp_path / "out")
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["block_size"] == config["dflash_config"]["block_size"] == 16


def test_auto_map_is_kept_with_its_module_and_dropped_without(tmp_path: Path) -> None:
    auto_map = {"AutoModel": "dflash.DFlashDraftModel"}
    source = edit_checkpoint(write_checkpoint(tmp_path / "ck"), config={"auto_map": auto_map})
    warnings: list[str] = []
    files = build_safetensors_drafter(source, tmp_path / "a", warn=warnings.append)
    assert "auto_map" not in json.loads((tmp_path / "a" / "config.json").read_text())
    assert [f.path.name for f in files] == ["model.safetensors", "config.json"]
    assert warnings == [
        f"auto_map dropped: dflash.py is not in {source} (trust_remote_code loading would fail)"
    ]

    (source / "dflash.py").write_text("class DFlashDraftModel: ...\n")
    files = build_safetensors_drafter(source, tmp_path / "b", warn=warnings.append)
    assert json.loads((tmp_path / "b" / "config.json").read_text())["auto_map"] == auto_map
    assert [f.path.name for f in files] == ["model.safetensors", "config.json", "dflash.py"]
    assert (tmp_path / "b" / "dflash.py").read_text() == "class DFlashDraftModel: ...\n"
    assert len(warnings) == 1


@pytest.mark.parametrize(
    ("edits", "message"),
    [
        (
            {"config": {"use_sliding_window": False}},
            "layer_types has sliding_attention layers but use_sliding_window",
        ),
        (
            {"dflash_config": {"target_layer_ids": [1, 3, 7]}},
            "target layer 7 is not below the target's last layer 7",
        ),
        ({"config": {"block_size": 8}}, "dflash_config.block_size 16 != top-level block_size 8"),
    ],
)
def test_config_errors_a_loader_fails_on_are_refused(
    tmp_path: Path, edits: dict[str, Any], message: str
) -> None:
    source = edit_checkpoint(write_checkpoint(tmp_path / "ck"), **edits)
    with pytest.raises(BuildError, match=message):
        build_safetensors_drafter(source, tmp_path / "out")
    assert not (tmp_path / "out").exists()
