"""Drafter lint: the silent failure modes of DFlash conversions, as findings with rule ids.

Every rule here stands for a drafter that loads and runs but drafts badly or not at all: rope base
1e4 instead of 1e7, 0-based vs 1-based target layers, a mask token outside the vocabulary, a tensor
named for the other flavour, a "q4" file without Q4 tensors (seed 001).
"""

from __future__ import annotations

import math
from pathlib import Path

from hubrelease.errors import InputError
from hubrelease.formats.dflash import (
    ARCH,
    DrafterConfig,
    Flavor,
    as_float,
    gguf_tensor_names,
    hf_tensor_names,
    is_number,
    load_config,
    short_repr,
)
from hubrelease.formats.dflash_shapes import GGUFDims, gguf_shapes, hf_shapes, shape_mismatches
from hubrelease.formats.gguf_header import GGUFSet, KVValue, TensorInfo, array_length, read_gguf
from hubrelease.formats.safetensors_header import SafetensorsSet, read_json_object, read_safetensors
from hubrelease.formats.speculators import drafter_config, is_speculators
from hubrelease.lint.composition import composition_findings
from hubrelease.lint.drafter_config import DFLASH2_KEYS, config_findings, target_layer_findings
from hubrelease.lint.findings import RuleFinding, error, warning
from hubrelease.lint.speculators import speculators_findings
from hubrelease.lint.target import TargetFacts, target_findings

LOADER_DEFAULT_ROPE = 10000.0
"""What ik and mainline loaders use when ``rope.freq_base`` is absent."""


def lint_file(
    path: str | Path,
    config: str | Path | None = None,
    composition: dict[str, int] | None = None,
    target: TargetFacts | None = None,
) -> list[RuleFinding]:
    """Lint a GGUF (file or split set) or a safetensors drafter (file, index json or folder).

    ``config`` is the HF config.json to check against (for safetensors, a sibling config.json is used
    when omitted); ``composition`` is a manifest's declared tensor-type counts for a GGUF; ``target``
    the facts of the target it serves (``lint.target``), for the depth, width and vocabulary rules.
    """
    model = Path(path)
    if model.name.endswith(".gguf"):
        drafter = load_config(config) if config else None
        return sorted(lint_gguf(read_gguf(model), drafter, composition, target))
    if model.is_dir() or model.name.endswith((".safetensors", ".index.json")):
        folder = model if model.is_dir() else model.parent
        found = Path(config) if config else folder / "config.json"
        if not config and not found.exists():
            raise InputError(
                "safetensors lint needs a config.json (beside the file or via --config)", path=model
            )
        raw = read_json_object(found)
        own = speculators_findings(raw) if is_speculators(raw) else []
        if any(f.rule_id == "target-layers" for f in own):
            return sorted(own)  # without valid layer ids there is no drafter to check the tensors against
        drafter, _ = drafter_config(raw, found)
        return sorted(lint_safetensors(read_safetensors(model), drafter, target) + own)
    raise InputError("expected a .gguf, .safetensors, index json or folder", path=model)


def _flavor(arch: str | None) -> Flavor | None:
    return next((f for f, name in ARCH.items() if name == arch), None)


def _ints(value: KVValue | None) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return [int(v) for v in value]  # type: ignore[arg-type]
    return None


def lint_gguf(
    model: GGUFSet,
    config: DrafterConfig | None,
    composition: dict[str, int] | None,
    target: TargetFacts | None = None,
) -> list[RuleFinding]:
    """All GGUF rules; the ones needing the HF config are skipped without one."""
    arch = model.architecture
    flavor = _flavor(arch)
    findings = composition_findings(model, composition, mainline=flavor == "mainline")
    if flavor is None:
        findings.append(
            error("arch", f"architecture {arch!r} is not a DFlash drafter (dflash-draft or dflash)")
        )
        return findings
    tensors = {t.name: t for t in model.tensors}
    kv = model.value
    p = ARCH[flavor]
    dkey = f"{p}.dflash" if flavor == "ik" else p
    findings += _rope(kv(f"{p}.rope.freq_base"), p, config)
    findings += _flavour_keys(model, flavor, tensors)
    ids = _ints(kv(f"{dkey}.target_layer_ids" if flavor == "ik" else f"{p}.target_layers"))
    findings += _target_layers(ids, flavor, config)
    findings += _features(flavor, tensors, ids, config)
    mask_key = f"{dkey}.mask_token_id" if flavor == "ik" else "tokenizer.ggml.mask_token_id"
    vocab = array_length(kv("tokenizer.ggml.tokens")) or (config.vocab_size if config else None)
    findings += _mask(kv(mask_key), mask_key, vocab, config)
    block_count = kv(f"{p}.block_count")
    # A config whose layer count exceeds the tensor count is a lie (tensor-set says so); its per-layer
    # sliding flags are not built (10**12 layers would not fit in memory).
    layered = config if config and config.num_layers <= len(tensors) else None
    findings += _swa(kv(f"{p}.attention.sliding_window_pattern"), block_count, layered)
    window = kv(f"{p}.attention.sliding_window")
    if layered and layered.sliding is not None and window != layered.sliding_window:
        findings.append(
            error(
                "swa-pattern",
                f"{p}.attention.sliding_window is {window!r}, config says {layered.sliding_window!r}",
            )
        )
    if config and isinstance(block_count, int) and block_count != config.num_layers:
        findings.append(
            error(
                "tensor-set",
                f"block_count is {block_count}, the config's num_hidden_layers {config.num_layers}",
            )
        )
    dflash2 = any(kv(f"{p}.{k}") for k in DFLASH2_KEYS)
    findings += _tensor_set(tensors, flavor, block_count, dflash2, config)
    findings += _gguf_shapes(model, flavor, tensors, ids, dflash2)
    if config:
        findings += target_layer_findings(config)
        findings += _causal(kv(f"{p}.attention.causal"), p, flavor, config)
        findings += _scales(model, p, flavor, config)
    if target is not None and ids is not None:
        fc = tensors.get("dflash_fc.weight" if flavor == "ik" else "fc.weight")
        selector = tensors.get("selector_predecessor.weight")
        # ik ids are 0-based HF ids, mainline's 1-based (id + 1): both name the layer whose output is read.
        hf_ids = [i - 1 for i in ids] if flavor == "mainline" else ids
        mask = kv(mask_key)
        findings += target_findings(
            target,
            hf_ids,
            fc.shape[0] if fc else None,
            mask if isinstance(mask, int) and not isinstance(mask, bool) else None,
            selector.shape[1] if selector and len(selector.shape) > 1 else None,
            declared_depth=config.raw.get("num_target_layers") if config else None,
        )
    block = kv(f"{dkey}.block_size")
    if not isinstance(block, int) or block < 2:
        findings.append(error("block-size", f"{dkey}.block_size is {block!r}; it must be an integer > 1"))
    elif config and config.block_size and block != config.block_size:
        findings.append(error("block-size", f"{dkey}.block_size is {block}, config says {config.block_size}"))
    return findings


def _rope(value: KVValue | None, prefix: str, config: DrafterConfig | None) -> list[RuleFinding]:
    key = f"{prefix}.rope.freq_base"
    expected = config.rope_theta if config else None
    if not isinstance(value, int | float) or isinstance(value, bool):
        hint = (
            f" but the config says {expected:g} ({config.rope_theta_source})" if config and expected else ""
        )
        return [
            error("rope-freq-base", f"{key} is missing: loaders fall back to {LOADER_DEFAULT_ROPE:g}{hint}")
        ]
    if config is None:
        return []
    if expected is None:
        return [warning("rope-freq-base", "the config has no rope_theta (nested, top-level or rope_scaling)")]
    if not math.isclose(float(value), expected, rel_tol=1e-6):
        return [
            error(
                "rope-freq-base",
                f"{key} is {float(value):g} but the config says {expected:g} ({config.rope_theta_source})",
            )
        ]
    return []


def _flavour_keys(model: GGUFSet, flavor: Flavor, tensors: dict[str, TensorInfo]) -> list[RuleFinding]:
    p = ARCH[flavor]
    foreign: list[str]
    if flavor == "ik":
        required = [
            f"{p}.dflash.{k}"
            for k in ("block_size", "mask_token_id", "target_layer_ids", "n_target_features")
        ]
        foreign = [n for n in ("fc.weight", "enc.output_norm.weight") if n in tensors]
        foreign += [n for n in tensors if n.endswith(".ffn_norm.weight")][:1]
        other = "mainline"
    else:
        required = [f"{p}.block_size", f"{p}.target_layers"]
        foreign = [n for n in ("dflash_fc.weight", "dflash_hidden_norm.weight") if n in tensors]
        foreign += [n for n in tensors if n.endswith(".post_attention_norm.weight")][:1]
        other = "ik"
    findings = [error("flavour", f"{ARCH[flavor]} file lacks {k}") for k in required if k not in model.kv]
    if foreign:
        findings.append(
            error("flavour", f"{ARCH[flavor]} file has {other} tensor names ({', '.join(foreign)})")
        )
    if "tokenizer.ggml.model" not in model.kv:
        # ik checks the draft's vocab against the target's (speculative-dflash-impl.h:17-30); mainline's
        # vocab loader requires the key (src/llama-vocab.cpp:1944): neither loads the file.
        findings.append(
            error("flavour", f"{p} file has no tokenizer (build with --tokenizer-from the target GGUF)")
        )
    return findings


def _target_layers(ids: list[int] | None, flavor: Flavor, config: DrafterConfig | None) -> list[RuleFinding]:
    if ids is None:
        return []
    findings = []
    if len(set(ids)) != len(ids):
        findings.append(error("target-layers", f"target layers {ids} contain duplicates"))
    if flavor == "ik" and not 1 <= len(ids) <= 8:
        findings.append(error("target-layers", f"ik accepts 1..8 target layers, file has {len(ids)}"))
    if config:
        expected = [i + (1 if flavor == "mainline" else 0) for i in config.target_layer_ids]
        if ids != expected:
            base = "1-based" if flavor == "mainline" else "0-based"
            findings.append(
                error("target-layers", f"target layers {ids}, expected {base} {expected} from the config")
            )
    elif flavor == "mainline" and 0 in ids:
        findings.append(
            error(
                "target-layers", f"dflash.target_layers {ids} contains 0: looks 0-based (mainline is 1-based)"
            )
        )
    return findings


def _features(
    flavor: Flavor, tensors: dict[str, TensorInfo], ids: list[int] | None, config: DrafterConfig | None
) -> list[RuleFinding]:
    """The fc input width against K target layers (its shape against the keys is ``_gguf_shapes``)."""
    fc = tensors.get("dflash_fc.weight" if flavor == "ik" else "fc.weight")
    width = fc.shape[0] if fc else None
    findings = []
    target_hidden = config.get("target_hidden_size") if config else None
    if width is not None and ids:
        if width % len(ids):
            findings.append(
                error(
                    "n-target-features",
                    f"fc input width {width} is not a multiple of {len(ids)} target layers",
                )
            )
        elif isinstance(target_hidden, int) and width != target_hidden * len(ids):
            findings.append(
                error(
                    "n-target-features",
                    f"fc input width {width} != target hidden {target_hidden} x {len(ids)} layers",
                )
            )
    return findings


def _uint_kv(model: GGUFSet, key: str, default: int = 0) -> int:
    value = model.value(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _gguf_shapes(
    model: GGUFSet, flavor: Flavor, tensors: dict[str, TensorInfo], ids: list[int] | None, dflash2: bool
) -> list[RuleFinding]:
    """Every tensor against the shape the engine's loader asks for, from the file's own keys."""
    p = ARCH[flavor]
    # Mainline reads context, embedding and block count without a default (llama-model.cpp:1321-1327) and
    # the eps (dflash.cpp:23); head count and FF length default to 0 (:1395-1396), which no tensor fits.
    required = ["context_length", "embedding_length", "block_count", "attention.head_count",
                "feed_forward_length", "attention.layer_norm_rms_epsilon"]  # fmt: skip
    missing = [f"{p}.{k}" for k in required if model.value(f"{p}.{k}") is None]
    if missing:
        return [error("flavour", f"{p} file lacks {', '.join(missing)}")]
    e, heads = _uint_kv(model, f"{p}.embedding_length"), _uint_kv(model, f"{p}.attention.head_count")
    head_k = _uint_kv(model, f"{p}.attention.key_length", e // heads if heads else 0)
    inputs = _uint_kv(model, f"{p}.dflash.n_target_features") if flavor == "ik" else len(ids or ()) * e
    dims = GGUFDims(
        n_embd=e,
        n_head=heads,
        n_head_kv=_uint_kv(model, f"{p}.attention.head_count_kv", heads),
        head_k=head_k,
        head_v=_uint_kv(model, f"{p}.attention.value_length", head_k),
        n_ff=_uint_kv(model, f"{p}.feed_forward_length"),
        n_inputs=inputs,
        n_vocab=array_length(model.value("tokenizer.ggml.tokens")),
        conv_kernel=_uint_kv(model, f"{p}.conv_kernel_size"),
        conv_group=_uint_kv(model, f"{p}.conv_group_size"),
        selector_rank=_uint_kv(model, f"{p}.selector_rank"),
    )
    findings = []
    if flavor == "mainline" and "selector_hidden.weight" in tensors:
        findings += _dflash2_hparams(model, dims)
    layers = _uint_kv(model, f"{p}.block_count")
    if layers > len(tensors):
        return findings  # a lying block_count: _tensor_set reports it
    expected = gguf_shapes(dims, flavor, layers, dflash2=dflash2)
    fc = "dflash_fc.weight" if flavor == "ik" else "fc.weight"
    for name, message in shape_mismatches({n: t.shape for n, t in tensors.items()}, expected):
        # check_tensor_dims: "tensor 'fc.weight' has wrong shape" (mainline llama-model-loader.cpp:917).
        findings.append(error("n-target-features" if name == fc else "tensor-shape", message))
    return findings


def _dflash2_hparams(model: GGUFSet, dims: GGUFDims) -> list[RuleFinding]:
    """mainline src/models/dflash.cpp:141-151, checked before any DFlash2 tensor is created."""
    top_k = _uint_kv(model, "dflash.selector_top_k")
    if not (dims.selector_rank and top_k and dims.conv_kernel and dims.conv_group):
        return [
            error("dflash2-tensors", "DFlash2 file lacks dflash.conv_*/selector_* keys (mainline refuses it)")
        ]
    findings = []
    if dims.n_embd % dims.conv_group:
        findings.append(
            error(
                "conv-group",
                f"embedding_length {dims.n_embd} is not divisible by conv_group_size {dims.conv_group}",
            )
        )
    if dims.n_embd < top_k * (top_k + 1):
        findings.append(
            error("selector-rank", f"embedding_length {dims.n_embd} is too small for selector_top_k {top_k}")
        )
    return findings


def _causal(value: KVValue | None, prefix: str, flavor: Flavor, config: DrafterConfig) -> list[RuleFinding]:
    """Mainline runs the draft causal only when the file says so (common/speculative.cpp:954, :990);
    ik ignores the key outside Laguna drafts (llama-hparams.cpp:914)."""
    if flavor == "ik" or config.causal is None or bool(value) == config.causal:
        return []
    shown = "absent (non-causal)" if value is None else str(value).lower()
    return [
        error(
            "causal",
            f"{prefix}.attention.causal is {shown}, the config says causal={str(config.causal).lower()}",
        )
    ]


def _scales(model: GGUFSet, prefix: str, flavor: Flavor, config: DrafterConfig) -> list[RuleFinding]:
    """Each scale the config sets is in the file, at the same value (``formats.dflash.SCALES``)."""
    findings = []
    for gguf_key, expected in config.scales(flavor).items():
        key, value = f"{prefix}.{gguf_key}", model.value(f"{prefix}.{gguf_key}")
        if not is_number(value):
            findings.append(error("scales", f"{key} is missing but the config sets {short_repr(expected)}"))
        elif not (is_number(expected) and math.isclose(as_float(value), as_float(expected), rel_tol=1e-6)):
            findings.append(error("scales", f"{key} is {value:g} but the config says {short_repr(expected)}"))
    return findings


def _mask(
    value: KVValue | None, key: str, vocab: int | None, config: DrafterConfig | None
) -> list[RuleFinding]:
    if not isinstance(value, int) or isinstance(value, bool):
        return [error("mask-token", f"{key} is missing")]
    if vocab is not None and not 0 <= value < vocab:
        return [error("mask-token", f"mask token id {value} is outside the vocabulary ({vocab} tokens)")]
    if config and config.mask_token_id is not None and value != config.mask_token_id:
        return [error("mask-token", f"mask token id {value}, config says {config.mask_token_id}")]
    return []


def _swa(
    pattern: KVValue | None, block_count: KVValue | None, config: DrafterConfig | None
) -> list[RuleFinding]:
    expected = config.sliding if config else None
    if pattern is None:
        if expected is not None:
            return [
                error(
                    "swa-pattern",
                    "the config uses a sliding window but the file has no sliding_window_pattern",
                )
            ]
        return []
    length = array_length(pattern)
    if length != block_count:
        return [
            error("swa-pattern", f"sliding_window_pattern has {length} entries, block_count is {block_count}")
        ]
    if expected is not None and isinstance(pattern, list) and tuple(pattern) != expected:
        return [
            error(
                "swa-pattern", f"sliding_window_pattern {_tf(pattern)} != config layer_types {_tf(expected)}"
            )
        ]
    return []


def _tf(flags: list[KVValue] | tuple[bool, ...]) -> str:
    return "".join("T" if f else "F" for f in flags)


def _tensor_set(
    tensors: dict[str, TensorInfo],
    flavor: Flavor,
    block_count: KVValue | None,
    dflash2: bool,
    config: DrafterConfig | None,
) -> list[RuleFinding]:
    if not isinstance(block_count, int):
        return [error("tensor-set", "block_count is missing, cannot check the tensor set")]
    findings: list[RuleFinding] = []
    if config and config.dflash2 != dflash2:
        findings.append(
            error(
                "dflash2-tensors",
                f"config is {'DFlash2' if config.dflash2 else 'DFlash'}, file keys say otherwise",
            )
        )
    if dflash2 and flavor == "ik":
        findings.append(error("dflash2-tensors", "ik_llama.cpp has no DFlash2: use the mainline flavour"))
    if block_count > len(tensors):
        return [*findings, _too_many_layers("block_count", block_count, "file", len(tensors))]
    bias = bool(config and config.attention_bias) or "blk.0.attn_q.bias" in tensors
    base = set(gguf_tensor_names(block_count, flavor, bias=bias))
    expected = set(
        gguf_tensor_names(block_count, flavor, bias=bias, dflash2=dflash2 or bool(config and config.dflash2))
    )
    return findings + _compare(set(tensors), base, expected, {"token_embd.weight", "output.weight"})


def _too_many_layers(key: str, layers: int, holder: str, tensors: int) -> RuleFinding:
    """A layer count above the tensor count (11 per layer) is a lie; listing its names would never end."""
    return error("tensor-set", f"{key} {layers} claims more layers than the {holder} has tensors ({tensors})")


def _compare(found: set[str], base: set[str], expected: set[str], optional: set[str]) -> list[RuleFinding]:
    findings = []
    for rule, names in (("tensor-set", base), ("dflash2-tensors", expected - base)):
        missing = sorted(names - found)
        if missing:
            findings.append(error(rule, f"{len(missing)} expected tensors missing: {', '.join(missing[:5])}"))
    extra = sorted(found - expected - optional)
    if extra:
        findings.append(warning("tensor-set", f"{len(extra)} unexpected tensors: {', '.join(extra[:5])}"))
    return findings


def lint_safetensors(
    model: SafetensorsSet, config: DrafterConfig, target: TargetFacts | None = None
) -> list[RuleFinding]:
    """Rules for an SGLang/HF safetensors drafter against its config.json (and its target's facts)."""
    findings: list[RuleFinding] = []
    names = {t.name.removeprefix("model."): t for t in model.tensors}
    rotary = sorted(n for n in names if "rotary_emb" in n or n.endswith("inv_freq"))
    if rotary:
        findings.append(warning("tensor-set", f"rotary buffers should be dropped: {', '.join(rotary)}"))
    found = set(names) - set(rotary)
    if config.num_layers > len(found):
        findings.append(_too_many_layers("num_hidden_layers", config.num_layers, "checkpoint", len(found)))
    else:
        base = set(hf_tensor_names(config.num_layers, bias=config.attention_bias))
        findings += _compare(found, base, set(config.expected_tensors()), set())
    if config.num_layers <= len(found):
        for name, message in shape_mismatches({n: t.shape for n, t in names.items()}, hf_shapes(config)):
            findings.append(error("n-target-features" if name == "fc.weight" else "tensor-shape", message))
    findings += _config_rope(config)
    if config.mask_token_id is None:
        findings.append(error("mask-token", "config has no dflash_config.mask_token_id"))
    elif config.vocab_size is not None and not 0 <= config.mask_token_id < config.vocab_size:
        findings.append(
            error("mask-token", f"mask token id {config.mask_token_id} >= vocab_size {config.vocab_size}")
        )
    findings += config_findings(config, config.path.parent if config.path else None)
    if target is not None:
        fc, selector = names.get("fc.weight"), names.get("candidate_selector.predecessor_codebook")
        findings += target_findings(
            target,
            config.target_layer_ids,
            fc.shape[1] if fc and len(fc.shape) > 1 else None,
            config.mask_token_id,
            selector.shape[0] if selector and selector.shape else None,
            declared_depth=config.raw.get("num_target_layers"),
        )
    return findings


def _config_rope(config: DrafterConfig) -> list[RuleFinding]:
    if config.rope_theta is None:
        return [
            error("rope-freq-base", "config has no rope_theta (rope_parameters, top level or rope_scaling)")
        ]
    top = config.raw.get("rope_theta")
    if is_number(top) and not math.isclose(as_float(top), config.rope_theta, rel_tol=1e-6):
        return [
            error(
                "rope-freq-base",
                f"top-level rope_theta {top:g} disagrees with {config.rope_theta_source} {config.rope_theta:g}",
            )
        ]
    if top is None:
        return [
            warning(
                "rope-freq-base",
                f"rope_theta only in {config.rope_theta_source}: top-level-only converters will use 1e4",
            )
        ]
    return []
