"""speculators 0.9.0 (PyPI, CPU torch 2.13.0): load hubrelease's speculator, compare with speculators' converter.

Run inside the speculators venv with ``HF_ENDPOINT`` at a loopback Hub that serves the verifier:
``python speculators_load.py OURS_DIR ZLAB_DIR`` (``ZLAB_DIR`` ``-`` for none); prints one JSON object.
- ``SpeculatorModelConfig.from_pretrained(OURS)`` picks the config class from ``speculators_model_type``
  (``speculators/config.py`` ``from_dict``) and validates it (pydantic: proposal methods, verifier);
- ``SpeculatorModel.from_pretrained(OURS)`` resolves the model class from the registry, loads the file
  and then the verifier's ``embed_tokens`` / ``lm_head`` / final norm by its ``name_or_path``
  (``models/dflash/core.py`` ``load_verifier_weights``, ``utils/loading.py`` ``load_model_layers``,
  through ``hf_hub_download`` from ``HF_ENDPOINT``); every tensor of the file must be the model's,
  every other state entry one the verifier fills, none of them NaN (speculators' own "never loaded" mark);
- for a DFlash ``ZLAB_DIR`` (the same drafter in z-lab's layout), ``DFlashConverter().convert(ZLAB_DIR,
  OUT, base_model=verifier)``, speculators' own converter: its tensors against ours one by one (name,
  dtype, shape, values) and both configs as speculators loads them, key by key.
"""

from __future__ import annotations

import glob
import json
import os
import tempfile
from typing import Any

from consumer_report import report

VERIFIER_FILLED = {"embed_tokens.weight", "lm_head.weight", "verifier_lm_head.weight", "verifier_norm.weight"}


def _tensors(folder: str) -> dict[str, Any]:
    from safetensors.torch import load_file

    found: dict[str, Any] = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.safetensors"))):
        found |= load_file(path)
    return found


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(data, dict):
        out: dict[str, Any] = {}
        for key, value in data.items():
            out |= _flat(value, f"{prefix}{key}.")
        return out
    return {prefix.rstrip("."): data}


def _config_diff(ours: Any, theirs: Any) -> list[str]:
    a, b = _flat(ours.to_dict()), _flat(theirs.to_dict())
    return sorted(k for k in set(a) | set(b) if a.get(k, "<absent>") != b.get(k, "<absent>"))


def check(ours: str, zlab: str) -> dict[str, Any]:
    import torch
    from speculators import SpeculatorModel, SpeculatorModelConfig

    checks: list[str] = []
    config = SpeculatorModelConfig.from_pretrained(ours)
    verifier = config.speculators_config.verifier
    checks.append(
        f"SpeculatorModelConfig.from_pretrained: {type(config).__name__} (speculators_model_type "
        f"{config.speculators_model_type}), aux_hidden_state_layer_ids={config.aux_hidden_state_layer_ids}, "
        f"block_size={config.block_size}, mask_token_id={config.mask_token_id}, verifier "
        f"{verifier.name_or_path} {verifier.architectures}"
    )
    model = SpeculatorModel.from_pretrained(ours)
    file = _tensors(ours)
    state = model.state_dict()
    absent = sorted(n for n in file if n not in state)
    if absent:
        raise AssertionError(f"file tensors the model has no place for: {absent[:5]}")
    differ = [n for n, t in file.items() if not torch.equal(state[n], t.to(state[n].dtype))]
    if differ:
        raise AssertionError(f"model entries that do not hold the file's tensor: {differ[:5]}")
    others = sorted(set(state) - set(file))
    if not set(others) <= VERIFIER_FILLED:
        raise AssertionError(f"model entries neither in the file nor filled from the verifier: {others}")
    nan = [n for n in others if torch.isnan(state[n].float()).any()]
    if nan:
        raise AssertionError(f"verifier weights never loaded (NaN): {nan}")
    checks.append(
        f"SpeculatorModel.from_pretrained -> {type(model).__name__}: all {len(file)} file tensors held as "
        f"written; {', '.join(others)} from the verifier {verifier.name_or_path} (hf_hub_download, no NaN)"
    )
    if zlab == "-":
        return {"status": "pass", "checks": checks}
    from speculators.convert.dflash.converter import DFlashConverter

    converted = tempfile.mkdtemp(prefix="speculators-convert-")
    DFlashConverter().convert(zlab, converted, base_model=verifier.name_or_path)
    theirs = _tensors(converted)
    if sorted(theirs) != sorted(file):
        raise AssertionError(f"tensor names differ: ours only {sorted(set(file) - set(theirs))[:5]}, "
                             f"converter only {sorted(set(theirs) - set(file))[:5]}")  # fmt: skip
    unequal = [
        n for n, t in file.items()
        if t.dtype != theirs[n].dtype or t.shape != theirs[n].shape or not torch.equal(t, theirs[n])
    ]  # fmt: skip
    if unequal:
        raise AssertionError(f"tensors that differ from the converter's: {unequal[:5]}")
    checks.append(
        f"DFlashConverter().convert: all {len(file)} tensors identical (name, dtype, shape, values)"
    )
    their_config = SpeculatorModelConfig.from_pretrained(converted)
    with open(os.path.join(ours, "config.json"), encoding="utf-8") as handle:
        raw_ours = set(_flat(json.load(handle)))
    with open(os.path.join(converted, "config.json"), encoding="utf-8") as handle:
        raw_theirs = set(_flat(json.load(handle)))
    return {
        "status": "pass",
        "checks": checks,
        "config_differences": _config_diff(config, their_config),
        "raw_only_ours": sorted(raw_ours - raw_theirs),
        "raw_only_converter": sorted(raw_theirs - raw_ours),
        "converter_files": sorted(os.listdir(converted)),
    }


if __name__ == "__main__":
    report(check, "speculators", limit=1500)
