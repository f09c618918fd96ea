"""Rules on a drafter's config.json that the loaders enforce, shared by lint and the builders.

Each rule is a config that SGLang, z-lab's DFlashDraftModel, transformers or llama.cpp rejects (or
silently mis-reads) at load time; the builders raise on the errors, lint reports them.
"""

from __future__ import annotations

from pathlib import Path

from hubrelease.formats.dflash import DrafterConfig
from hubrelease.lint.findings import RuleFinding, error, warning

DFLASH2_KEYS = ("conv_kernel_size", "conv_group_size", "selector_rank", "selector_top_k")
LAYER_TYPES = ("full_attention", "sliding_attention")
_IDS = "dflash_config.target_layer_ids"


def config_findings(config: DrafterConfig, folder: Path | None = None) -> list[RuleFinding]:
    """Every config rule; ``folder`` (the config's folder) enables the auto_map module-file rule."""
    findings = _dims(config) + _layer_types(config) + _block_size(config) + target_layer_findings(config)
    findings += _dflash2(config)
    if folder is not None:
        findings += auto_map_findings(config, folder)
    return findings


def _dims(config: DrafterConfig) -> list[RuleFinding]:
    # SGLang DFlashAttention / DFlashMLP build every projection from these (srt/models/dflash.py);
    # DFlashMLP raises on intermediate_size <= 0.
    missing = [
        key
        for key, value in (
            ("num_attention_heads", config.num_heads),
            ("num_key_value_heads", config.num_kv_heads),
            ("head_dim", config.head_dim),
            ("intermediate_size", config.intermediate_size),
        )
        if value is None
    ]
    findings = [error("config-keys", f"config needs a positive integer {key}", key) for key in missing]
    act = config.raw.get("hidden_act", "silu")
    if act != "silu":
        # SGLang DFlashMLP: "Only silu is supported for now".
        findings.append(
            error(
                "config-keys", f"hidden_act is {act!r}; SGLang's DFlash MLP supports silu only", "hidden_act"
            )
        )
    return findings


def _layer_types(config: DrafterConfig) -> list[RuleFinding]:
    types = config.layer_types
    findings = []
    if types and len(types) != config.num_layers:
        # SGLang dflash.py _get_dflash_layer_attention_params: "must contain one entry per draft layer".
        findings.append(
            error(
                "swa-pattern",
                f"layer_types has {len(types)} entries, num_hidden_layers is {config.num_layers}",
            )
        )
    unknown = sorted(set(types) - set(LAYER_TYPES))
    if unknown:
        findings.append(
            error("swa-pattern", f"layer_types has unsupported entries {unknown} (SGLang raises)")
        )
    if "sliding_attention" in types:
        if config.raw.get("use_sliding_window") is not True and not config.dflash.get("use_swa"):
            # transformers' Qwen3Config sets sliding_window = None unless use_sliding_window; then SGLang
            # raises (dflash_utils.get_dflash_attention_sliding_window_size) and z-lab runs full
            # attention (dflash/model.py:209), and no converter writes the window.
            findings.append(
                error(
                    "sliding-window",
                    "layer_types has sliding_attention layers but use_sliding_window is not true: "
                    "transformers drops the window (SGLang raises, z-lab runs full attention)",
                )
            )
        if not config.raw.get("sliding_window"):
            findings.append(
                error(
                    "sliding-window",
                    "layer_types has sliding_attention layers but no sliding_window (SGLang raises)",
                )
            )
    return findings


def _block_size(config: DrafterConfig) -> list[RuleFinding]:
    nested, top = config.dflash.get("block_size"), config.raw.get("block_size")
    values = [v for v in (nested, top) if v is not None]
    if not values:
        return [error("block-size", "config has no block_size (dflash_config.block_size or top level)")]
    if any(not isinstance(v, int) or isinstance(v, bool) or v < 2 for v in values):
        # ik llama-hparams.cpp:107 "dflash block_size must be > 1".
        return [error("block-size", f"block_size must be an integer > 1, got {values[0]!r}")]
    if nested is not None and top is not None and nested != top:
        return [error("block-size", f"dflash_config.block_size {nested} != top-level block_size {top}")]
    if top is None:
        # z-lab dflash/model.py:319 reads config.block_size, its MLX loader cfg["block_size"]; SGLang
        # and the converters read dflash_config first, then the top level, so both placements are safe.
        return [
            warning(
                "block-size",
                "block_size only in dflash_config: z-lab's loaders read the top level "
                "(build safetensors-drafter writes both)",
            )
        ]
    return []


def target_layer_findings(config: DrafterConfig) -> list[RuleFinding]:
    """Target layer ids must be distinct and below the target's last layer.

    The engines capture the *input* of layer id + 1: for the last layer there is none (mainline
    src/llama-graph.cpp:1384 aborts "layer input tensor is null"; ik never drafts, "DFlash capture rows
    mismatch"). The depth is ``num_target_layers`` when the config has it.
    """
    ids = config.target_layer_ids
    findings = []
    if len(set(ids)) != len(ids):
        findings.append(error("target-layers", f"target layers {list(ids)} contain duplicates", _IDS))
    depth = config.raw.get("num_target_layers")
    if isinstance(depth, int) and not isinstance(depth, bool) and max(ids) >= depth - 1:
        findings.append(
            error(
                "target-layers",
                f"target layer {max(ids)} is not below the target's last layer {depth - 1} "
                f"(num_target_layers {depth}): engines capture layer inputs, the last layer has no successor",
                _IDS,
            )
        )
    return findings


def _dflash2(config: DrafterConfig) -> list[RuleFinding]:
    if not config.dflash2:
        return []
    values = {key: config.get(key) for key in DFLASH2_KEYS}
    missing = [key for key, value in values.items() if not (isinstance(value, int) and value > 0)]
    if missing:
        return [error("dflash2-tensors", f"DFlash2 config lacks dflash_config.{', '.join(missing)}")]
    h, group, top_k = config.hidden_size, values["conv_group_size"], values["selector_top_k"]
    assert isinstance(group, int) and isinstance(top_k, int)
    findings = []
    if h % group:
        # mainline src/models/dflash.cpp:146 "DFlash2 hidden size must be divisible by conv_group_size".
        findings.append(error("conv-group", f"hidden_size {h} is not divisible by conv_group_size {group}"))
    if h < top_k * (top_k + 1):
        # mainline src/models/dflash.cpp:149 "DFlash2 hidden size is too small for the selector lattice".
        findings.append(
            error(
                "selector-rank",
                f"hidden_size {h} < selector_top_k x (selector_top_k + 1) = {top_k * (top_k + 1)}",
            )
        )
    return findings


def auto_map_module(reference: str) -> str | None:
    """The local module file an ``auto_map`` entry needs (``dflash.DFlashDraftModel`` -> ``dflash.py``);
    None for code in another repo (``org/repo--module.Class``)."""
    if "--" in reference or "." not in reference:
        return None
    return reference.rsplit(".", 1)[0].replace(".", "/") + ".py"


def auto_map_modules(config: DrafterConfig) -> list[str]:
    """Module files the config's ``auto_map`` names, in order, without repeats."""
    value = config.raw.get("auto_map")
    refs = [v for v in value.values() if isinstance(v, str)] if isinstance(value, dict) else []
    modules = [m for m in (auto_map_module(r) for r in refs) if m]
    return list(dict.fromkeys(modules))


def auto_map_findings(config: DrafterConfig, folder: Path) -> list[RuleFinding]:
    """``AutoModel.from_pretrained(trust_remote_code=True)`` imports the module file from the repo."""
    missing = [m for m in auto_map_modules(config) if not (folder / m).is_file()]
    if not missing:
        return []
    return [
        error(
            "auto-map",
            f"auto_map needs {', '.join(missing)} beside config.json: trust_remote_code loading fails without it",
        )
    ]
