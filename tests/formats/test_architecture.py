"""A model file's architecture from its header or config: what diff and push's warning compare."""

from __future__ import annotations

from pathlib import Path

from hubrelease.formats.architecture import architecture_changes, config_architecture, local_architecture

EXAMPLE = Path(__file__).resolve().parents[2] / "manifests" / "example"


def test_the_example_drafter_states_its_layers_taps_vocabulary_and_dtype() -> None:
    assert local_architecture(EXAMPLE / "tiny-dflash2-q8_0.gguf") == {
        "layers": 2,
        "target_layers": [2, 4, 7],  # mainline GGUF ids: the HF ids + 1
        "vocab": 512,
        "dtype": ["F16", "F32", "Q8_0"],
    }
    assert local_architecture(EXAMPLE / "model.safetensors") == {"layers": 2, "dtype": ["BF16"]}
    config = local_architecture(EXAMPLE / "config.json")
    assert (config["layers"], config["target_layers"], config["num_target_layers"]) == (2, [1, 3, 6], 8)


def test_a_speculators_config_is_read_as_the_zlab_config_it_encodes() -> None:
    speculators = {
        "speculators_model_type": "dflash",
        "aux_hidden_state_layer_ids": [2, 4, 7],
        "transformer_layer_config": {"num_hidden_layers": 3, "vocab_size": 512},
    }
    assert config_architecture(speculators) == {"layers": 3, "target_layers": [1, 3, 6], "vocab": 512}


def test_only_fields_both_sides_state_are_compared() -> None:
    old = {"layers": 4, "target_layers": [1, 2, 3, 4, 5, 6], "dtype": ["BF16"]}
    new = {"layers": 6, "target_layers": [1, 2, 3, 4, 5, 6, 7, 8], "vocab": 151936}
    assert architecture_changes(old, new) == [
        ("layers", 4, 6),
        ("target_layers", [1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6, 7, 8]),
    ]
