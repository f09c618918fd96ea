"""Lint knows the target: depth, hidden size and vocabulary from its GGUF or config.json.

The drafters' configs here do not state ``num_target_layers``: the target is the only source of its depth.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hubrelease.builders.gguf_drafter import build_gguf_drafter
from hubrelease.builders.safetensors_drafter import build_safetensors_drafter
from hubrelease.errors import InputError
from hubrelease.lint import RuleFinding, lint_file
from hubrelease.lint.target import TargetFacts, facts_from_config, read_local_target
from tests.factories.drafters import TARGET_LAYERS, mutate_gguf, write_checkpoint, write_target_gguf
from tests.factories.targets import write_target_model

LAST = TARGET_LAYERS - 1


class Built:
    """A DFlash drafter without num_target_layers, its mainline and ik GGUFs, and the target both ways."""

    def __init__(self, root: Path) -> None:
        self.root = root
        ck = write_checkpoint(root / "ck")
        config = json.loads((ck / "config.json").read_text())
        del config["num_target_layers"]
        (ck / "config.json").write_text(json.dumps(config))
        build_safetensors_drafter(ck, root / "hf")
        self.hf = root / "hf"
        self.target_gguf = write_target_gguf(root / "target.gguf")
        self.target_dir = write_target_model(root / "target")
        self.ml = build_gguf_drafter(self.hf, root / "ml.gguf", flavor="mainline", outtype="f16",
                                     tokenizer_from=self.target_gguf)[0].path  # fmt: skip
        self.ik = build_gguf_drafter(self.hf, root / "ik.gguf", flavor="ik", outtype="f16",
                                     tokenizer_from=self.target_gguf)[0].path  # fmt: skip

    def last_layer_config(self) -> Path:
        config = json.loads((self.hf / "config.json").read_text())
        config["dflash_config"]["target_layer_ids"] = [1, 3, LAST]
        path = self.root / "last" / "config.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(config))
        return path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return Built(tmp_path_factory.mktemp("target-lint"))


def _rules(findings: list[RuleFinding]) -> list[tuple[str, str, str]]:
    return [(f.rule_id, f.severity, f.message) for f in findings]


def test_facts_come_from_the_targets_gguf_and_config(built: Built) -> None:
    from_gguf = read_local_target(built.target_gguf)
    assert (from_gguf.depth, from_gguf.hidden, from_gguf.vocab) == (TARGET_LAYERS, 64, 512)
    from_config = read_local_target(built.target_dir)
    assert (from_config.depth, from_config.hidden, from_config.vocab) == (TARGET_LAYERS, 64, 512)
    assert from_config.source == str(built.target_dir / "config.json")
    mtp = mutate_gguf(built.target_gguf, built.root / "mtp.gguf", set_kv={"qwen35.nextn_predict_layers": 1})
    assert read_local_target(mtp).depth == TARGET_LAYERS - 1  # an MTP head is no layer to tap
    text = facts_from_config({"text_config": {"num_hidden_layers": 40, "hidden_size": 2048}}, "c.json")
    assert (text.depth, text.hidden, text.vocab) == (40, 2048, None)
    with pytest.raises(InputError, match="lacks num_hidden_layers"):
        facts_from_config({"hidden_size": 4}, "c.json")


@pytest.mark.parametrize("flavor", ["mainline", "ik"])
def test_last_layer_drafter_is_flagged_with_only_the_target_to_go_on(built: Built, flavor: str) -> None:
    source = built.ml if flavor == "mainline" else built.ik
    kv = {"dflash.target_layers": [2, 4, LAST + 1]} if flavor == "mainline" else {
        "dflash-draft.dflash.target_layer_ids": [1, 3, LAST]}  # fmt: skip
    last = mutate_gguf(source, built.root / f"last-{flavor}.gguf", set_kv=kv)
    config = built.last_layer_config()
    # Without the target nothing says 7 is the last layer of an 8-layer target.
    assert not [f for f in lint_file(last, config) if f.rule_id == "target-layers"]
    for target in (read_local_target(built.target_gguf), read_local_target(built.target_dir)):
        found = [f for f in lint_file(last, config, target=target) if f.rule_id == "target-layers"]
        assert _rules(found) == [
            (
                "target-layers",
                "error",
                f"target layer {LAST} is not below the last layer {LAST} of the target ({target.source}): "
                "the engines capture layer inputs, the last layer has no successor",
            )
        ]
    assert not [
        f for f in lint_file(source, built.hf / "config.json", target=target) if f.severity == "error"
    ]


def test_safetensors_rules_use_the_target(built: Built) -> None:
    target = read_local_target(built.target_gguf)
    assert [f for f in lint_file(built.hf, target=target) if f.severity == "error"] == []
    narrow = TargetFacts(TARGET_LAYERS, 32, 100, "narrow.gguf")
    assert _rules(f for f in lint_file(built.hf, target=narrow) if f.severity == "error") == [  # type: ignore[arg-type]
        ("mask-token", "error", "mask token id 500 is outside the 100 tokens of the target (narrow.gguf)"),
        (
            "n-target-features",
            "error",
            "fc input width 192 != 3 target layers x hidden 32 of the target (narrow.gguf)",
        ),
    ]
    declared = json.loads((built.hf / "config.json").read_text()) | {"num_target_layers": 40}
    (built.root / "declared").mkdir(exist_ok=True)
    (built.root / "declared" / "config.json").write_text(json.dumps(declared))
    found = lint_file(built.hf / "model.safetensors", built.root / "declared" / "config.json", target=target)
    assert (
        "target-layers",
        "error",
        f"num_target_layers is 40 but the target ({target.source}) has 8 layers",
    ) in _rules(found)


def test_dflash2_selector_rows_against_the_targets_vocabulary(built: Built) -> None:
    write_checkpoint(built.root / "ck2", dflash2=True)
    build_safetensors_drafter(built.root / "ck2", built.root / "hf2")
    ml2 = build_gguf_drafter(built.root / "hf2", built.root / "ml2.gguf", flavor="mainline", outtype="f16",
                             tokenizer_from=built.target_gguf)[0].path  # fmt: skip
    assert not [
        f for f in lint_file(ml2, target=read_local_target(built.target_gguf)) if f.severity == "error"
    ]
    bigger = TargetFacts(TARGET_LAYERS, 64, 1024, "big.gguf")
    assert (
        "dflash2-tensors",
        "error",
        "selector codebooks have 512 rows, the target (big.gguf) has 1024 tokens",
    ) in (_rules(lint_file(ml2, target=bigger)))
