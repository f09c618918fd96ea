"""Every drafter lint rule, on tiny but real builds and on one-defect mutations of them."""

from __future__ import annotations

import json
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from hubrelease.builders.gguf_drafter import build_gguf_drafter
from hubrelease.builders.safetensors_drafter import build_safetensors_drafter
from hubrelease.errors import InputError
from hubrelease.formats.gguf_header import read_gguf
from hubrelease.lint import RuleFinding, lint_file
from tests.factories.drafters import (
    MASK_TOKEN_ID,
    mutate_gguf,
    naive_convert,
    write_checkpoint,
    write_ik_mixed_gguf,
    write_raw_gguf,
    write_target_gguf,
)


class Built:
    """One DFlash and one DFlash2 drafter, built once per module in both flavours."""

    def __init__(self, root: Path) -> None:
        self.root = root
        write_checkpoint(root / "ck1", rope="nested")
        write_checkpoint(root / "ck2", dflash2=True, rope="nested")
        build_safetensors_drafter(root / "ck1", root / "hf1")
        build_safetensors_drafter(root / "ck2", root / "hf2")
        self.target = write_target_gguf(root / "target.gguf")
        self.config1 = root / "ck1" / "config.json"
        self.config2 = root / "ck2" / "config.json"
        self.ik = build_gguf_drafter(
            root / "hf1", root / "ik.gguf", flavor="ik", outtype="q8_0", tokenizer_from=self.target
        )[0].path
        self.ml = build_gguf_drafter(
            root / "hf1", root / "ml.gguf", flavor="mainline", outtype="f16", tokenizer_from=self.target
        )[0].path
        self.ml2 = build_gguf_drafter(
            root / "hf2", root / "ml2.gguf", flavor="mainline", outtype="q8_0", tokenizer_from=self.target
        )[0].path

    def mutate(self, src: Path, name: str, **changes: object) -> Path:
        return mutate_gguf(src, self.root / name, **changes)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return Built(tmp_path_factory.mktemp("lint"))


def rules(findings: list[RuleFinding]) -> list[tuple[str, str, str]]:
    return [(f.rule_id, f.severity, f.message) for f in findings]


def test_clean_builds_pass_in_both_flavours(built: Built) -> None:
    assert lint_file(built.ik, built.config1) == []
    assert lint_file(built.ml, built.config1) == []
    assert lint_file(built.ml2, built.config2) == []
    assert lint_file(built.ik) == []
    assert lint_file(built.root / "hf1") == []
    assert lint_file(built.root / "hf2" / "model.safetensors") == []


def test_finding_is_frozen() -> None:
    with pytest.raises(FrozenInstanceError):
        RuleFinding("x", "error", "m").rule_id = "y"  # type: ignore[misc]


def test_naive_conversion_of_a_nested_rope_config_is_caught(built: Built) -> None:
    naive = naive_convert(built.ik, built.root / "naive.gguf")
    assert rules(lint_file(naive, built.config1)) == [
        (
            "rope-freq-base",
            "error",
            "dflash-draft.rope.freq_base is missing: loaders fall back to 10000 but the config says 1e+07 "
            "(rope_parameters.rope_theta)",
        )
    ]


def test_wrong_rope_value_names_both_values(built: Built) -> None:
    bad = built.mutate(built.ml, "rope.gguf", set_kv={"dflash.rope.freq_base": 1e6})
    assert rules(lint_file(bad, built.config1)) == [
        (
            "rope-freq-base",
            "error",
            "dflash.rope.freq_base is 1e+06 but the config says 1e+07 (rope_parameters.rope_theta)",
        )
    ]


@pytest.mark.parametrize("section", ["flat", "scaling"])
def test_rope_lookup_falls_back_to_top_level_then_rope_scaling(built: Built, section: str) -> None:
    folder = write_checkpoint(built.root / f"ck-{section}", rope=section)  # type: ignore[arg-type]
    config = json.loads((folder / "config.json").read_text())
    config.setdefault("rope_parameters", {"rope_type": "default"})  # nested block without a theta
    (folder / "config.json").write_text(json.dumps(config))
    assert lint_file(built.ml, folder / "config.json") == []


def test_flavour_mixups(built: Built) -> None:
    renamed = built.mutate(built.ik, "mixed.gguf", rename={"dflash_fc.weight": "fc.weight"})
    found = rules(lint_file(renamed))
    assert ("flavour", "error", "dflash-draft file has mainline tensor names (fc.weight)") in found
    assert ("tensor-set", "error", "1 expected tensors missing: dflash_fc.weight") in found
    no_tok = built.mutate(built.ik, "notok.gguf", drop_kv=("tokenizer.ggml.model",))
    assert (
        "flavour",
        "error",
        "dflash-draft file has no tokenizer (build with --tokenizer-from the target GGUF)",
    ) in rules(lint_file(no_tok))
    as_ik = built.mutate(built.ml, "as-ik.gguf", set_kv={"general.architecture": "dflash-draft"})
    assert ("flavour", "error", "dflash-draft file lacks dflash-draft.dflash.target_layer_ids") in rules(
        lint_file(as_ik)
    )


def test_target_layers_base(built: Built) -> None:
    zero_based = built.mutate(built.ml, "zero.gguf", set_kv={"dflash.target_layers": [1, 3, 6]})
    assert rules(lint_file(zero_based, built.config1)) == [
        ("target-layers", "error", "target layers [1, 3, 6], expected 1-based [2, 4, 7] from the config")
    ]
    with_zero = built.mutate(built.ml, "zero2.gguf", set_kv={"dflash.target_layers": [0, 3, 6]})
    assert rules(lint_file(with_zero)) == [
        (
            "target-layers",
            "error",
            "dflash.target_layers [0, 3, 6] contains 0: looks 0-based (mainline is 1-based)",
        )
    ]


def test_n_target_features(built: Built) -> None:
    bad = built.mutate(built.ik, "feat.gguf", set_kv={"dflash-draft.dflash.n_target_features": 64})
    assert rules(lint_file(bad)) == [
        (
            "n-target-features",
            "error",
            "dflash_fc.weight is [192, 64], the loader builds [64, 64] (n_target_features, embedding_length)",
        )
    ]
    config = json.loads(built.config1.read_text()) | {"target_hidden_size": 40}
    (built.root / "th.json").write_text(json.dumps(config))
    assert rules(lint_file(built.ik, built.root / "th.json")) == [
        ("n-target-features", "error", "fc input width 192 != target hidden 40 x 3 layers")
    ]


def test_mask_token_outside_vocab(built: Built) -> None:
    bad = built.mutate(built.ik, "mask.gguf", set_kv={"dflash-draft.dflash.mask_token_id": 600})
    found = rules(lint_file(bad))
    assert found == [("mask-token", "error", "mask token id 600 is outside the vocabulary (512 tokens)")]
    assert rules(lint_file(bad, built.config1)) == found
    assert MASK_TOKEN_ID < 512


def test_swa_pattern_length_and_value(built: Built) -> None:
    short = built.mutate(built.ml, "swa.gguf", set_kv={"dflash.attention.sliding_window_pattern": [True]})
    assert rules(lint_file(short)) == [
        ("swa-pattern", "error", "sliding_window_pattern has 1 entries, block_count is 2")
    ]
    flipped = built.mutate(
        built.ml, "swa2.gguf", set_kv={"dflash.attention.sliding_window_pattern": [False, True]}
    )
    assert rules(lint_file(flipped, built.config1)) == [
        ("swa-pattern", "error", "sliding_window_pattern FT != config layer_types TF")
    ]


def test_tensor_set_missing_and_extra(built: Built) -> None:
    bad = built.mutate(
        built.ml, "ts.gguf", drop_tensors=("blk.1.ffn_down.weight",), rename={"output_norm.weight": "junk"}
    )
    assert rules(lint_file(bad)) == [
        ("tensor-set", "error", "2 expected tensors missing: blk.1.ffn_down.weight, output_norm.weight"),
        ("tensor-set", "warning", "1 unexpected tensors: junk"),
    ]


def test_dflash2_conv_and_selector_tensors(built: Built) -> None:
    bad = built.mutate(
        built.ml2, "d2.gguf", drop_tensors=("selector_successor.weight", "blk.0.attn_conv_base")
    )
    assert rules(lint_file(bad, built.config2)) == [
        (
            "dflash2-tensors",
            "error",
            "2 expected tensors missing: blk.0.attn_conv_base, selector_successor.weight",
        )
    ]
    assert ("dflash2-tensors", "error", "config is DFlash2, file keys say otherwise") in rules(
        lint_file(built.ml, built.config2)
    )


def test_declared_composition(built: Built) -> None:
    q4 = write_ik_mixed_gguf(built.root / "q4.gguf")
    declared = ("composition", "error", "declared 5 Q4_0, file has 2 IQ3_KS, 1 F32, 1 IQ4_KSS, 1 Q8_0")
    assert declared in rules(lint_file(q4, composition={"Q4_0": 5}))
    assert lint_file(built.ik, composition={"Q8_0": 15, "F32": 10}) == []
    assert rules(lint_file(built.ik, composition={"Q8_0": 14, "F32": 10})) == [
        ("composition", "error", "declared 14 Q8_0, 10 F32, file has 15 Q8_0, 10 F32")
    ]


def test_ik_types_in_a_mainline_file(built: Built) -> None:
    q4 = write_ik_mixed_gguf(built.root / "q4m.gguf")
    bad = built.mutate(q4, "q4-mainline.gguf", set_kv={"general.architecture": "dflash"})
    assert ("gguf-types", "error", "ik_llama.cpp-only types IQ3_KS, IQ4_KSS in a mainline file") in rules(
        lint_file(bad)
    )


def test_not_a_drafter(built: Built) -> None:
    assert rules(lint_file(built.target)) == [
        ("arch", "error", "architecture 'qwen35' is not a DFlash drafter (dflash-draft or dflash)")
    ]


def test_safetensors_rules_on_a_raw_checkpoint(built: Built) -> None:
    assert rules(lint_file(built.root / "ck1")) == [
        (
            "block-size",
            "warning",
            "block_size only in dflash_config: z-lab's loaders read the top level "
            "(build safetensors-drafter writes both)",
        ),
        (
            "rope-freq-base",
            "warning",
            "rope_theta only in rope_parameters.rope_theta: top-level-only converters will use 1e4",
        ),
        ("tensor-set", "warning", "rotary buffers should be dropped: rotary_emb.inv_freq"),
    ]
    folder = write_checkpoint(
        built.root / "ck-bad", dflash2=True, drop=("candidate_selector.successor_codebook",)
    )
    config = json.loads((folder / "config.json").read_text())
    config["dflash_config"]["mask_token_id"] = 9999
    config["layer_types"] = ["full_attention"]
    config["rope_theta"] = 1e4
    (folder / "config.json").write_text(json.dumps(config))
    assert rules(lint_file(folder))[1:] == [
        ("dflash2-tensors", "error", "1 expected tensors missing: candidate_selector.successor_codebook"),
        ("mask-token", "error", "mask token id 9999 >= vocab_size 512"),
        (
            "rope-freq-base",
            "error",
            "top-level rope_theta 10000 disagrees with rope_parameters.rope_theta 1e+07",
        ),
        ("swa-pattern", "error", "layer_types has 1 entries, num_hidden_layers is 2"),
        ("tensor-set", "warning", "rotary buffers should be dropped: rotary_emb.inv_freq"),
    ]


def test_safetensors_needs_a_config(tmp_path: Path) -> None:
    write_checkpoint(tmp_path)
    (tmp_path / "config.json").unlink()
    with pytest.raises(InputError, match=r"safetensors lint needs a config\.json"):
        lint_file(tmp_path)
    with pytest.raises(InputError, match=r"expected a \.gguf"):
        lint_file(tmp_path / "x.bin")


def test_file_name_quantization_token_must_match_a_tensor_type(built: Built) -> None:
    q4 = write_ik_mixed_gguf(built.root / "Ornith-DFLASH-m1-q4.gguf")
    assert (
        "name-type",
        "warning",
        "file name says q4 but the file has no Q4* tensors (2 IQ3_KS, 1 F32, 1 IQ4_KSS, 1 Q8_0)",
    ) in rules(lint_file(q4))
    named = built.mutate(built.ik, "drafter-Q8_0-00001-of-00001.gguf")
    assert [f for f in lint_file(named) if f.rule_id == "name-type"] == []


@pytest.mark.parametrize(
    ("name", "types"),
    [
        ("d-Q4_K_M.gguf", (12, 14)),
        ("d-UD-Q4_K_XL.gguf", (12, 0)),
        ("d-IQ3_XS.gguf", (21, 0)),
        ("d-IQ2_M.gguf", (22, 0)),
    ],
)
def test_mixture_names_match_their_main_type(tmp_path: Path, name: str, types: tuple[int, ...]) -> None:
    # llama-quantize's mixtures (Q4_K_M = Q4_K + Q6_K, IQ3_XS = IQ3_S + ...) have no tensor type of that name.
    sizes = {0: 1024, 12: 144, 14: 210, 21: 110, 22: 82}
    path = write_raw_gguf(
        tmp_path / name, "dflash", {}, [(f"t{i}", (256,), t, sizes[t]) for i, t in enumerate(types)]
    )
    assert [f for f in lint_file(path) if f.rule_id == "name-type"] == []


def test_mixture_name_without_its_main_type_still_warns(tmp_path: Path) -> None:
    path = write_raw_gguf(tmp_path / "d-Q4_K_M.gguf", "dflash", {}, [("t", (32,), 8, 34)])
    assert (
        "name-type",
        "warning",
        "file name says Q4_K_M but the file has no Q4_K* tensors (1 Q8_0)",
    ) in rules(lint_file(path))


def test_lying_layer_count_is_reported_without_enumerating_it(built: Built, tmp_path: Path) -> None:
    # 11 names per claimed layer were built and diffed: a u32 block_count of 4e9 meant a hang and an OOM.
    lying = built.mutate(built.ml, "layers.gguf", set_kv={"dflash.block_count": 100_000})
    assert (
        "tensor-set",
        "error",
        "block_count 100000 claims more layers than the file has tensors (25)",
    ) in rules(lint_file(lying))
    folder = write_checkpoint(tmp_path / "ck")
    config = json.loads((folder / "config.json").read_text())
    config.update(num_hidden_layers=100_000, layer_types=[])
    (folder / "config.json").write_text(json.dumps(config))
    assert (
        "tensor-set",
        "error",
        "num_hidden_layers 100000 claims more layers than the checkpoint has tensors (25)",
    ) in rules(lint_file(folder))


def test_mainline_without_a_tokenizer_is_an_error(built: Built) -> None:
    # mainline's vocab loader requires tokenizer.ggml.model (src/llama-vocab.cpp:1944): the file does not load.
    keys = read_gguf(built.ml, keep_key=lambda _: True).kv
    tokenizer_keys = [k for k in keys if k.startswith("tokenizer.") and k != "tokenizer.ggml.mask_token_id"]
    bare = built.mutate(built.ml, "bare.gguf", drop_kv=tokenizer_keys)
    assert rules(lint_file(bare, built.config1)) == [
        ("flavour", "error", "dflash file has no tokenizer (build with --tokenizer-from the target GGUF)")
    ]


def test_gguf_shapes_follow_the_files_own_keys(built: Built) -> None:
    # The old example's failure: mainline builds fc as {K * n_embd, n_embd} (src/models/dflash.cpp:162).
    four = built.mutate(built.ml, "k4.gguf", set_kv={"dflash.target_layers": [2, 4, 6, 7]})
    assert rules(lint_file(four)) == [
        (
            "n-target-features",
            "error",
            "fc.weight is [192, 64], the loader builds [256, 64] (target_layers x embedding_length, embedding_length)",
        )
    ]
    kv4 = built.mutate(built.ml, "kv4.gguf", set_kv={"dflash.attention.head_count_kv": 4})
    assert [m for _, _, m in rules(lint_file(kv4))] == [
        "blk.N.attn_k.weight (2 layers) is [64, 32], the loader builds [64, 64] "
        "(embedding_length, head_count_kv x key_length)",
        "blk.N.attn_v.weight (2 layers) is [64, 32], the loader builds [64, 64] "
        "(embedding_length, head_count_kv x value_length)",
    ]


def test_gguf_dflash2_conv_and_selector_keys(built: Built) -> None:
    group32 = built.mutate(built.ml2, "g32.gguf", set_kv={"dflash.conv_group_size": 32})
    assert {r for r, _, _ in rules(lint_file(group32))} == {"tensor-shape"}
    group48 = built.mutate(built.ml2, "g48.gguf", set_kv={"dflash.conv_group_size": 48})
    assert ("conv-group", "error", "embedding_length 64 is not divisible by conv_group_size 48") in rules(
        lint_file(group48)
    )
    top8 = built.mutate(built.ml2, "k8.gguf", set_kv={"dflash.selector_top_k": 8})
    assert rules(lint_file(top8)) == [
        ("selector-rank", "error", "embedding_length 64 is too small for selector_top_k 8")
    ]


def test_gguf_target_layer_at_the_targets_last_layer(built: Built) -> None:
    config = json.loads(built.config1.read_text())
    config["dflash_config"]["target_layer_ids"] = [1, 3, 7]
    (built.root / "last.json").write_text(json.dumps(config))
    last = built.mutate(built.ml, "last.gguf", set_kv={"dflash.target_layers": [2, 4, 8]})
    assert rules(lint_file(last, built.root / "last.json")) == [
        (
            "target-layers",
            "error",
            "target layer 7 is not below the target's last layer 7 (num_target_layers 8): engines capture "
            "layer inputs, the last layer has no successor",
        )
    ]


def test_gguf_causal_flag_must_match_the_config(built: Built) -> None:
    # DFlash2's config says is_causal: false; mainline's runtime honours dflash.attention.causal.
    causal = built.mutate(built.ml2, "causal.gguf", set_kv={"dflash.attention.causal": True})
    assert rules(lint_file(causal, built.config2)) == [
        ("causal", "error", "dflash.attention.causal is true, the config says causal=false")
    ]
    assert lint_file(causal) == []  # without the config there is nothing to compare with


def test_gguf_sliding_window_must_match_the_config(built: Built) -> None:
    wide = built.mutate(built.ml, "wide.gguf", set_kv={"dflash.attention.sliding_window": 512})
    assert rules(lint_file(wide, built.config1)) == [
        ("swa-pattern", "error", "dflash.attention.sliding_window is 512, config says 256")
    ]


def test_gguf_layer_count_must_match_the_config(built: Built) -> None:
    # A lying count is one finding, and its per-layer sliding flags are never built (no 10**12-entry tuple).
    config = json.loads(built.config1.read_text())
    config["num_hidden_layers"] = 10**12
    config["dflash_config"]["use_swa"] = True
    (built.root / "huge.json").write_text(json.dumps(config))
    assert rules(lint_file(built.ml, built.root / "huge.json")) == [
        ("tensor-set", "error", "block_count is 2, the config's num_hidden_layers 1000000000000")
    ]
