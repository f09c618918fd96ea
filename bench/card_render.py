"""Card rendering speed: hubrelease render_card vs huggingface_hub ModelCard.from_template (same run).

The peer renders hf's default model card template from the same front matter with no tables and
recompiles it on every call; we cache the compiled templates per process, so the cold first call
is reported separately.
Run: python bench/card_render.py [MANIFEST] [--repeat N]
"""

from __future__ import annotations

import argparse
import platform
import time
from pathlib import Path

from huggingface_hub import ModelCard, ModelCardData

from hubrelease.card import render_card
from hubrelease.manifest import load_manifest

ROOT = Path(__file__).resolve().parents[1]


def _best(fn: object, repeat: int) -> float:
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        timings.append(time.perf_counter() - start)
    return min(timings)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "manifest", nargs="?", default=str(ROOT / "manifests/ornith-1.0-dflash-gguf/hubrelease.yaml")
    )
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    release = load_manifest(args.manifest).release
    data = ModelCardData(license=release.license, base_model=release.base_model, tags=release.tags)

    start = time.perf_counter()
    render_card(args.manifest)  # cold: compiles the templates once per process
    cold = time.perf_counter() - start
    ours = _best(lambda: render_card(args.manifest), args.repeat)
    peer = _best(lambda: ModelCard.from_template(data, model_id=release.repo_id), args.repeat)
    size = len(render_card(args.manifest).encode())
    print(f"python {platform.python_version()}, {args.manifest}, best of {args.repeat}")
    print(f"hubrelease render_card, cold  {cold * 1000:8.2f} ms  (first call: template compile)")
    print(f"hubrelease render_card        {ours * 1000:8.2f} ms  ({size} bytes)")
    print(f"huggingface_hub from_template {peer * 1000:8.2f} ms")
    print(f"ratio ours/peer               {ours / peer:8.2f}x")


if __name__ == "__main__":
    main()
