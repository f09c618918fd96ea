"""What a DFlash / DFlash2 drafter is: config lookups and the tensor names of each layout.

Shared by the builders (which must produce these names) and lint (which must find them). Facts from
z-lab/dflash, SGLang's ``dflash_utils``, ik_llama.cpp ``llama-arch.cpp`` and mainline ``dflash.cpp``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeGuard

from hubrelease.errors import InputError
from hubrelease.formats.safetensors_header import read_json_object

Flavor = Literal["ik", "mainline"]
ARCH: dict[Flavor, str] = {"ik": "dflash-draft", "mainline": "dflash"}
"""``general.architecture`` of each GGUF flavour (ik's own ``dflash`` arch is DeepSeek-V4, not this)."""

_LAYER = (
    "input_layernorm.weight",
    "post_attention_layernorm.weight",
    "self_attn.q_proj.weight",
    "self_attn.k_proj.weight",
    "self_attn.v_proj.weight",
    "self_attn.o_proj.weight",
    "self_attn.q_norm.weight",
    "self_attn.k_norm.weight",
    "mlp.gate_proj.weight",
    "mlp.up_proj.weight",
    "mlp.down_proj.weight",
)
_LAYER_BIAS = (
    "self_attn.q_proj.bias",
    "self_attn.k_proj.bias",
    "self_attn.v_proj.bias",
    "self_attn.o_proj.bias",
)
_CONV = (
    "attention_conv.base_kernel",
    "attention_conv.kernel_projection.weight",
    "mlp_conv.base_kernel",
    "mlp_conv.kernel_projection.weight",
)
_GLOBAL = ("fc.weight", "hidden_norm.weight", "norm.weight")
_SELECTOR = (
    "candidate_selector.hidden_projection.weight",
    "candidate_selector.predecessor_codebook",
    "candidate_selector.successor_codebook",
)

# HF suffix -> GGUF suffix; the flavour-specific ones are resolved in gguf_name().
_GGUF_LAYER = {
    "input_layernorm.weight": "attn_norm.weight",
    "self_attn.q_proj.weight": "attn_q.weight",
    "self_attn.k_proj.weight": "attn_k.weight",
    "self_attn.v_proj.weight": "attn_v.weight",
    "self_attn.o_proj.weight": "attn_output.weight",
    "self_attn.q_proj.bias": "attn_q.bias",
    "self_attn.k_proj.bias": "attn_k.bias",
    "self_attn.v_proj.bias": "attn_v.bias",
    "self_attn.o_proj.bias": "attn_output.bias",
    "self_attn.q_norm.weight": "attn_q_norm.weight",
    "self_attn.k_norm.weight": "attn_k_norm.weight",
    "mlp.gate_proj.weight": "ffn_gate.weight",
    "mlp.up_proj.weight": "ffn_up.weight",
    "mlp.down_proj.weight": "ffn_down.weight",
    "attention_conv.base_kernel": "attn_conv_base",
    "attention_conv.kernel_projection.weight": "attn_conv_proj.weight",
    "mlp_conv.base_kernel": "ffn_conv_base",
    "mlp_conv.kernel_projection.weight": "ffn_conv_proj.weight",
}
_GGUF_GLOBAL: dict[Flavor, dict[str, str]] = {
    "ik": {"fc.weight": "dflash_fc.weight", "hidden_norm.weight": "dflash_hidden_norm.weight"},
    "mainline": {"fc.weight": "fc.weight", "hidden_norm.weight": "enc.output_norm.weight"},
}
_GGUF_SELECTOR = {
    "candidate_selector.hidden_projection.weight": "selector_hidden.weight",
    "candidate_selector.predecessor_codebook": "selector_predecessor.weight",
    "candidate_selector.successor_codebook": "selector_successor.weight",
}
POST_ATTENTION_NORM: dict[Flavor, str] = {"ik": "post_attention_norm.weight", "mainline": "ffn_norm.weight"}


SCALES: tuple[tuple[str, str, tuple[Flavor, ...]], ...] = (
    ("attention_value_scale", "attention.value_scale", ("ik", "mainline")),
    ("output_multiplier", "logit_scale", ("mainline",)),
    ("final_logit_softcapping", "final_logit_softcapping", ("mainline",)),
    ("input_embedding_scale", "embedding_scale", ("mainline",)),
)
"""(config key, ``<arch>.`` GGUF key, flavours whose loader reads it): mainline src/models/dflash.cpp:9-26
and its converter conversion/qwen.py:707-733; ik llama-hparams.cpp:912 and convert_hf_to_gguf.py:2479.
Missing from the GGUF, the loader runs unscaled (Muse-Glimmer's logits x 0.196, softcap 20)."""


@dataclass(frozen=True)
class DrafterConfig:
    """The fields of a drafter ``config.json`` that builders and lint rely on, with their lookup rules applied."""

    raw: dict[str, Any]
    path: Path | None
    hidden_size: int
    num_layers: int
    vocab_size: int | None
    target_layer_ids: tuple[int, ...]
    block_size: int | None
    mask_token_id: int | None
    rope_theta: float | None
    rope_theta_source: str | None
    """Where the theta was found: rope_parameters.rope_theta | rope_theta | rope_scaling.rope_theta."""
    dflash2: bool
    attention_bias: bool
    layer_types: tuple[str, ...]
    num_heads: int | None
    num_kv_heads: int | None
    """``num_key_value_heads``, defaulting to ``num_attention_heads`` when absent (SGLang's getattr default)."""
    head_dim: int | None
    """``head_dim``, defaulting to hidden_size // num_attention_heads when absent (SGLang, transformers)."""
    intermediate_size: int | None

    @property
    def dflash(self) -> dict[str, Any]:
        value = self.raw.get("dflash_config")
        return value if isinstance(value, dict) else {}

    def get(self, key: str, default: Any = None) -> Any:
        """A ``dflash_config`` key first, then the top-level one (SGLang's and ik's order)."""
        return self.dflash.get(key, self.raw.get(key, default))

    @property
    def sliding(self) -> tuple[bool, ...] | None:
        """Per-layer sliding-window flags, or None when the drafter uses no sliding window.

        Mainline's converter rule (conversion/qwen.py:740-747): ``use_sliding_window`` or
        ``dflash_config.use_swa``, and ``use_swa`` makes every layer a sliding one.
        """
        uses = self.raw.get("use_sliding_window") or self.dflash.get("use_swa")
        if not uses or not self.sliding_window:
            return None
        if self.layer_types and not self.dflash.get("use_swa"):
            return tuple(t == "sliding_attention" for t in self.layer_types)
        return (True,) * self.num_layers

    @property
    def sliding_window(self) -> object:
        """``dflash_config.swa_window_size``, else ``sliding_window`` (mainline conversion/qwen.py:741)."""
        return self.dflash.get("swa_window_size") or self.raw.get("sliding_window")

    @property
    def causal(self) -> bool | None:
        """``is_causal``, else ``dflash_config.causal``, else None (mainline conversion/qwen.py:749-753)."""
        value = self.raw.get("is_causal")
        value = self.dflash.get("causal") if value is None else value
        return value if isinstance(value, bool) else None

    def scales(self, flavor: Flavor) -> dict[str, object]:
        """GGUF key suffix -> config value of each scale the flavour reads and the config sets
        (``dflash_config`` first; a softcap only when > 0, as the converter writes it)."""
        found = {}
        for key, gguf_key, flavors in SCALES:
            value = self.get(key)
            if flavor not in flavors or value is None:
                continue
            if key == "final_logit_softcapping" and not (is_number(value) and as_float(value) > 0):
                continue
            found[gguf_key] = value
        return found

    def expected_tensors(self) -> list[str]:
        """HF tensor names the config implies."""
        return hf_tensor_names(self.num_layers, bias=self.attention_bias, dflash2=self.dflash2)


def hf_tensor_names(num_layers: int, *, bias: bool = False, dflash2: bool = False) -> list[str]:
    """HF drafter tensor names: 11 per layer + 3 (fc, hidden_norm, norm); DFlash2 adds 4 per layer + 3."""
    names = [f"layers.{n}.{s}" for n in range(num_layers) for s in _LAYER]
    if bias:
        names += [f"layers.{n}.{s}" for n in range(num_layers) for s in _LAYER_BIAS]
    if dflash2:
        names += [f"layers.{n}.{s}" for n in range(num_layers) for s in _CONV]
        names += list(_SELECTOR)
    return names + list(_GLOBAL)


def rope_theta_lookup(config: dict[str, Any]) -> tuple[float | None, str | None]:
    """Nested ``rope_parameters.rope_theta`` first, then top-level ``rope_theta``, then ``rope_scaling``.

    The nested-first order is the point: converters that read only the top level silently fall back to
    the loader default 1e4 for Qwen3.6-era configs that carry 1e7 nested (seed 001).
    """
    for section in ("rope_parameters", None, "rope_scaling"):
        holder = config.get(section) if section else config
        theta = holder.get("rope_theta") if isinstance(holder, dict) else None
        if is_number(theta):
            return as_float(theta), f"{section}.rope_theta" if section else "rope_theta"
    return None, None


def is_number(value: object) -> TypeGuard[int | float]:
    """An int or float that is not a bool (``isinstance(True, int)`` holds)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def short_repr(value: object) -> str:
    """``repr(value)`` for one error line: a 401-digit integer is shown by its length."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:12]}... ({len(text)} characters)"


def as_float(value: int | float) -> float:
    """``float(value)``, with JSON integers too large for a double (``10**400``) as infinity, not an
    OverflowError: every caller then refuses it as "not a finite number" in one line."""
    try:
        return float(value)
    except OverflowError:
        return math.inf


def parse_config(config: dict[str, Any], path: Path | None = None) -> DrafterConfig:
    """Validate the keys every DFlash drafter needs; raise ``InputError`` naming the missing one."""

    def need(key: str) -> int:
        value = config.get(key)
        if not isinstance(value, int) or value <= 0:
            raise InputError(f"needs a positive integer {key}", path=path, field=key)
        return value

    dflash = config.get("dflash_config") if isinstance(config.get("dflash_config"), dict) else {}
    assert isinstance(dflash, dict)
    ids = dflash.get("target_layer_ids", config.get("target_layer_ids"))
    if not (isinstance(ids, list) and ids and all(isinstance(i, int) and i >= 0 for i in ids)):
        raise InputError("needs dflash_config.target_layer_ids (non-empty list of 0-based ints)", path=path,
                         field="dflash_config.target_layer_ids")  # fmt: skip
    theta, source = rope_theta_lookup(config)
    if theta is not None and not (math.isfinite(theta) and theta > 0):
        raw = config.get(source.split(".")[0]) if source else None
        shown = short_repr(raw.get("rope_theta") if isinstance(raw, dict) else raw)
        raise InputError(f"must be a positive finite number, got {shown}", path=path, field=source)
    archs = _strings(config, "architectures", path)
    dflash2 = "DFlash2DraftModel" in archs or any(k in dflash for k in ("conv_kernel_size", "selector_rank"))
    layer_types = _strings(config, "layer_types", path)
    mask = dflash.get("mask_token_id", config.get("mask_token_id"))
    block = dflash.get("block_size", config.get("block_size"))
    hidden = need("hidden_size")
    heads = _positive_int(config.get("num_attention_heads"))
    kv_heads = _positive_int(config.get("num_key_value_heads", heads))
    head_dim = _positive_int(config["head_dim"]) if config.get("head_dim") is not None else None
    if config.get("head_dim") is None and heads:
        head_dim = hidden // heads or None
    return DrafterConfig(
        raw=config,
        path=path,
        hidden_size=hidden,
        num_layers=need("num_hidden_layers"),
        vocab_size=config.get("vocab_size") if isinstance(config.get("vocab_size"), int) else None,
        target_layer_ids=tuple(ids),
        block_size=block if isinstance(block, int) else None,
        mask_token_id=mask if isinstance(mask, int) else None,
        rope_theta=theta,
        rope_theta_source=source,
        dflash2=dflash2,
        attention_bias=bool(config.get("attention_bias")),
        layer_types=layer_types,
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate_size=_positive_int(config.get("intermediate_size")),
    )


def _positive_int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _strings(config: dict[str, Any], key: str, path: Path | None) -> tuple[str, ...]:
    value = config.get(key) or []
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise InputError(f"{key} must be a list of strings", path=path, field=key)
    return tuple(value)


def load_config(path: str | Path) -> DrafterConfig:
    """Read and parse a drafter ``config.json``."""
    target = Path(path)
    return parse_config(read_json_object(target), target)


def gguf_name(hf_name: str, flavor: Flavor) -> str:
    """The GGUF tensor name of an HF drafter tensor in the given flavour."""
    if hf_name.startswith("layers."):
        _, layer, suffix = hf_name.split(".", 2)
        if suffix == "post_attention_layernorm.weight":
            return f"blk.{layer}.{POST_ATTENTION_NORM[flavor]}"
        if suffix in _GGUF_LAYER:
            return f"blk.{layer}.{_GGUF_LAYER[suffix]}"
    if hf_name in _GGUF_GLOBAL[flavor]:
        return _GGUF_GLOBAL[flavor][hf_name]
    if hf_name == "norm.weight":
        return "output_norm.weight"
    if hf_name in _GGUF_SELECTOR:
        return _GGUF_SELECTOR[hf_name]
    raise InputError(f"no GGUF name for tensor {hf_name!r}", field=hf_name)


def gguf_tensor_names(
    num_layers: int, flavor: Flavor, *, bias: bool = False, dflash2: bool = False
) -> list[str]:
    """GGUF tensor names of a drafter with ``num_layers`` layers in the given flavour."""
    return [gguf_name(n, flavor) for n in hf_tensor_names(num_layers, bias=bias, dflash2=dflash2)]
