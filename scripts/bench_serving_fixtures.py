"""Regenerate tests/evaluation/fixtures/bench_serving/: real SGLang bench_serving output against a loopback stub.

bench_serving runs in its own venv (it needs sglang, torch and transformers; the test suite does not):

    python -m venv ../venvs/sglang-bench
    ../venvs/sglang-bench/bin/pip install --no-deps sglang==0.5.23
    ../venvs/sglang-bench/bin/pip install aiohttp numpy requests tqdm msgspec orjson transformers \\
        psutil pybase64 pillow starlette pyzmq ipython datasets torch==2.13.0 && \\
        ../venvs/sglang-bench/bin/pip install --no-deps triton
    SGLANG_BENCH_PYTHON=../venvs/sglang-bench/bin/python .venv/bin/python scripts/bench_serving_fixtures.py

The stub (tests/factories/sglang_server.py) serves two configurations, autoregressive and a DFlash
speculative server, each measured by the ``sglang-oai``, ``sglang-oai-chat`` and ``sglang`` backends at --max-concurrency
1 and 4 with --flush-cache and --output-details, plus one run without --max-concurrency and one with
an injected failed request. One output file per configuration and backend, tagged with the
configuration id. bench_serving is run unmodified through ``runpy``; the only stand-in is
``sglang.srt.disaggregation.utils``, which bench_serving imports for one constant used in PD
disaggregation mode (``FAKE_BOOTSTRAP_HOST``, serving.py lines 57 and 2071) and which would
otherwise pull in SGLang's model configs and a CUDA build of torchvision.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.factories.sglang_server import StubConfig, start_stub  # noqa: E402
from tests.factories.targets import write_target_model  # noqa: E402

OUT = ROOT / "tests" / "evaluation" / "fixtures" / "bench_serving"
PROMPTS = 16
OUTPUT_LEN = 32
SHIM = """
import runpy, sys, types
stand_in = types.ModuleType("sglang.srt.disaggregation.utils")
stand_in.FAKE_BOOTSTRAP_HOST = "2.2.2.2"
sys.modules[stand_in.__name__] = stand_in
sys.argv = ["sglang.benchmark.serving", *sys.argv[1:]]
runpy.run_module("sglang.benchmark.serving", run_name="__main__")
"""
CONFIGURATIONS = {
    "autoregressive": StubConfig(),
    "dflash": StubConfig(
        speculative_algorithm="DFLASH",
        draft_model_path="acme/drafter",
        num_draft_tokens=10,
        tokens_per_step=(3, 5, 4, 2, 6),
        step_s=0.006,
    ),
}


def _dataset(path: Path) -> Path:
    """A custom bench_serving dataset: conversations with a user and an assistant turn."""
    topics = ["sort a list", "parse a date", "join two tables", "reverse a string", "write a test"]
    lines = [
        json.dumps(
            {
                "conversations": [
                    {
                        "role": "user",
                        "content": f"Please explain how to {topics[i % 5]} in step {i} of the tutorial.",
                    },
                    {"role": "assistant", "content": "Here is how it is done. " * 4},
                ]
            }
        )
        for i in range(PROMPTS * 2)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _bench(python: str, url: str, tokenizer: Path, dataset: Path, out: Path, *extra: str) -> None:
    args = [
        python, "-c", SHIM,
        "--base-url", url, "--model", "acme/target", "--tokenizer", str(tokenizer),
        "--dataset-name", "custom", "--dataset-path", str(dataset),
        "--num-prompts", str(PROMPTS), "--sharegpt-output-len", str(OUTPUT_LEN),
        "--warmup-requests", "1", "--output-file", str(out), "--output-details", "--disable-tqdm",
        *extra,
    ]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    subprocess.run(args, check=True, env=env, stdout=subprocess.DEVNULL)


def main() -> None:
    python = os.environ.get("SGLANG_BENCH_PYTHON", str(Path("../venvs/sglang-bench/bin/python").resolve()))
    version = subprocess.run(
        [python, "-c", "import importlib.metadata as m; print(m.version('sglang'))"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    OUT.mkdir(parents=True, exist_ok=True)
    for stale in OUT.glob("*.jsonl"):
        stale.unlink()
    with tempfile.TemporaryDirectory() as scratch:
        folder = write_target_model(Path(scratch) / "target")
        dataset = _dataset(Path(scratch) / "prompts.jsonl")
        for name, config in CONFIGURATIONS.items():
            server, url = start_stub(config)
            try:
                for backend in ("sglang-oai", "sglang-oai-chat", "sglang"):
                    out = OUT / f"{name}-{backend}.jsonl"
                    for concurrency in (1, 4):
                        _bench(python, url, folder, dataset, out, "--backend", backend, "--tag", name,
                               "--max-concurrency", str(concurrency), "--flush-cache")  # fmt: skip
            finally:
                server.shutdown()
        # Edge cases: no --max-concurrency (null in the file), and a request the server fails.
        edges = {
            "edge-unset-concurrency": (StubConfig(), ()),
            # Request 3 counting the warmup request: the second measured one.
            "edge-failed-request": (StubConfig(fail_requests=(3,)), ("--max-concurrency", "2")),
        }
        for name, (config, extra) in edges.items():
            server, url = start_stub(config)
            try:
                _bench(python, url, folder, dataset, OUT / f"{name}.jsonl", "--backend", "sglang-oai",
                       "--tag", "autoregressive", *extra)  # fmt: skip
            finally:
                server.shutdown()
    (OUT / "SGLANG_VERSION").write_text(f"{version}\n", encoding="utf-8")
    print(f"wrote {len(list(OUT.glob('*.jsonl')))} files to {OUT.relative_to(ROOT)} with sglang {version}")


if __name__ == "__main__":
    main()
