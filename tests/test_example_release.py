"""The committed example release is reproducible and publishable: the README's main job, as a test."""

from __future__ import annotations

import shutil
from pathlib import Path

from typer.testing import CliRunner

from hubrelease.cli.app import app
from hubrelease.fsutil import STATE_DIR
from hubrelease.hub.server import LoopbackHub

runner = CliRunner()
BUILT = ("model.safetensors", "config.json", "tiny-dflash2-q8_0.gguf", "evaluation.json")


def run(*args: str) -> str:
    result = runner.invoke(app, list(args))
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
        str(tmp_path / "example-target" / "tiny-target-f32.gguf"),
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
    assert "OK (local): 8 files" in run("verify", str(manifest))

    endpoint = loopback_hub.url
    run("push", str(tmp_path / "example-target" / "hubrelease.yaml"), "--endpoint", endpoint)
    assert "revision main -> " in run("lock", str(manifest), "--endpoint", endpoint)
    run("render-card", str(manifest))
    assert "pushed " in run("push", str(manifest), "--endpoint", endpoint)
    assert "OK (remote" in run("verify", str(manifest), "--remote", "--endpoint", endpoint)
    assert "nothing to push" in run("push", str(manifest), "--endpoint", endpoint)
