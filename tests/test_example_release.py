"""The committed example release is reproducible and publishable: the README's main job, as a test."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tokenizers import Tokenizer

from hubrelease.formats.dflash import load_config
from hubrelease.formats.gguf_header import array_length, read_gguf
from hubrelease.formats.safetensors_header import read_safetensors
from hubrelease.fsutil import STATE_DIR
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import invoke
from tests.factories.targets import MASK_TOKEN_ID, write_target_gguf_from, write_target_model

BUILT = ("model.safetensors", "config.json", "tiny-dflash2-q8_0.gguf", "evaluation.json")


def run(*args: str) -> str:
    result = invoke(list(args))
    assert result.exit_code == 0, (args, result.stdout, result.stderr)
    return result.stdout + result.stderr


def test_example_rebuilds_byte_for_byte_and_publishes(
    repo_root: Path, tmp_path: Path, loopback_hub: LoopbackHub, monkeypatch: object
) -> None:
    ignore = shutil.ignore_patterns(STATE_DIR)
    shutil.copytree(repo_root / "manifests" / "example", tmp_path / "example", ignore=ignore)
    shutil.copytree(repo_root / "manifests" / "example-target", tmp_path / "example-target", ignore=ignore)
    release = tmp_path / "example"
    manifest = release / "hubrelease.yaml"
    committed = {name: (release / name).read_bytes() for name in (*BUILT, "hubrelease.yaml", "README.md")}
    for name in BUILT:
        (release / name).unlink()

    run(
        "build",
        "safetensors-drafter",
        str(release / "checkpoint"),
        "--out",
        str(release),
        "--manifest",
        str(manifest),
    )
    gguf = release / "tiny-dflash2-q8_0.gguf"
    run(
        "build",
        "gguf-drafter",
        str(release),
        "--flavor",
        "mainline",
        "--outtype",
        "q8_0",
        "--tokenizer-from",
        str(tmp_path / "example-target" / "tiny-qwen3-f16.gguf"),
        "--out",
        str(gguf),
        "--manifest",
        str(manifest),
    )
    bench = release / "bench"
    run(
        "build",
        "eval",
        f"autoregressive={bench / 'autoregressive.jsonl'}",
        f"dflash2={bench / 'dflash2.jsonl'}",
        "--spec",
        str(bench / "eval-spec.yaml"),
        "--prompts",
        str(bench / "prompts.jsonl"),
        "--out",
        str(release / "evaluation.json"),
    )
    for name, data in committed.items():
        assert (release / name).read_bytes() == data, f"{name} is not reproduced byte for byte"
    run("render-card", str(manifest), "--check")
    assert "OK (local): 10 files: hubrelease.yaml and the 9 it pins, " in run("verify", str(manifest))

    endpoint = loopback_hub.url
    run("push", str(tmp_path / "example-target" / "hubrelease.yaml"), "--endpoint", endpoint)
    assert "kept as it is (unpinned: true)" in run("lock", str(manifest), "--endpoint", endpoint)
    target = "hubrelease-example/tiny-target"
    assert "revision main -> " in run("lock", str(manifest), "--endpoint", endpoint, "--pin", target)
    assert "lock --pin" not in manifest.read_text(encoding="utf-8")  # the comment above the pin went with it
    run("render-card", str(manifest))
    assert "pushed " in run("push", str(manifest), "--endpoint", endpoint)
    assert "OK (remote" in run("verify", str(manifest), "--remote", "--endpoint", endpoint)
    assert "nothing to push" in run("push", str(manifest), "--endpoint", endpoint)


def test_example_target_is_the_factories_qwen3_and_fits_the_drafter(repo_root: Path, tmp_path: Path) -> None:
    """manifests/example-target is what tests/factories/targets.py writes (scripts/make_example.py), a
    complete Qwen3 (weights, tokenizer, GGUF with tokenizer keys), and the drafter's shapes fit it."""
    committed = repo_root / "manifests" / "example-target"
    fresh = write_target_model(tmp_path / "target")
    write_target_gguf_from(fresh, fresh / "tiny-qwen3-f16.gguf")
    for name in (
        "config.json",
        "model.safetensors",
        "tokenizer.json",
        "tokenizer_config.json",
        "tiny-qwen3-f16.gguf",
    ):
        assert (fresh / name).read_bytes() == (committed / name).read_bytes(), f"{name} is not reproduced"

    config = json.loads((committed / "config.json").read_text())
    assert config["architectures"] == ["Qwen3ForCausalLM"]
    tokenizer = Tokenizer.from_file(str(committed / "tokenizer.json"))
    text = "Speculative decoding, 我想 🚀"
    assert tokenizer.decode(tokenizer.encode(text).ids) == text
    assert tokenizer.token_to_id("<|MASK|>") == MASK_TOKEN_ID
    weights = {t.name: t for t in read_safetensors(committed / "model.safetensors").tensors}
    assert weights["model.embed_tokens.weight"].shape == (config["vocab_size"], config["hidden_size"])

    target = read_gguf(committed / "tiny-qwen3-f16.gguf")
    assert target.architecture == "qwen3" and target.value("tokenizer.ggml.model") == "gpt2"
    assert array_length(target.value("tokenizer.ggml.tokens")) == config["vocab_size"]
    assert target.value("qwen3.block_count") == config["num_hidden_layers"]

    drafter = load_config(repo_root / "manifests" / "example" / "config.json")
    fc = {t.name: t for t in read_safetensors(repo_root / "manifests" / "example").tensors}["fc.weight"]
    assert fc.shape == (config["hidden_size"], len(drafter.target_layer_ids) * config["hidden_size"])
    assert max(drafter.target_layer_ids) < config["num_hidden_layers"] - 1
    assert drafter.vocab_size == config["vocab_size"]
