"""SGLang (PyPI wheel, CPU): parse the drafter config and load its weights exactly as the draft worker does.

Run inside the SGLang venv: ``python sglang_load.py DRAFTER_DIR TARGET_DIR``; prints one JSON object.
What SGLang's draft worker does for a DFLASH drafter, step by step, with the calls it makes:
- ``get_config`` (``srt/utils/hf_transformers/config.py``) reads config.json into a transformers config;
- ``parse_dflash_draft_config`` (``srt/speculative/dflash_utils.py``) validates the DFlash fields, and
  ``resolve_target_layer_ids`` checks the layer ids against the target's depth;
- the model class is picked by ``architectures[0]`` among ``EntryClass`` of ``srt/models/dflash.py``
  (what ``srt/models/registry.py`` maps), built on CPU at tp_size 1, then ``load_weights`` is fed the
  safetensors tensors by name (``model_loader/weight_utils.py`` ``safetensors_weights_iterator``).
``load_weights`` silently skips names it does not know, so after it every parameter is compared with
the tensor the file holds (q/k/v and gate/up fused as SGLang fuses them): a parameter left at its
initial value or holding other data fails, and so does a file tensor no parameter took.
"""

from __future__ import annotations

import glob
import importlib.abc
import importlib.machinery
import json
import os
import sys
import types
from typing import Any

from consumer_report import report

_STUBBED = ("torchvision", "sgl_kernel")


class _AnyAttr(type):
    def __getattr__(cls, name: str) -> Any:
        return cls


class _Anything(metaclass=_AnyAttr):
    """Any class, constant or enum member an import-time ``torchvision`` reference asks for."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        return None


def _stub_attr(name: str) -> Any:
    # transformers parses the version (is_torchvision_greater_or_equal): "0" is older than anything it asks.
    if name == "__version__":
        return "0"
    if name.startswith("__"):
        raise AttributeError(name)
    return _Anything


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Empty ``torchvision`` and ``sgl_kernel`` modules: imported at module level, never called here.

    - ``sglang.srt.configs`` imports its vision-language configs at import time
      (``configs/nano_nemotron_vl.py`` -> ``multimodal/internvl_utils.py:5 import torchvision.transforms``);
      PyPI's torchvision wheels require a CUDA torch.
    - On the CPU engine, ``kernels/ops/kvcache/cache_move.py:10`` imports ``sgl_kernel``'s CPU ops; that
      build comes from SGLang's source (PyPI's sglang-kernel is the CUDA one), and the ops run only in
      forward passes. This check builds the model and loads its weights, which calls neither.
    """

    def find_spec(
        self, fullname: str, path: Any, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname.split(".")[0] in _STUBBED:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = _stub_attr  # type: ignore[method-assign]
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        return None


def _expected_params(tensors: dict[str, Any], torch: Any) -> dict[str, Any]:
    """What each SGLang parameter must hold: file tensors by name, q/k/v and gate/up concatenated
    (a fused parameter with a part missing from the file expects nothing, so it is reported)."""
    flat = {name.removeprefix("model."): t for name, t in tensors.items()}
    expected: dict[str, Any] = {}
    used: set[str] = set()
    fused = (
        ("q_proj", ("q_proj", "k_proj", "v_proj"), "qkv_proj"),
        ("gate_proj", ("gate_proj", "up_proj"), "gate_up_proj"),
    )
    for name in sorted(flat):
        for first, names, into in fused:
            parts = [name.replace(first, p) for p in names]
            if f".{first}." in name and all(p in flat for p in parts):
                expected[name.replace(first, into)] = torch.cat([flat[p] for p in parts])
                used.update(parts)
    for name, tensor in flat.items():
        if name not in used:
            expected[name] = tensor
    return expected


def _read_json(path: str) -> Any:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def check(drafter: str, target: str) -> dict[str, Any]:
    sys.meta_path.insert(0, _StubFinder())
    import torch
    from safetensors.torch import load_file
    from sglang.srt.models import dflash
    from sglang.srt.runtime_context import get_parallel
    from sglang.srt.speculative.dflash_utils import parse_dflash_draft_config
    from sglang.srt.utils.hf_transformers.config import get_config

    checks: list[str] = []
    raw = _read_json(os.path.join(drafter, "config.json"))
    target_raw = _read_json(os.path.join(target, "config.json"))
    config = get_config(drafter, trust_remote_code=False)
    parsed = parse_dflash_draft_config(draft_hf_config=config)
    nested = raw.get("dflash_config") or {}
    wanted = {
        "block_size": nested.get("block_size", raw.get("block_size")),
        "target_layer_ids": nested.get("target_layer_ids", raw.get("target_layer_ids")),
        "mask_token_id": nested.get("mask_token_id", raw.get("mask_token_id")),
        "num_hidden_layers": raw["num_hidden_layers"],
        "conv_kernel_size": nested.get("conv_kernel_size", 0),
        "conv_group_size": nested.get("conv_group_size", 0),
        "selector_rank": nested.get("selector_rank", 0),
        "selector_top_k": nested.get("selector_top_k", 0),
    }
    for field, value in wanted.items():
        got = getattr(parsed, field)
        if got != value:
            raise AssertionError(f"parse_dflash_draft_config: {field} = {got!r}, config.json says {value!r}")
    checks.append("parse_dflash_draft_config: " + ", ".join(f"{k}={v}" for k, v in wanted.items()))
    ids = parsed.resolve_target_layer_ids(
        target_num_layers=int(target_raw["num_hidden_layers"]), draft_num_layers=parsed.num_hidden_layers
    )
    if parsed.mask_token_id is not None and not parsed.mask_token_id < int(target_raw["vocab_size"]):
        raise AssertionError(
            f"mask_token_id {parsed.mask_token_id} >= target vocab {target_raw['vocab_size']}"
        )
    checks.append(f"resolve_target_layer_ids(target depth {target_raw['num_hidden_layers']}) = {ids}")

    arch = raw["architectures"][0]
    classes = {cls.__name__: cls for cls in dflash.EntryClass}
    if arch not in classes:
        raise AssertionError(f"architectures[0] {arch!r} is not an EntryClass of sglang.srt.models.dflash")
    get_parallel().override_permanently(tp_size=1, tp_rank=0, attn_tp_size=1, attn_tp_rank=0)
    torch.set_default_dtype(torch.float32)
    model = classes[arch](config)
    files = sorted(glob.glob(os.path.join(drafter, "*.safetensors")))
    tensors: dict[str, Any] = {}
    for path in files:
        tensors |= load_file(path)
    model.load_weights(iter(tensors.items()))
    checks.append(f"{arch}.load_weights({len(tensors)} tensors from {len(files)} file(s))")

    expected = _expected_params(tensors, torch)
    params = dict(model.named_parameters())
    problems = []
    for name, param in params.items():
        want = expected.pop(name, None)
        if want is None:
            problems.append(f"parameter {name} {tuple(param.shape)} has no tensor in the file")
        elif tuple(want.shape) != tuple(param.shape):
            problems.append(f"parameter {name}: shape {tuple(param.shape)}, file {tuple(want.shape)}")
        elif not torch.equal(param.data.to(torch.float32), want.to(torch.float32)):
            problems.append(f"parameter {name} does not hold the file's values")
    problems += [f"file tensor {name} {tuple(t.shape)} was not loaded" for name, t in expected.items()]
    if problems:
        raise AssertionError("; ".join(problems))
    checks.append(f"all {len(params)} parameters hold the file's tensors as written")
    return {"status": "pass", "checks": checks}


if __name__ == "__main__":
    report(check, "sglang")
