"""Each engine loader failure as a lint finding, on a checkpoint that triggers it.

The baseline (a DFlash or DFlash2 checkpoint from the factories, block_size in both placements) lints
clean; each test changes one thing and asserts the one finding it causes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hubrelease.lint import RuleFinding, lint_file
from tests.factories.drafters import edit_checkpoint, write_checkpoint


def rules(findings: list[RuleFinding]) -> list[tuple[str, str, str]]:
    return [(f.rule_id, f.severity, f.message) for f in findings]


def checkpoint(tmp_path: Path, *, dflash2: bool = False, **edits: Any) -> Path:
    folder = write_checkpoint(tmp_path / "ck", dflash2=dflash2, rope="both", rotary=False)
    edit_checkpoint(folder, config={"block_size": 16})
    return edit_checkpoint(folder, **edits)


@pytest.mark.parametrize("dflash2", [False, True])
def test_baseline_is_clean(tmp_path: Path, dflash2: bool) -> None:
    assert lint_file(checkpoint(tmp_path, dflash2=dflash2)) == []


def test_fc_width_must_be_k_times_hidden(tmp_path: Path) -> None:
    # The old example: fc [64, 96] where every loader builds Linear(3 * 64, 64) (SGLang "fc.weight shape mismatch").
    folder = checkpoint(tmp_path, shapes={"fc.weight": (64, 96)})
    assert rules(lint_file(folder)) == [
        (
            "n-target-features",
            "error",
            "fc.weight is [64, 96], the loader builds [64, 192] (hidden_size, 3 target layers x hidden_size)",
        )
    ]


def test_kv_heads_mismatch(tmp_path: Path) -> None:
    folder = checkpoint(tmp_path, config={"num_key_value_heads": 4})
    assert rules(lint_file(folder)) == [
        (
            "tensor-shape",
            "error",
            "layers.N.self_attn.k_proj.weight (2 layers) is [32, 64], the loader builds [64, 64] "
            "(num_key_value_heads x head_dim, hidden_size)",
        ),
        (
            "tensor-shape",
            "error",
            "layers.N.self_attn.v_proj.weight (2 layers) is [32, 64], the loader builds [64, 64] "
            "(num_key_value_heads x head_dim, hidden_size)",
        ),
    ]


def test_head_dim_and_intermediate_size_mismatch(tmp_path: Path) -> None:
    folder = checkpoint(tmp_path, config={"intermediate_size": 96})
    found = rules(lint_file(folder))
    assert [f[0] for f in found] == ["tensor-shape"] * 3
    assert "layers.N.mlp.down_proj.weight (2 layers) is [64, 128], the loader builds [64, 96]" in found[0][2]
    folder = checkpoint(tmp_path / "b", config={"head_dim": 8})
    found = rules(lint_file(folder))
    assert len(found) == 6 and any("(num_attention_heads x head_dim, hidden_size)" in f[2] for f in found)


def test_selector_rank_mismatch(tmp_path: Path) -> None:
    folder = checkpoint(tmp_path, dflash2=True, dflash_config={"selector_rank": 16})
    assert rules(lint_file(folder)) == [
        (
            "tensor-shape",
            "error",
            "candidate_selector.hidden_projection.weight is [8, 64], the loader builds [16, 64] "
            "(selector_rank, hidden_size)",
        ),
        (
            "tensor-shape",
            "error",
            "candidate_selector.predecessor_codebook is [512, 8], the loader builds [512, 16] "
            "(vocab_size, selector_rank)",
        ),
        (
            "tensor-shape",
            "error",
            "candidate_selector.successor_codebook is [512, 8], the loader builds [512, 16] "
            "(vocab_size, selector_rank)",
        ),
    ]


def test_conv_group_mismatch(tmp_path: Path) -> None:
    folder = checkpoint(tmp_path, dflash2=True, dflash_config={"conv_group_size": 32})
    assert [m for _, _, m in rules(lint_file(folder))] == [
        "layers.N.attention_conv.kernel_projection.weight (2 layers) is [16, 64], the loader builds [8, 64] "
        "(2 x conv_kernel_size x hidden_size / conv_group_size, hidden_size)",
        "layers.N.mlp_conv.kernel_projection.weight (2 layers) is [16, 64], the loader builds [8, 64] "
        "(2 x conv_kernel_size x hidden_size / conv_group_size, hidden_size)",
    ]
    not_dividing = checkpoint(tmp_path / "b", dflash2=True, dflash_config={"conv_group_size": 48})
    assert ("conv-group", "error", "hidden_size 64 is not divisible by conv_group_size 48") in rules(
        lint_file(not_dividing)
    )


def test_selector_lattice_too_small(tmp_path: Path) -> None:
    folder = checkpoint(tmp_path, dflash2=True, dflash_config={"selector_top_k": 8})
    assert rules(lint_file(folder)) == [
        ("selector-rank", "error", "hidden_size 64 < selector_top_k x (selector_top_k + 1) = 72")
    ]


def test_block_size_only_nested_is_a_warning(tmp_path: Path) -> None:
    folder = checkpoint(tmp_path, drop_keys=("block_size",))
    assert rules(lint_file(folder)) == [
        (
            "block-size",
            "warning",
            "block_size only in dflash_config: z-lab's loaders read the top level "
            "(build safetensors-drafter writes both)",
        )
    ]
    disagreeing = checkpoint(tmp_path / "b", config={"block_size": 8})
    assert rules(lint_file(disagreeing)) == [
        ("block-size", "error", "dflash_config.block_size 16 != top-level block_size 8")
    ]


def test_auto_map_without_its_module_file(tmp_path: Path) -> None:
    folder = checkpoint(tmp_path, config={"auto_map": {"AutoModel": "dflash.DFlashDraftModel"}})
    assert rules(lint_file(folder)) == [
        (
            "auto-map",
            "error",
            "auto_map needs dflash.py beside config.json: trust_remote_code loading fails without it",
        )
    ]
    (folder / "dflash.py").write_text("class DFlashDraftModel: ...\n")
    assert lint_file(folder) == []


def test_sliding_window_without_use_sliding_window(tmp_path: Path) -> None:
    folder = checkpoint(tmp_path, config={"use_sliding_window": False})
    assert rules(lint_file(folder)) == [
        (
            "sliding-window",
            "error",
            "layer_types has sliding_attention layers but use_sliding_window is not true: "
            "transformers drops the window (SGLang raises, z-lab runs full attention)",
        )
    ]


def test_target_layer_must_be_below_the_last_layer(tmp_path: Path) -> None:
    folder = checkpoint(tmp_path, dflash_config={"target_layer_ids": [1, 3, 7]})
    assert rules(lint_file(folder)) == [
        (
            "target-layers",
            "error",
            "target layer 7 is not below the target's last layer 7 (num_target_layers 8): engines capture "
            "layer inputs, the last layer has no successor",
        )
    ]


def test_missing_dims_are_named(tmp_path: Path) -> None:
    folder = checkpoint(tmp_path, drop_keys=("intermediate_size",))
    assert rules(lint_file(folder)) == [
        ("config-keys", "error", "config needs a positive integer intermediate_size")
    ]


def test_only_silu_is_loadable(tmp_path: Path) -> None:
    folder = checkpoint(tmp_path, config={"hidden_act": "gelu"})
    assert rules(lint_file(folder)) == [
        ("config-keys", "error", "hidden_act is 'gelu'; SGLang's DFlash MLP supports silu only")
    ]
