"""Regenerate the committed example release from the test factories (run from the repository root).

    python scripts/make_example.py

manifests/example-target/: a random tiny Qwen3 (HF folder + its GGUF) and a manifest from `hubrelease init`.
manifests/example/: the DFlash2 training checkpoint, then the drafter built from it exactly as
scripts/demo.sh builds it (`--manifest` re-pins every output), its evaluation JSON and its card.
Every step is seeded and the builders are byte-deterministic, so a re-run changes no byte.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.factories.drafters import write_training_checkpoint  # noqa: E402
from tests.factories.targets import write_target_gguf_from, write_target_model  # noqa: E402

TARGET_GGUF = "tiny-qwen3-f16.gguf"
DRAFTER_GGUF = "tiny-dflash2-q8_0.gguf"


def hubrelease(*args: str, cwd: Path) -> None:
    print("$ hubrelease", " ".join(args), flush=True)
    subprocess.run([str(Path(sys.executable).parent / "hubrelease"), *args], cwd=cwd, check=True)


def make_target(folder: Path) -> None:
    for stale in folder.glob("*.gguf"):
        stale.unlink()
    write_target_model(folder)
    write_target_gguf_from(folder, folder / TARGET_GGUF, outtype="f16")
    hubrelease(
        "init", str(folder.relative_to(ROOT)), "--repo-id", "hubrelease-example/tiny-target",
        "--license", "apache-2.0", "--recommended", TARGET_GGUF, "--force", "-j", "1", cwd=ROOT,
    )  # fmt: skip


def make_drafter(folder: Path) -> None:
    shutil.rmtree(folder / "checkpoint", ignore_errors=True)
    write_training_checkpoint(folder / "checkpoint")
    hubrelease("build", "safetensors-drafter", "checkpoint", "--out", ".", "--manifest", "hubrelease.yaml",
               cwd=folder)  # fmt: skip
    hubrelease(
        "build", "gguf-drafter", ".", "--flavor", "mainline", "--outtype", "q8_0",
        "--tokenizer-from", f"../example-target/{TARGET_GGUF}", "--out", DRAFTER_GGUF,
        "--manifest", "hubrelease.yaml", cwd=folder,
    )  # fmt: skip
    hubrelease(
        "build", "eval", "autoregressive=bench/autoregressive.jsonl", "dflash2=bench/dflash2.jsonl",
        "--spec", "bench/eval-spec.yaml", "--prompts", "bench/prompts.jsonl", "--out", "evaluation.json",
        "--manifest", "hubrelease.yaml", cwd=folder,
    )  # fmt: skip
    hubrelease("lint", DRAFTER_GGUF, "--config", "config.json", cwd=folder)
    hubrelease("render-card", "hubrelease.yaml", cwd=folder)


def main() -> None:
    make_target(ROOT / "manifests" / "example-target")
    make_drafter(ROOT / "manifests" / "example")


if __name__ == "__main__":
    main()
