"""z-lab DFlashDraftModel (``dflash/model.py``, transformers 4.57.1, CPU torch): strict load + one forward.

Run inside the z-lab venv: ``python zlab_load.py ZLAB_DFLASH_SRC DRAFTER_DIR``; prints one JSON object.
- ``DFlashDraftModel(AutoConfig.from_pretrained(dir))`` reads ``config.block_size`` (top level),
  ``config.dflash_config["target_layer_ids"/"mask_token_id"]``, ``config.layer_types`` and
  ``config.sliding_window`` (``dflash/model.py`` ``DFlashDraftModel.__init__``, ``Qwen3DFlashAttention``);
- ``load_state_dict(strict=True)`` with every tensor of the safetensors files: a missing, unexpected or
  mis-shaped tensor fails; then every parameter is compared with the file's tensor;
- ``from_pretrained(dir, output_loading_info=True)`` (how the model is loaded from a Hub repo) must
  report nothing missing, unexpected or mismatched; with ``auto_map`` in the config,
  ``AutoModel.from_pretrained(trust_remote_code=True)`` must load too (it needs the module file);
- one forward pass as ``dflash_generate`` makes it: target features [1, ctx, K*H] and a noise block
  [1, block_size, H], non-causal; the output must be [1, block_size, H] and finite.
"""

from __future__ import annotations

import glob
import json
import os
import sys
from typing import Any

from consumer_report import report


def _read_json(path: str) -> Any:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def check(src: str, drafter: str) -> dict[str, Any]:
    sys.path.insert(0, src)
    import torch
    from dflash.model import DFlashDraftModel
    from safetensors.torch import load_file
    from transformers import AutoConfig, AutoModel

    checks: list[str] = []
    raw = _read_json(os.path.join(drafter, "config.json"))
    config = AutoConfig.from_pretrained(drafter)
    model = DFlashDraftModel(config).to(torch.float32).eval()
    tensors: dict[str, Any] = {}
    for path in sorted(glob.glob(os.path.join(drafter, "*.safetensors"))):
        tensors |= load_file(path)
    model.load_state_dict({k: v.to(torch.float32) for k, v in tensors.items()}, strict=True)
    checks.append(f"DFlashDraftModel(config).load_state_dict({len(tensors)} tensors, strict=True)")
    params = dict(model.named_parameters())
    differ = [n for n, p in params.items() if not torch.equal(p.data, tensors[n].to(torch.float32))]
    if differ:
        raise AssertionError(f"parameters that do not hold the file's values: {differ}")
    checks.append(f"all {len(params)} parameters hold the file's tensors as written")

    _, info = DFlashDraftModel.from_pretrained(drafter, output_loading_info=True)
    problems = {k: v for k, v in info.items() if v}
    if problems:
        raise AssertionError(f"from_pretrained: {problems}")
    checks.append("from_pretrained: no missing, unexpected or mismatched keys")
    if "auto_map" in raw:
        AutoModel.from_pretrained(drafter, trust_remote_code=True)
        checks.append("AutoModel.from_pretrained(trust_remote_code=True) via auto_map")
    else:
        checks.append("no auto_map in config.json (the Transformers remote-code path is not offered)")

    k, h, block = len(model.target_layer_ids), config.hidden_size, model.block_size
    ctx = 5
    generator = torch.Generator().manual_seed(0)
    target_hidden = torch.randn(1, ctx, k * h, generator=generator)
    noise = torch.randn(1, block, h, generator=generator)
    with torch.inference_mode():
        out = model(
            position_ids=torch.arange(ctx + block).unsqueeze(0),
            noise_embedding=noise,
            target_hidden=target_hidden,
            use_cache=False,
            is_causal=False,
        )
    if tuple(out.shape) != (1, block, h) or not bool(torch.isfinite(out).all()):
        raise AssertionError(
            f"forward gave shape {tuple(out.shape)}, finite={bool(torch.isfinite(out).all())}"
        )
    checks.append(
        f"forward: target_hidden [1, {ctx}, {k * h}] + noise [1, {block}, {h}] -> [1, {block}, {h}], finite"
    )
    return {"status": "pass", "checks": checks}


if __name__ == "__main__":
    report(check, "dflash", limit=2000)
