"""A tiny but complete target model: a random Qwen3ForCausalLM with a byte-level BPE tokenizer.

The example release's drafter borrows this target's embedding and head, so the target must be a real
model an engine loads: ``config.json`` + ``model.safetensors`` + ``tokenizer.json`` +
``tokenizer_config.json`` as transformers writes them, and a GGUF holding what llama.cpp's
``convert_hf_to_gguf.py`` writes for Qwen3 (``conversion/qwen.py`` Qwen3Model, ``conversion/base.py``
``TextModel.set_gguf_parameters`` / ``_set_vocab_gpt2``). Built with ``tokenizers``, ``safetensors``
and ``gguf``; no torch. Everything is seeded, so the bytes are the same on every run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

import gguf
import numpy as np
from safetensors.numpy import load_file, save_file
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from hubrelease.formats.dflash import gguf_name

HIDDEN = 64
HEADS = 4
KV_HEADS = 2
HEAD_DIM = 16
INTERMEDIATE = 128
LAYERS = 8
VOCAB = 512
"""config.json's vocab_size: the tokenizer has 504 tokens, the rest are padding rows (as Qwen3 pads
151,669 tokens to 151,936)."""
BPE_TOKENS = 500
SPECIAL_TOKENS = ("<|MASK|>", "<|endoftext|>", "<|im_start|>", "<|im_end|>")
"""Added after the BPE vocabulary: ids 500..503. 500 is the drafters' mask token."""
MASK_TOKEN_ID = 500
BOS_TOKEN_ID = 501
EOS_TOKEN_ID = 503
ROPE_THETA = 1_000_000.0
# Qwen2/Qwen3's pre-tokenizer split, from their tokenizer.json.
_QWEN2_SPLIT = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_CORPUS = """\
Speculative decoding runs a small draft model ahead of a large target model. The draft proposes a
block of tokens, the target checks them in one forward pass and keeps the longest prefix it agrees
with. A block diffusion drafter fills every masked position of the block at once, conditioned on
hidden states taken from a few layers of the target. The release publishes the drafter weights,
the configuration, a card with measured speedups, checksums for every file and the exact revision
of the target model it was trained against. Engines load the checkpoint, read the configuration,
build each layer with the declared number of attention heads, key value heads and head dimension,
then copy every tensor into place after checking its shape. When a shape disagrees with the
configuration the engine refuses to start, which is why the builder checks the same rules first.
Quantized files trade a little accuracy for memory; norms stay in full precision while the large
matrices are stored as eight bit blocks with one scale per thirty two values.
"""
_CHAT_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

TargetOutType = Literal["f32", "f16"]


def target_config() -> dict[str, Any]:
    """config.json of a Qwen3ForCausalLM as transformers 4.51 writes it, with tiny dimensions."""
    return {
        "architectures": ["Qwen3ForCausalLM"],
        "attention_bias": False,
        "attention_dropout": 0.0,
        "bos_token_id": BOS_TOKEN_ID,
        "eos_token_id": EOS_TOKEN_ID,
        "head_dim": HEAD_DIM,
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "initializer_range": 0.02,
        "intermediate_size": INTERMEDIATE,
        "max_position_embeddings": 4096,
        "max_window_layers": LAYERS,
        "model_type": "qwen3",
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "num_key_value_heads": KV_HEADS,
        "rms_norm_eps": 1e-06,
        "rope_scaling": None,
        "rope_theta": ROPE_THETA,
        "sliding_window": None,
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
        "transformers_version": "4.51.0",
        "use_cache": True,
        "use_sliding_window": False,
        "vocab_size": VOCAB,
    }


def layer_shapes(config: dict[str, Any], prefix: str) -> dict[str, tuple[int, ...]]:
    """One Qwen3 decoder layer's HF tensor shapes (the DFlash drafters' layers are the same)."""
    h, hd, inter = config["hidden_size"], config["head_dim"], config["intermediate_size"]
    q, kv = config["num_attention_heads"] * hd, config["num_key_value_heads"] * hd
    return {
        prefix + "input_layernorm.weight": (h,),
        prefix + "post_attention_layernorm.weight": (h,),
        prefix + "self_attn.q_proj.weight": (q, h),
        prefix + "self_attn.k_proj.weight": (kv, h),
        prefix + "self_attn.v_proj.weight": (kv, h),
        prefix + "self_attn.o_proj.weight": (h, q),
        prefix + "self_attn.q_norm.weight": (hd,),
        prefix + "self_attn.k_norm.weight": (hd,),
        prefix + "mlp.gate_proj.weight": (inter, h),
        prefix + "mlp.up_proj.weight": (inter, h),
        prefix + "mlp.down_proj.weight": (h, inter),
    }


def target_tensors(config: dict[str, Any], seed: int = 0) -> dict[str, np.ndarray]:
    """HF Qwen3 tensors: random N(0, 0.02) matrices, norms at 1 (so the model's activations stay sane)."""
    rng = np.random.default_rng(seed)
    h, vocab = config["hidden_size"], config["vocab_size"]
    shapes: dict[str, tuple[int, ...]] = {"model.embed_tokens.weight": (vocab, h)}
    for n in range(config["num_hidden_layers"]):
        shapes |= layer_shapes(config, f"model.layers.{n}.")
    shapes |= {"model.norm.weight": (h,), "lm_head.weight": (vocab, h)}
    return {
        name: np.ones(shape, dtype=np.float32)
        if len(shape) == 1
        else rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)
        for name, shape in shapes.items()
    }


def build_tokenizer() -> Tokenizer:
    """A Qwen2-style byte-level BPE (NFC, Qwen2 split regex, byte-level alphabet) trained on a fixed text.

    The 256 byte tokens are always in the vocabulary, so any UTF-8 text tokenizes (llama.cpp's BPE
    falls back to byte tokens and needs every one of them).
    """
    tokenizer = Tokenizer(models.BPE(unk_token=None, fuse_unk=False, byte_fallback=False))
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(_QWEN2_SPLIT), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()  # its options are pre-tokenizer ones: the decoder ignores them
    trainer = trainers.BpeTrainer(
        vocab_size=BPE_TOKENS,
        min_frequency=1,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(_CORPUS.splitlines() * 4, trainer)
    if tokenizer.get_vocab_size() != BPE_TOKENS:
        raise AssertionError(f"BPE training gave {tokenizer.get_vocab_size()} tokens, expected {BPE_TOKENS}")
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    return tokenizer


def _tokenizer_config() -> dict[str, Any]:
    decoder = {
        str(BPE_TOKENS + i): {
            "content": token,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": True,
        }
        for i, token in enumerate(SPECIAL_TOKENS)
    }
    return {
        "add_bos_token": False,
        "add_prefix_space": False,
        "added_tokens_decoder": decoder,
        "bos_token": None,
        "chat_template": _CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "eos_token": "<|im_end|>",
        "errors": "replace",
        "model_max_length": 4096,
        "pad_token": "<|endoftext|>",
        "split_special_tokens": False,
        "tokenizer_class": "Qwen2Tokenizer",
        "unk_token": None,
    }


def _json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def write_target_model(folder: Path, *, seed: int = 0) -> Path:
    """The HF folder: config.json, model.safetensors (F32), tokenizer.json, tokenizer_config.json."""
    folder.mkdir(parents=True, exist_ok=True)
    config = target_config()
    _json(folder / "config.json", config)
    save_file(target_tensors(config, seed), str(folder / "model.safetensors"), metadata={"format": "pt"})
    build_tokenizer().save(str(folder / "tokenizer.json"))
    _json(folder / "tokenizer_config.json", _tokenizer_config())
    return folder


_GGUF_GLOBAL = {
    "model.embed_tokens.weight": "token_embd.weight",
    "model.norm.weight": "output_norm.weight",
    "lm_head.weight": "output.weight",
}


def _gguf_name(hf_name: str) -> str:
    """Qwen3's GGUF layer names are the mainline DFlash drafter's (``blk.N.ffn_norm`` included)."""
    return _GGUF_GLOBAL.get(hf_name) or gguf_name(hf_name.removeprefix("model."), "mainline")


def _vocab(folder: Path, vocab_size: int) -> tuple[list[str], list[int]]:
    """Tokens and token types as ``get_vocab_base`` lists them: added special tokens are CONTROL,
    ids the tokenizer lacks up to vocab_size are ``[PAD{i}]`` UNUSED."""
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    reverse = {i: t for t, i in tokenizer.get_vocab(with_added_tokens=True).items()}
    added = tokenizer.get_added_tokens_decoder()
    tokens: list[str] = []
    types: list[int] = []
    for i in range(vocab_size):
        if i not in reverse:
            tokens.append(f"[PAD{i}]")
            types.append(gguf.TokenType.UNUSED)
        else:
            tokens.append(reverse[i])
            types.append(gguf.TokenType.CONTROL if i in added and added[i].special else gguf.TokenType.NORMAL)
    return tokens, types


def write_target_gguf_from(folder: Path, out: Path, *, outtype: TargetOutType = "f16") -> Path:
    """The GGUF ``convert_hf_to_gguf.py FOLDER --outtype OUTTYPE`` writes for this Qwen3 (same keys,
    names, shapes and types; ``tokenizer.ggml.pre`` is ``qwen2``, what the converter detects for Qwen3)."""
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    ftype = gguf.LlamaFileType.ALL_F32 if outtype == "f32" else gguf.LlamaFileType.MOSTLY_F16
    writer = gguf.GGUFWriter(str(out), "qwen3")
    writer.add_type(gguf.GGUFType.MODEL)
    writer.add_name("Tiny Qwen3 (hubrelease example)")
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_head_count_kv(config["num_key_value_heads"])
    writer.add_rope_freq_base(config["rope_theta"])
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_key_length(config["head_dim"])
    writer.add_value_length(config["head_dim"])
    writer.add_file_type(ftype)
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    tokens, types = _vocab(folder, config["vocab_size"])
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    gguf.SpecialVocab(folder, load_merges=True).add_to_gguf(writer)
    for name, data in load_file(str(folder / "model.safetensors")).items():
        # The converter's rule: 1-D tensors (the norms) stay F32, the rest take the outtype.
        if outtype == "f16" and data.ndim > 1:
            writer.add_tensor(_gguf_name(name), data.astype(np.float16))
        else:
            writer.add_tensor(_gguf_name(name), data.astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out
