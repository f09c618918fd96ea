"""The conformance tier's ``pull`` step without the engines: what pull fetched per engine (z-lab's DFlash
release included), and the control."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.hub_steps import published_example
from conformance.pull_steps import run_pull

ROOT = Path(__file__).resolve().parent.parent.parent


def test_pull_fetches_what_each_engine_loads_and_refuses_a_wrong_target_before_weights(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("SGLANG_PYTHON", "SPECULATORS_PYTHON", "LLAMA_SERVER", "IK_LLAMA_SERVER", "ZLAB_DFLASH_SRC"):
        monkeypatch.delenv(var, raising=False)
    target = ROOT / "manifests" / "example-target"
    with published_example(tmp_path) as published:
        found = run_pull(published, tmp_path, target, target / "tiny-qwen3-f16.gguf")
    rows = {r.consumer: r for r in found if r.variant in ("example", "example-spec", "wrong target")}
    sglang, llama = rows["pull -> sglang"], rows["pull -> llama.cpp"]
    assert sglang.status == "not run" and llama.status == "not run"
    assert sglang.detail.startswith("pulled model.safetensors, config.json at ")
    assert "(1 weight file(s) resolved)" in sglang.detail and sglang.detail.endswith(
        "loader: set SGLANG_PYTHON"
    )
    assert llama.detail.startswith("pulled tiny-dflash2-q8_0.gguf at ")
    assert sorted(p.name for p in (tmp_path / "pulled" / "example" / "llama.cpp").iterdir()) == [
        "tiny-dflash2-q8_0.gguf"
    ]
    vllm = rows["pull -> vllm"]
    assert vllm.status == "not run" and vllm.variant == "example-spec"
    assert vllm.detail.startswith("pulled config.json, model.safetensors at ")
    assert "(1 weight file(s) resolved)" in vllm.detail
    assert rows["pull -> ik"].status == "n/a"
    control = rows["pull (control)"]
    assert control.status == "pass", control.detail
    assert "0 weight requests" in control.detail and "does not pair with this release" in control.detail
    assert not (tmp_path / "pull-wrong-target" / "pulled-refused").exists()
    assert rows["pull -> z-lab"].status == "n/a" and "DFlashDraftModel only" in rows["pull -> z-lab"].detail
    zlab = next(r for r in found if r.consumer == "pull -> z-lab" and r.variant == "dflash")
    assert zlab.status == "not run", zlab.detail
    assert zlab.detail.startswith("pulled ") and "(1 weight file(s) resolved)" in zlab.detail
    assert "pairing ok" in zlab.detail and zlab.detail.endswith("loader: set ZLAB_DFLASH_SRC")
    pulled = tmp_path / "pulled" / "dflash" / "z-lab"
    assert sorted(p.name for p in pulled.iterdir()) == [
        "config.json",
        "model.safetensors",
    ]
    config = json.loads((pulled / "config.json").read_text(encoding="utf-8"))
    assert config["architectures"] == ["DFlashDraftModel"]
