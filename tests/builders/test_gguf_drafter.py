"""`build gguf-drafter`: both flavours, nested rope, tokenizer copy, Q8_0 in parallel, splits, determinism."""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import gguf
import numpy as np
import pytest
from gguf import GGMLQuantizationType
from gguf.quants import quantize

from hubrelease.builders.gguf_drafter import OutType, build_gguf_drafter, quantize_rows
from hubrelease.builders.safetensors_drafter import build_safetensors_drafter
from hubrelease.errors import BuildError, InputError
from hubrelease.formats.dflash import Flavor
from hubrelease.formats.gguf_header import read_gguf
from hubrelease.lint import lint_file
from tests.factories.drafters import (
    ROPE_THETA,
    edit_checkpoint,
    mutate_gguf,
    write_checkpoint,
    write_target_gguf,
)
from tests.factories.targets import write_target_gguf_from, write_target_model


@pytest.fixture(scope="module")
def src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gguf")
    write_target_gguf(root / "target.gguf")
    write_checkpoint(root / "ck1", rope="nested")
    write_checkpoint(root / "ck2", rope="nested", dflash2=True)
    build_safetensors_drafter(root / "ck2", root / "hf2")
    return root


def test_ik_flavour_from_a_raw_checkpoint(src: Path, tmp_path: Path) -> None:
    out = build_gguf_drafter(
        src / "ck1", tmp_path / "d.gguf", flavor="ik", outtype="q8_0", tokenizer_from=src / "target.gguf"
    )
    model = read_gguf(out[0].path)
    assert model.architecture == "dflash-draft"
    assert model.value("dflash-draft.rope.freq_base") == pytest.approx(ROPE_THETA)
    assert model.value("dflash-draft.dflash.target_layer_ids") == [1, 3, 6]
    assert model.value("dflash-draft.dflash.n_target_features") == 3 * 64
    assert model.value("tokenizer.ggml.model") == "gpt2"
    assert model.kv["tokenizer.ggml.token_type"].type_label == "ARRAY[INT32]"
    assert model.composition() == {"Q8_0": 15, "F32": 10}
    assert lint_file(out[0].path, src / "ck1" / "config.json") == []


def test_mainline_dflash2_opens_in_gguf_py_and_passes_lint(src: Path, tmp_path: Path) -> None:
    out = build_gguf_drafter(
        src / "hf2",
        tmp_path / "d2.gguf",
        flavor="mainline",
        outtype="q8_0",
        jobs=2,
        tokenizer_from=src / "target.gguf",
    )
    reader = gguf.GGUFReader(out[0].path)
    names = {t.name for t in reader.tensors}
    assert {
        "fc.weight",
        "enc.output_norm.weight",
        "blk.1.ffn_norm.weight",
        "selector_successor.weight",
    } <= names
    assert reader.fields["dflash.target_layers"].contents() == [2, 4, 7]
    # Selector codebooks have rank-8 rows: Q8_0 blocks do not divide them, so they fall back to F16;
    # the 4 conv base kernels stay F32.
    assert read_gguf(out[0].path).composition() == {"Q8_0": 20, "F32": 14, "F16": 2}
    assert lint_file(out[0].path, src / "ck2" / "config.json") == []


@pytest.mark.parametrize("outtype", ["q8_0", "f16", "bf16"])
def test_conv_base_kernels_stay_f32(src: Path, tmp_path: Path, outtype: OutType) -> None:
    # blk.N.{attn,ffn}_conv_base are added elementwise to F32 graph outputs in mainline's dflash graph,
    # and llama-quantize only converts "*weight" tensors: a Q8_0/F16 base is a file that aborts at run time.
    out = build_gguf_drafter(
        src / "hf2",
        tmp_path / "d2.gguf",
        flavor="mainline",
        outtype=outtype,
        tokenizer_from=src / "target.gguf",
    )
    types = {t.name: t.type_name for t in read_gguf(out[0].path).tensors}
    bases = {n: t for n, t in types.items() if not n.endswith(".weight")}
    assert sorted(bases) == [
        "blk.0.attn_conv_base",
        "blk.0.ffn_conv_base",
        "blk.1.attn_conv_base",
        "blk.1.ffn_conv_base",
    ]
    assert set(bases.values()) == {"F32"}


def test_byte_deterministic_across_job_counts(src: Path, tmp_path: Path) -> None:
    target = src / "target.gguf"
    a = build_gguf_drafter(
        src / "hf2", tmp_path / "a.gguf", flavor="mainline", outtype="q8_0", jobs=1, tokenizer_from=target
    )
    b = build_gguf_drafter(
        src / "hf2", tmp_path / "b.gguf", flavor="mainline", outtype="q8_0", jobs=2, tokenizer_from=target
    )
    assert a[0].sha256 == b[0].sha256


def test_parallel_quantization_equals_one_call() -> None:
    data = np.random.default_rng(1).standard_normal((37, 64), dtype=np.float32)
    with ThreadPoolExecutor(2) as pool:
        parallel = quantize_rows(data, GGMLQuantizationType.Q8_0, pool)
    assert parallel.tobytes() == quantize(data, GGMLQuantizationType.Q8_0).tobytes()


def test_split_shards_are_a_readable_set(src: Path, tmp_path: Path) -> None:
    out = build_gguf_drafter(
        src / "hf2",
        tmp_path / "s.gguf",
        flavor="mainline",
        outtype="bf16",
        split_max_size=60_000,
        tokenizer_from=src / "target.gguf",
    )
    assert [f.path.name for f in out] == [f"s-0000{i}-of-00004.gguf" for i in (1, 2, 3, 4)]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f.path.name for f in out]  # no staging left behind
    assert len(read_gguf(out[1].path).tensors) == 36
    assert lint_file(out[2].path) == []


@pytest.mark.parametrize(
    ("source", "flavor", "tokenizer", "error", "message"),
    [
        ("hf2", "ik", True, BuildError, "ik_llama.cpp has no DFlash2 support; use --flavor mainline"),
        ("ck1", "ik", False, InputError, "--flavor ik needs --tokenizer-from TARGET.gguf"),
        # mainline's vocab loader requires tokenizer.ggml.model: a drafter without it does not load.
        ("hf2", "mainline", False, InputError, "--flavor mainline needs --tokenizer-from TARGET.gguf"),
    ],
)
def test_refusals(
    src: Path,
    tmp_path: Path,
    source: str,
    flavor: Flavor,
    tokenizer: bool,
    error: type[Exception],
    message: str,
) -> None:
    with pytest.raises(error, match=message):
        build_gguf_drafter(
            src / source,
            tmp_path / "x.gguf",
            flavor=flavor,
            outtype="f16",
            tokenizer_from=src / "target.gguf" if tokenizer else None,
        )
    assert list(tmp_path.iterdir()) == []


def test_ik_mask_must_match_the_target(src: Path, tmp_path: Path) -> None:
    target = write_target_gguf(tmp_path / "t.gguf", mask_token_id=7)
    with pytest.raises(BuildError, match="drafter mask_token_id 500 differs from the target's 7"):
        build_gguf_drafter(
            src / "ck1", tmp_path / "x.gguf", flavor="ik", outtype="f32", tokenizer_from=target
        )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"head_dim": "128"}, "head_dim"),
        ({"head_dim": None, "num_attention_heads": 0}, "num_attention_heads"),
        ({"rms_norm_eps": "x"}, "rms_norm_eps"),
        ({"rms_norm_eps": 1e60}, "rms_norm_eps"),
        ({"rope_parameters": {"rope_theta": 1e60}}, "rope_parameters.rope_theta"),
        ({"partial_rotary_factor": "x"}, "partial_rotary_factor"),
        ({"sliding_window": "x"}, "sliding_window"),
        ({"sliding_window": 2**40}, "sliding_window"),
        (
            {"dflash_config": {"block_size": 16, "mask_token_id": 2**40, "target_layer_ids": [1, 3, 6]}},
            "mask_token_id",
        ),
        (
            {"dflash_config": {"block_size": 16, "mask_token_id": 5, "target_layer_ids": [2**40]}},
            "dflash_config.target_layer_ids",
        ),
    ],
)
def test_unwritable_config_values_name_the_field(
    tmp_path: Path, change: dict[str, object], field: str
) -> None:
    # Each of these used to end in an internal error (TypeError/ValueError/struct.error) mid-write.
    folder = write_checkpoint(tmp_path / "ck")
    config = json.loads((folder / "config.json").read_text()) | change
    (folder / "config.json").write_text(json.dumps(config))
    target = write_target_gguf(tmp_path / "target.gguf")
    with pytest.raises(BuildError) as caught:
        build_gguf_drafter(
            folder, tmp_path / "out" / "x.gguf", flavor="mainline", outtype="f16", tokenizer_from=target
        )
    assert caught.value.field == field
    assert list(tmp_path.glob("out/*")) == []


@pytest.mark.parametrize(
    ("flavor", "source", "is_causal", "expected"),
    [
        ("mainline", "ck2", False, False),  # DFlash2 configs say is_causal: false
        ("mainline", "ck2", True, True),
        ("mainline", "ck1", None, None),  # no flag: no key, mainline's runtime default is non-causal
        ("ik", "ck1", True, False),  # ik's converter always writes false; its loader ignores it
    ],
)
def test_causal_flag_comes_from_the_config(
    src: Path, tmp_path: Path, flavor: Flavor, source: str, is_causal: bool | None, expected: bool | None
) -> None:
    folder = tmp_path / "ck"
    shutil.copytree(src / source, folder)
    if is_causal is not None:
        edit_checkpoint(folder, config={"is_causal": is_causal})
    out = build_gguf_drafter(
        folder,
        tmp_path / "c.gguf",
        flavor=flavor,
        outtype="f16",
        tokenizer_from=src / "target.gguf",
    )
    arch = read_gguf(out[0].path).architecture
    assert read_gguf(out[0].path).value(f"{arch}.attention.causal") == expected


@pytest.mark.parametrize(
    ("edits", "target", "message"),
    [
        (
            {"config": {"num_target_layers": 99}, "dflash_config": {"target_layer_ids": [1, 3, 7]}},
            {},
            "target layer 7 is not below the target's last layer 7",
        ),
        ({}, {"hidden": 32}, "fc.weight takes 192 features, the target gives 32 x 3"),
        ({}, {"vocab": 600}, "vocab_size 512 != the target tokenizer's 600 tokens"),
    ],
)
def test_drafter_must_fit_its_target(
    src: Path, tmp_path: Path, edits: dict[str, Any], target: dict[str, Any], message: str
) -> None:
    folder = tmp_path / "ck"
    shutil.copytree(src / "ck2", folder)
    edit_checkpoint(folder, **edits)
    with pytest.raises(BuildError, match=message):
        build_gguf_drafter(
            folder,
            tmp_path / "out" / "x.gguf",
            flavor="mainline",
            outtype="f16",
            tokenizer_from=write_target_gguf(tmp_path / "t.gguf", **target),
        )
    assert list(tmp_path.glob("out/*")) == []


@pytest.mark.parametrize(("flavor", "source"), [("ik", "ck1"), ("mainline", "ck1"), ("mainline", "hf2")])
def test_builds_against_the_real_tiny_qwen3_target(
    src: Path, tmp_path: Path, flavor: Flavor, source: str
) -> None:
    # The factories' target is a complete Qwen3 GGUF (tokenizer with CONTROL/UNUSED types, merges, chat
    # template): the drafter fits it and its tokenizer block is copied key for key.
    folder = write_target_model(tmp_path / "qwen3")
    target = write_target_gguf_from(folder, tmp_path / "qwen3.gguf")
    out = build_gguf_drafter(
        src / source, tmp_path / "d.gguf", flavor=flavor, outtype="q8_0", tokenizer_from=target
    )
    drafter, qwen3 = (
        read_gguf(out[0].path, keep_key=lambda _: True),
        read_gguf(target, keep_key=lambda _: True),
    )
    copied = {
        k: v.value
        for k, v in drafter.kv.items()
        if k.startswith("tokenizer.") and k != "tokenizer.ggml.mask_token_id"
    }
    assert copied == {k: v.value for k, v in qwen3.kv.items() if k.startswith("tokenizer.")}
    config = src / source / "config.json"
    assert lint_file(out[0].path, config) == []


SCALES = {"output_multiplier": 0.5, "final_logit_softcapping": 20.0, "input_embedding_scale": 2.0,
          "attention_value_scale": 0.75}  # fmt: skip


@pytest.mark.parametrize(
    ("flavor", "source", "expected"),
    [
        (
            "mainline",
            "ck2",
            {
                "logit_scale": 0.5,
                "final_logit_softcapping": 20.0,
                "embedding_scale": 2.0,
                "attention.value_scale": 0.75,
            },
        ),
        ("ik", "ck1", {"attention.value_scale": 0.75}),  # ik reads only the value scale
    ],
)
def test_scales_the_loaders_read_are_written(
    src: Path, tmp_path: Path, flavor: Flavor, source: str, expected: dict[str, float]
) -> None:
    folder = tmp_path / "ck"
    shutil.copytree(src / source, folder)
    edit_checkpoint(folder, dflash_config=SCALES)
    out = build_gguf_drafter(
        folder, tmp_path / "s.gguf", flavor=flavor, outtype="f16", tokenizer_from=src / "target.gguf"
    )
    model = read_gguf(out[0].path)
    keys = ("logit_scale", "final_logit_softcapping", "embedding_scale", "attention.value_scale")
    found = {k: model.value(f"{model.architecture}.{k}") for k in keys}
    assert {k: v for k, v in found.items() if v is not None} == pytest.approx(expected)
    assert lint_file(out[0].path, folder / "config.json") == []
    gguf_key = f"{model.architecture}.{next(iter(expected))}"
    unscaled = mutate_gguf(out[0].path, tmp_path / "u.gguf", drop_kv=(gguf_key,))
    assert [(f.rule_id, f.message) for f in lint_file(unscaled, folder / "config.json")] == [
        ("scales", f"{gguf_key} is missing but the config sets {expected[next(iter(expected))]}")
    ]
