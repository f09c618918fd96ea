"""The tensor shapes each loader builds from a drafter's config (HF) or its GGUF keys, to compare against.

Loaders check shapes, not just names: SGLang's ``load_weights`` (srt/models/dflash.py) copies into
parameters sized from config.json (``default_weight_loader`` asserts equal sizes; fc.weight raises
"fc.weight shape mismatch"), z-lab's ``DFlashDraftModel`` loads strictly into the same modules
(dflash/model.py:195-206 q/k/v/o, :317 fc), and llama.cpp's ``create_tensor`` fails with
``check_tensor_dims: tensor '...' has wrong shape`` (llama-model-loader.cpp:917). A mis-shaped
tensor with the right name therefore builds, lints and then fails at load; these tables make it a
build error and a lint finding instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hubrelease.formats.dflash import DrafterConfig, Flavor, gguf_name

_LAYER_NUMBER = re.compile(r"^(layers\.|blk\.)\d+\.")


@dataclass(frozen=True)
class ExpectedShape:
    """A tensor's expected shape and the config keys (or GGUF keys) it is derived from."""

    shape: tuple[int, ...]
    source: str


def hf_shapes(config: DrafterConfig) -> dict[str, ExpectedShape]:
    """HF drafter tensor shapes (numpy order) implied by config.json; tensors whose keys are missing
    or invalid are left out (``config_findings`` reports the key)."""
    h, heads, kv, hd, inter = (
        config.hidden_size,
        config.num_heads,
        config.num_kv_heads,
        config.head_dim,
        config.intermediate_size,
    )
    shapes: dict[str, ExpectedShape] = {}
    layer: dict[str, ExpectedShape] = {
        "input_layernorm.weight": ExpectedShape((h,), "hidden_size"),
        "post_attention_layernorm.weight": ExpectedShape((h,), "hidden_size"),
    }
    if heads and hd:
        # SGLang QKVParallelLinear(hidden_size, head_dim, num_attention_heads, num_key_value_heads);
        # mainline dflash.cpp:229-235, ik llama-load-tensors.cpp:2427-2433.
        q = heads * hd
        layer |= {
            "self_attn.q_proj.weight": ExpectedShape((q, h), "num_attention_heads x head_dim, hidden_size"),
            "self_attn.o_proj.weight": ExpectedShape((h, q), "hidden_size, num_attention_heads x head_dim"),
            "self_attn.q_norm.weight": ExpectedShape((hd,), "head_dim"),
            "self_attn.k_norm.weight": ExpectedShape((hd,), "head_dim"),
            "self_attn.q_proj.bias": ExpectedShape((q,), "num_attention_heads x head_dim"),
            "self_attn.o_proj.bias": ExpectedShape((h,), "hidden_size"),
        }
        if kv:
            for name in ("k_proj", "v_proj"):
                layer[f"self_attn.{name}.weight"] = ExpectedShape(
                    (kv * hd, h), "num_key_value_heads x head_dim, hidden_size"
                )
                layer[f"self_attn.{name}.bias"] = ExpectedShape((kv * hd,), "num_key_value_heads x head_dim")
    if inter:
        # SGLang DFlashMLP: MergedColumnParallelLinear(hidden, [intermediate] * 2); mainline dflash.cpp:246-248.
        layer |= {
            "mlp.gate_proj.weight": ExpectedShape((inter, h), "intermediate_size, hidden_size"),
            "mlp.up_proj.weight": ExpectedShape((inter, h), "intermediate_size, hidden_size"),
            "mlp.down_proj.weight": ExpectedShape((h, inter), "hidden_size, intermediate_size"),
        }
    taps, group, rank = (
        config.get("conv_kernel_size"),
        config.get("conv_group_size"),
        config.get("selector_rank"),
    )
    if config.dflash2 and _positive(taps) and _positive(group) and h % group == 0:
        # mainline dflash.cpp:250-257: base {n_embd, kernel, 2}, proj {n_embd, 2 * kernel * n_embd / group}.
        for conv in ("attention_conv", "mlp_conv"):
            layer[f"{conv}.base_kernel"] = ExpectedShape((2, taps, h), "2, conv_kernel_size, hidden_size")
            layer[f"{conv}.kernel_projection.weight"] = ExpectedShape(
                (2 * taps * (h // group), h),
                "2 x conv_kernel_size x hidden_size / conv_group_size, hidden_size",
            )
    for n in range(config.num_layers):
        shapes |= {f"layers.{n}.{suffix}": value for suffix, value in layer.items()}
    if config.dflash2 and _positive(rank):
        # mainline dflash.cpp:153-155: prev/next {rank, n_vocab}, hidden {n_embd, rank}.
        shapes["candidate_selector.hidden_projection.weight"] = ExpectedShape(
            (rank, h), "selector_rank, hidden_size"
        )
        if config.vocab_size:
            for book in ("predecessor_codebook", "successor_codebook"):
                shapes[f"candidate_selector.{book}"] = ExpectedShape(
                    (config.vocab_size, rank), "vocab_size, selector_rank"
                )
    k = len(config.target_layer_ids)
    # fc = Linear(K * hidden_size, hidden_size): SGLang dflash.py (DFlashDraftModel.__init__, raises in
    # load_weights), z-lab dflash/model.py:317, mainline dflash.cpp:162 ({n_embd_inp = K * n_embd, n_embd}).
    shapes["fc.weight"] = ExpectedShape((h, k * h), f"hidden_size, {k} target layers x hidden_size")
    shapes["hidden_norm.weight"] = ExpectedShape((h,), "hidden_size")
    shapes["norm.weight"] = ExpectedShape((h,), "hidden_size")
    return shapes


def _positive(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


@dataclass(frozen=True)
class GGUFDims:
    """The hyperparameters a GGUF loader sizes tensors from (its own keys, not the HF config)."""

    n_embd: int
    n_head: int
    n_head_kv: int
    head_k: int
    head_v: int
    n_ff: int
    n_inputs: int
    """fc input width: K x n_embd in mainline (dflash.cpp:41), n_target_features in ik (load-tensors:2386)."""
    n_vocab: int | None
    conv_kernel: int = 0
    conv_group: int = 0
    selector_rank: int = 0


def gguf_shapes(
    dims: GGUFDims, flavor: Flavor, num_layers: int, *, dflash2: bool
) -> dict[str, ExpectedShape]:
    """GGUF tensor shapes in ggml order (ne0 first) that ``create_tensor`` asks for: mainline
    src/models/dflash.cpp:153-257, ik src/llama-load-tensors.cpp:2370-2445."""
    e, q, kv, v = (
        dims.n_embd,
        dims.head_k * dims.n_head,
        dims.head_k * dims.n_head_kv,
        dims.head_v * dims.n_head_kv,
    )
    embd = ExpectedShape((e,), "embedding_length")
    layer: dict[str, ExpectedShape] = {
        "input_layernorm.weight": embd,
        "post_attention_layernorm.weight": embd,
        "self_attn.q_proj.weight": ExpectedShape((e, q), "embedding_length, head_count x key_length"),
        "self_attn.k_proj.weight": ExpectedShape((e, kv), "embedding_length, head_count_kv x key_length"),
        "self_attn.v_proj.weight": ExpectedShape((e, v), "embedding_length, head_count_kv x value_length"),
        "self_attn.o_proj.weight": ExpectedShape(
            (dims.head_v * dims.n_head if flavor == "ik" else q, e),
            "head_count x key_length, embedding_length",
        ),
        "self_attn.q_norm.weight": ExpectedShape((dims.head_k,), "key_length"),
        "self_attn.k_norm.weight": ExpectedShape((dims.head_k,), "key_length"),
        "self_attn.q_proj.bias": ExpectedShape((q,), "head_count x key_length"),
        "self_attn.k_proj.bias": ExpectedShape((kv,), "head_count_kv x key_length"),
        "self_attn.v_proj.bias": ExpectedShape((kv,), "head_count_kv x key_length"),
        "self_attn.o_proj.bias": embd,
        "mlp.gate_proj.weight": ExpectedShape((e, dims.n_ff), "embedding_length, feed_forward_length"),
        "mlp.up_proj.weight": ExpectedShape((e, dims.n_ff), "embedding_length, feed_forward_length"),
        "mlp.down_proj.weight": ExpectedShape((dims.n_ff, e), "feed_forward_length, embedding_length"),
    }
    if dflash2 and dims.conv_group and e % dims.conv_group == 0:
        projected = 2 * dims.conv_kernel * (e // dims.conv_group)
        for conv in ("attention_conv", "mlp_conv"):
            layer[f"{conv}.base_kernel"] = ExpectedShape(
                (e, dims.conv_kernel, 2), "embedding_length, conv_kernel_size, 2"
            )
            layer[f"{conv}.kernel_projection.weight"] = ExpectedShape(
                (e, projected), "embedding_length, 2 x conv_kernel_size x embedding_length / conv_group_size"
            )
    shapes = {
        gguf_name(f"layers.{n}.{suffix}", flavor): value
        for n in range(num_layers)
        for suffix, value in layer.items()
    }
    inputs = "n_target_features" if flavor == "ik" else "target_layers x embedding_length"
    shapes[gguf_name("fc.weight", flavor)] = ExpectedShape((dims.n_inputs, e), f"{inputs}, embedding_length")
    shapes[gguf_name("hidden_norm.weight", flavor)] = embd
    shapes[gguf_name("norm.weight", flavor)] = embd
    if dflash2 and dims.selector_rank:
        rank = dims.selector_rank
        shapes["selector_hidden.weight"] = ExpectedShape((e, rank), "embedding_length, selector_rank")
        if dims.n_vocab:
            for name in ("selector_predecessor.weight", "selector_successor.weight"):
                shapes[name] = ExpectedShape((rank, dims.n_vocab), "selector_rank, tokenizer.ggml.tokens")
    return shapes


def shape_mismatches(
    found: dict[str, tuple[int, ...]], expected: dict[str, ExpectedShape]
) -> list[tuple[str, str]]:
    """``(first tensor name, message)`` per kind of mismatch among tensors present in both: the same
    defect in every layer is one message (``blk.N.attn_k.weight (all 64 layers) is ...``)."""
    groups: dict[tuple[str, tuple[int, ...]], list[str]] = {}
    for name, shape in found.items():
        if name in expected and tuple(shape) != expected[name].shape:
            groups.setdefault((_LAYER_NUMBER.sub(r"\1N.", name), tuple(shape)), []).append(name)
    result = []
    for (generic, shape), names in groups.items():
        want = expected[names[0]]
        label = names[0] if len(names) == 1 else f"{generic} ({len(names)} layers)"
        result.append(
            (names[0], f"{label} is {list(shape)}, the loader builds {list(want.shape)} ({want.source})")
        )
    return result
