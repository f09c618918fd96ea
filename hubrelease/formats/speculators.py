"""A speculators-format DFlash / DFlash2 config (``speculators_model_type``), read as the z-lab config it encodes.

speculators keeps the draft decoder's keys in ``transformer_layer_config`` and the DFlash ones at the
top level (``speculators/models/dflash/config.py``, ``models/dflash2/config.py``); its layer ids name the
verifier layer whose output is read, z-lab's ids that layer minus one (``convert/dflash/converter.py:117-126``).
Seen through ``zlab_view`` the same tensor-set, shape, rope, window and target rules apply as for a
z-lab drafter; the DFlash2 fields take the defaults ``DFlash2SpeculatorConfig`` would (2, 16, 256, 16).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hubrelease.formats.dflash import DrafterConfig, parse_config

DFLASH2_DEFAULTS = {"conv_kernel_size": 2, "conv_group_size": 16, "selector_rank": 256, "selector_top_k": 16}
"""``DFlash2SpeculatorConfig`` field defaults (models/dflash2/config.py)."""
TYPES = ("dflash", "dflash2")


def is_speculators(config: dict[str, Any]) -> bool:
    return "speculators_model_type" in config


def zlab_view(config: dict[str, Any]) -> dict[str, Any]:
    """The z-lab config.json of a speculators DFlash config (keys it lacks stay absent, for lint to name)."""
    layer = config.get("transformer_layer_config")
    view: dict[str, Any] = dict(layer) if isinstance(layer, dict) else {}
    dflash2 = config.get("speculators_model_type") == "dflash2"
    view["architectures"] = ["DFlash2DraftModel" if dflash2 else "DFlashDraftModel"]
    aux = config.get("aux_hidden_state_layer_ids")
    nested: dict[str, Any] = {
        "block_size": config.get("block_size"),
        "mask_token_id": config.get("mask_token_id"),
    }
    if isinstance(aux, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in aux):
        nested["target_layer_ids"] = [i - 1 for i in aux]
    if dflash2:
        nested |= {key: config.get(key, default) for key, default in DFLASH2_DEFAULTS.items()}
    view["dflash_config"] = nested
    view["block_size"] = config.get("block_size")
    rope = view.get("rope_parameters")
    if isinstance(rope, dict) and "rope_theta" in rope:
        # transformers reads rope_parameters; the top-level copy only serves z-lab-era tools.
        view.setdefault("rope_theta", rope["rope_theta"])
    return view


def drafter_config(raw: dict[str, Any], path: Path | None) -> tuple[DrafterConfig, dict[str, Any] | None]:
    """A config.json of either layout as the drafter it describes, and the speculators config if it is one."""
    if is_speculators(raw):
        return parse_config(zlab_view(raw), path), raw
    return parse_config(raw, path), None
