"""GGUF drafter conversion: peak RSS (VmHWM) against model size, and Q8_0 throughput against gguf.quants.

Peak RSS is measured in a child process per conversion (``VmHWM``) and compared with a child that only
imports hubrelease, so the difference is what the conversion itself holds. The streaming design should
keep it near one tensor (plus its quantized copy), whatever the model size.

    python bench/convert_bench.py [--layers 2 8] [--hidden 1024] [--elements 16777216]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
from gguf import GGMLQuantizationType  # noqa: E402
from gguf.quants import quantize  # noqa: E402

from hubrelease.builders.gguf_drafter import quantize_rows  # noqa: E402
from tests.factories.drafters import drafter_config, write_checkpoint  # noqa: E402

# VmHWM, not ru_maxrss: Linux carries ru_maxrss across fork+exec, so a child would report the parent's peak.
_CHILD = """
import sys
from pathlib import Path
from hubrelease.builders.gguf_drafter import build_gguf_drafter
if sys.argv[1] != "-":
    build_gguf_drafter(Path(sys.argv[1]), Path(sys.argv[2]), flavor="mainline", outtype="q8_0")
status = Path("/proc/self/status").read_text()
print(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
"""


def _child_rss(source: str, out: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, source, out], check=True, capture_output=True, text=True, cwd=ROOT
    )
    return int(done.stdout.split()[-1]) * 1024


def _rss(args: argparse.Namespace) -> None:
    baseline = _child_rss("-", "-")
    print(f"baseline child (imports only): {baseline / 2**20:.0f} MiB")
    print(f"{'layers':>6} {'model f32':>10} {'largest':>9} {'peak RSS':>9} {'- baseline':>10} {'seconds':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for layers in args.layers:
            config = drafter_config(layers=layers, swa=False)
            config |= {"hidden_size": args.hidden, "intermediate_size": 4 * args.hidden, "head_dim": 128,
                       "num_attention_heads": args.hidden // 128, "num_key_value_heads": 2}  # fmt: skip
            source = write_checkpoint(Path(tmp) / f"ck{layers}", config=config, rotary=False)
            size = sum(p.stat().st_size for p in source.glob("*.safetensors"))
            largest = 4 * args.hidden * 4 * args.hidden
            start = time.perf_counter()
            peak = _child_rss(str(source), str(Path(tmp) / f"d{layers}.gguf"))
            seconds = time.perf_counter() - start
            print(f"{layers:>6} {size / 2**20:>8.0f}Mi {largest / 2**20:>7.0f}Mi {peak / 2**20:>7.0f}Mi "
                  f"{(peak - baseline) / 2**20:>8.0f}Mi {seconds:>8.2f}")  # fmt: skip


def _throughput(args: argparse.Namespace) -> None:
    data = np.random.default_rng(0).standard_normal((args.elements // 4096, 4096), dtype=np.float32)
    jobs = os.cpu_count() or 1

    def best(fn: object) -> float:
        times = []
        for _ in range(3):
            start = time.perf_counter()
            fn()  # type: ignore[operator]
            times.append(time.perf_counter() - start)
        return min(times)

    single = best(lambda: quantize(data, GGMLQuantizationType.Q8_0))
    melem = data.size / 1e6
    print(f"\nQ8_0 on {data.size} floats, load average {os.getloadavg()[0]:.1f}:")
    print(f"  gguf.quants, one call, 1 thread   {melem / single:6.0f} Melem/s")
    for threads in sorted({1, jobs}):
        with ThreadPoolExecutor(threads) as pool:
            ours = best(lambda pool=pool: quantize_rows(data, GGMLQuantizationType.Q8_0, pool))
        print(
            f"  hubrelease, chunked, {threads} thread(s)  {melem / ours:6.0f} Melem/s  ratio {single / ours:.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--layers", type=int, nargs="+", default=[2, 8])
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--elements", type=int, default=16 * 2**20)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cpus")
    _rss(args)
    _throughput(args)


if __name__ == "__main__":
    main()
