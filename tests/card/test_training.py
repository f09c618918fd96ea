"""The card's training facts come from the files ``training:`` names, never typed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from hubrelease.card import render_card
from hubrelease.errors import ManifestError
from tests.factories.cards import write_card_release

CONFIG = {
    "architectures": ["DFlash2DraftModel"],
    "hidden_size": 1024,
    "num_hidden_layers": 3,
    "rope_theta": 1000000.0,
    "rope_parameters": {"rope_theta": 1000000.0},
    "layer_types": ["sliding_attention", "sliding_attention", "full_attention"],
    "sliding_window": 2048,
    "use_sliding_window": True,
    "dflash_config": {
        "block_size": 8,
        "target_layer_ids": [0, 5, 9],
        "selector_rank": 64,
        "selector_top_k": 4,
    },
}
ARGS = {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 8, "world_size": 2,
        "learning_rate": 0.0003, "optim": "adamw_torch_fused", "lr_scheduler_type": "cosine", "warmup_ratio": 0.05,
        "num_anchors": 64}  # fmt: skip


def _release(tmp_path: Path, training: dict[str, Any], files: dict[str, object]) -> Path:
    manifest = write_card_release(tmp_path)
    for name, data in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(json.dumps(data))
    tree = yaml.safe_load(manifest.read_text())
    tree["artifacts"] += [{"path": name, "role": "doc"} for name in files if name != "config.json"]
    tree["pins"]["hardware"].append(
        {"id": "trainer", "name": "Trainer", "accelerator": "NVIDIA A100", "count": 4, "memory": "80GB"}
    )
    tree["training"] = training
    manifest.write_text(yaml.safe_dump(tree, sort_keys=False))
    return manifest


def test_architecture_recipe_steps_and_data_are_read_from_their_files(tmp_path: Path) -> None:
    files = {
        "config.json": CONFIG,
        "train/args.json": ARGS,
        "train/trainer_state.json": {"global_step": 12345},
        "train/data.json": {"conversations": 1000, "completion_tokens": 919900},
    }
    training = {"config": "config.json", "arguments": "train/args.json", "state": "train/trainer_state.json",
                "data": "train/data.json", "dataset": "acme/conversations", "capture_hardware": "test-gpu",
                "hardware": "trainer"}  # fmt: skip
    card = render_card(_release(tmp_path, training, files))
    assert "This repository holds a DFlash2 draft model" in card
    assert (
        "- Data: 919,900 generated assistant completion tokens (1,000 conversations), released as `acme/conversations`"
        in card
    )
    assert (
        "- Architecture (`config.json`): a DFlash2 drafter, 3 draft layers, a 8-token block, a 2048-token sliding "
        "window (layer pattern TTF), selector rank 64 and selector top-k 4, a 1024-wide projection of the target features."
    ) in card
    assert (
        "- Target features: hidden layers 0, 5, 9 of the target (0-based `target_layer_ids`), captured on 1x Test GPU."
        in card
    )
    assert "- Trained on 4x NVIDIA A100 80GB." in card
    assert (
        "- Recipe (`train/args.json`): 64 anchors; microbatch 2 and effective batch 32; AdamW with learning rate "
        "0.0003 and a warmup-plus-cosine schedule; 12,345 optimizer steps (`train/trainer_state.json`)."
    ) in card
    assert "the config also carries `rope_theta: 1000000.0` at the top level" in card
    files["config.json"] = {**CONFIG, "num_hidden_layers": 4}  # the card follows the file
    (tmp_path / "config.json").write_text(json.dumps(files["config.json"]))
    assert "4 draft layers" in render_card(tmp_path / "hubrelease.yaml")


@pytest.mark.parametrize(
    ("training", "message"),
    [
        ({"arguments": "nowhere.json"}, "training.arguments: 'nowhere.json' is not an artifact"),
        ({"hardware": "h100"}, "training.hardware: 'h100' is not in pins.hardware (test-gpu, trainer)"),
    ],
)
def test_a_training_file_that_is_not_published_or_an_unpinned_machine_is_refused(
    tmp_path: Path, training: dict[str, Any], message: str
) -> None:
    manifest = _release(tmp_path, training, {})
    with pytest.raises(ManifestError) as info:
        render_card(manifest)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("args", "recipe"),
    [
        # A transcription states the effective batch and the optimizer family, not how they were made.
        ({"per_device_train_batch_size": 1, "global_batch_size": 32, "optim": "adamw"},
         "microbatch 1 and effective batch 32; AdamW"),
        # What the file leaves out is not assumed (accumulation 1, a default optimizer): the card says so.
        ({"per_device_train_batch_size": 2, "world_size": 2},
         "microbatch 2 and effective batch not stated; optimizer not stated"),
    ],
)  # fmt: skip
def test_a_recipe_states_only_what_its_file_holds(tmp_path: Path, args: dict[str, Any], recipe: str) -> None:
    manifest = _release(tmp_path, {"arguments": "train/args.json"}, {"train/args.json": args})
    assert f"- Recipe (`train/args.json`): {recipe}." in render_card(manifest)
