"""Raw benchmark output as the engines write it: SGLang bench_serving JSONL and llama-server per-request rows.

Values are deterministic functions of their arguments, so tests can state the expected numbers.
"""

from __future__ import annotations

import csv
import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hubrelease.evaluation.ingest.interface import ServingOptions, ServingRun
from hubrelease.evaluation.ingest.serving import serving_cells
from hubrelease.evaluation.ingest.sglang import BenchServing
from hubrelease.evaluation.models import Cell, Configuration, Run
from hubrelease.evaluation.records import Record

PROMPTS = [f"p{i}" for i in range(1, 5)]
LLAMA_FIELDS = [
    "prompt_id",
    "arm",
    "boot",
    "repetition",
    "n_max",
    "predicted_n",
    "predicted_ms",
    "draft_n",
    "draft_n_accepted",
]


def sglang_line(
    *,
    max_concurrency: int | None = 1,
    output_lens: Sequence[int] = (101, 201, 301),
    ttfts: Sequence[float] = (0.1, 0.2, 0.3),
    decode_s: Sequence[float] = (1.0, 2.5, 2.0),
    duration: float = 10.0,
    tag: str | None = None,
    accept_length: float | None = None,
    details: bool = True,
    server_info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One bench_serving result line with its summary figures computed as bench_serving does.

    Request i's latency is ``ttfts[i] + decode_s[i]`` (stamped at ``[DONE]``); its streamed chunks
    cover only 90% of ``decode_s[i]`` (4 equal ITLs), so the sum of ITLs is not latency - ttft.
    With ``details`` the line carries --output-details' per-request arrays.
    """
    tpots = [d / (n - 1) for n, d in zip(output_lens, decode_s, strict=True) if n > 1]
    itls = [[0.9 * d / 4] * 4 for d in decode_s]
    latencies = [t + d for t, d in zip(ttfts, decode_s, strict=True)]
    line: dict[str, Any] = {
        "tag": tag,
        "backend": "sglang-oai",
        "dataset_name": "custom",
        "request_rate": float("inf"),
        "max_concurrency": max_concurrency,
        "server_info": server_info,
        "duration": duration,
        "completed": len(output_lens),
        "total_input_tokens": 1000,
        "total_output_tokens": sum(output_lens),
        "output_throughput": sum(output_lens) / duration if duration else 0.0,
        "concurrency": 0.9,
        "accept_length": accept_length,
    }
    for metric, values in (
        ("ttft", ttfts),
        ("tpot", tpots),
        ("itl", [gap for chunks in itls for gap in chunks]),
        ("e2e_latency", latencies),
    ):
        ms = sorted(1000 * v for v in values) or [0.0]
        line[f"mean_{metric}_ms"] = statistics.fmean(ms)
        line[f"median_{metric}_ms"] = statistics.median(ms)
        line[f"p99_{metric}_ms"] = ms[-1]
    if details:
        line.update(
            input_lens=[100] * len(output_lens),
            output_lens=list(output_lens),
            ttfts=list(ttfts),
            itls=itls,
            generated_texts=[""] * len(output_lens),
            errors=[""] * len(output_lens),
        )
    return line


def sglang_server_info(
    *,
    algorithm: str | None = None,
    draft: str | None = None,
    model: str = "acme/target",
    draft_tokens: int = 10,
) -> dict[str, Any]:
    """The parts of SGLang's ``/server_info`` (resolved ServerArgs) that identify a configuration."""
    return {
        "model_path": model,
        "speculative_algorithm": algorithm,
        "speculative_draft_model_path": draft,
        "speculative_num_draft_tokens": draft_tokens if algorithm else None,
        "internal_states": [{"avg_spec_accept_length": 4.0 if algorithm else None}],
        "version": "0.5.23",
    }


def write_jsonl(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    """One JSON object per line, as both bench_serving and bench.py append them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def llama_rows(
    *,
    arms: dict[str, Sequence[int]],
    n_max_values: Sequence[int] = (0, 3),
    prompts: Sequence[str] = PROMPTS,
    repetitions: int = 2,
    gain: dict[str, float] | None = None,
) -> list[dict[str, Any]]:
    """llama-server rows for every arm x boot x n_max x prompt x repetition.

    ``arms`` maps an arm id to its boot indices. Speed is ``20 + prompt index + 0.1 * boot +
    0.01 * repetition`` tok/s, times ``1 + gain[arm] * n_max`` when speculating. With n_max > 0,
    ``n_max - 1`` of every ``n_max`` drafted tokens are accepted.
    """
    rows = []
    for arm, boots in arms.items():
        for boot in boots:
            for n_max in n_max_values:
                for index, prompt in enumerate(prompts):
                    for repetition in range(1, repetitions + 1):
                        speed = 20 + index + 0.1 * boot + 0.01 * repetition
                        speed *= 1 + (gain or {}).get(arm, 0.1) * n_max
                        predicted_n = 256
                        rounds = 256 // max(n_max, 1)
                        accepted = predicted_n - rounds if n_max else 0
                        row: dict[str, Any] = {
                            "prompt_id": prompt,
                            "arm": arm,
                            "boot": boot,
                            "repetition": repetition,
                            "n_max": n_max,
                            "predicted_n": predicted_n,
                            "predicted_ms": round(1000 * predicted_n / speed, 6),
                            "draft_n": rounds * n_max if n_max else "",
                            "draft_n_accepted": accepted if n_max else "",
                        }
                        rows.append(row)
    return rows


def write_csv(path: Path, rows: Sequence[dict[str, Any]], fields: Sequence[str] = LLAMA_FIELDS) -> Path:
    """Rows as CSV with a header, as bench.py writes them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(fields), extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def ab_rows() -> list[dict[str, Any]]:
    """The llama-server A/B the tests share: arm A (seeds 1, 4) against B (2, 3) at n_max 0 and 3."""
    return llama_rows(arms={"A": [1, 4], "B": [2, 3]}, n_max_values=(0, 3))


def ab_eval_args(source: str | Path, out: str | Path) -> list[str]:
    """``build eval`` of ``ab_rows()`` written to ``source``: B against A, n_max=3 primary."""
    return [
        "build", "eval", str(source), "--hardware", "GPU", "--target", "acme/t",
        "--baseline", "A", "--treatment", "B", "--primary", "n_max=3", "--out", str(out),
    ]  # fmt: skip


def dflash_runs(**overrides: Any) -> list[dict[str, Any]]:
    """Two bench_serving lines of one DFLASH configuration (concurrency 1 and 4), as SGLang writes them."""
    info = sglang_server_info(algorithm="DFLASH", draft="acme/drafter")
    return [sglang_line(max_concurrency=c, tag="dflash2", server_info=info, **overrides) for c in (1, 4)]


def eval_spec(**overrides: Any) -> dict[str, Any]:
    """A minimal valid ``build eval`` spec: run metadata and two serving configurations."""
    spec: dict[str, Any] = {
        "schema_version": 1,
        "title": "Test serving evaluation",
        "run": {
            "hardware": {"id": "test-gpu", "name": "Test GPU"},
            "engine": {"name": "sglang", "commit": "710267dc4c817b38d9965346390cd56b59b54eda"},
            "target": {
                "repo_id": "acme/target",
                "revision": "0f0b1b59b879ccde1353e6ebd0fb10c204d4c544",
                "quantization": "NVFP4",
            },
            "serving": {"kv_cache_dtype": "fp8_e4m3", "draft_tokens": 10, "sampling": "greedy"},
            "prompt_set": {"name": "held-out", "total": 4, "categories": {"chat": 2, "code": 2}},
        },
        "configurations": [
            {"id": "autoregressive", "label": "Autoregressive", "method": "autoregressive"},
            # No drafter: a name alone identifies none, and releases that publish drafter files refuse one.
            {"id": "dflash2", "label": "DFlash2", "method": "dflash2"},
        ],
    }
    spec.update(overrides)
    return spec


def ab_spec_parts() -> dict[str, Any]:
    """Spec keys for an A/B between arms A and B (primary n_max 3) and a sweep of arm S with on/off pair,
    measured with llama-server (the engine whose rows they are)."""
    return {
        "run": {**eval_spec()["run"], "engine": {"name": "llama.cpp"}},
        "comparisons": [
            {
                "id": "retrain-ab",
                "title": "Retrained vs upstream",
                "baseline": "A",
                "treatment": "B",
                "arms": [{"id": "A", "label": "upstream"}, {"id": "B", "label": "retrained"}],
                "primary_setting": 3,
                "design": {"boot_order": ["A", "B", "B", "A"], "prompts": 4, "repetitions": 2},
            }
        ],
        "sweeps": [
            {
                "id": "n-max-sweep",
                "title": "Shipped file across n_max",
                "arm": "S",
                "pairs": [
                    {"id": "spec-on-off", "title": "Speculation on vs off", "baseline": 0, "treatment": 3}
                ],
            }
        ],
    }


def write_spec(path: Path, spec: dict[str, Any]) -> Path:
    """The spec as JSON (which the YAML loader also reads)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(spec, indent=2) + "\n", encoding="utf-8")
    return path


# Seed 001's published layout (bench/results-*-20260809.csv): "each [row] carrying run_id, boot_index, arm,
# drafter filename, drafter sha and server binary sha" plus llama-server's timings.
SEED_001_FIELDS = [
    "run_id",
    "boot_index",
    "arm",
    "drafter",
    "drafter_sha16",
    "server_sha16",
    "prompt_id",
    "rep",
    "n_max",
    "predicted_n",
    "predicted_ms",
    "draft_n",
    "draft_n_accepted",
]
SEED_001_SERVER_SHA16 = "7b7ff16cd5726490"
SEED_001_DRAFTERS = {
    "A": ("bench/Ornith-DFLASH-rt-f16-rope1e7.gguf", "7b9f2654dfc07c0a"),
    "B": ("Ornith-DFLASH-m1-f16.gguf", "186b73dce2046b07"),
    "m1-q4": ("Ornith-DFLASH-m1-q4.gguf", "c2d623da10ee1008"),
}
# Published A/B rows: n_max -> (arm A mean, mean paired difference, sd of the differences).
SEED_001_AB = {
    0: (18.0254, 0.039, 0.072),
    2: (20.75, 0.714, 0.892),
    3: (21.6296, 1.315, 1.142),
    4: (21.26, 1.686, 1.549),
}
# Published sweep: n_max -> (mean tok/s, sd, output tokens per round or None with speculation off).
SEED_001_SWEEP = {
    0: (18.71, 0.23, None),
    1: (21.26, 0.46, 1.87),
    2: (24.62, 1.23, 2.56),
    3: (25.65, 1.61, 3.06),
    4: (25.23, 2.40, 3.39),
    6: (24.24, 2.63, 3.96),
    8: (21.04, 3.49, 4.42),
    12: (19.83, 3.79, 4.82),
    15: (18.72, 3.50, 4.89),
}


def _standardized(values: Sequence[float]) -> list[float]:
    """``values`` shifted and scaled to mean 0 and sample sd 1."""
    mean, sd = statistics.fmean(values), statistics.stdev(values)
    return [(v - mean) / sd for v in values]


def _seed_001_row(
    run_id: int, boot: int, arm: str, prompt: int, rep: int, n_max: int, tok_s: float, per_round: float | None
) -> dict[str, Any]:
    drafter, sha16 = SEED_001_DRAFTERS[arm]
    rounds = round(256 / per_round) if per_round else 256
    return {
        "run_id": run_id,
        "boot_index": boot,
        "arm": arm,
        "drafter": drafter,
        "drafter_sha16": sha16,
        "server_sha16": SEED_001_SERVER_SHA16,
        "prompt_id": f"p{prompt}",
        "rep": rep,
        "n_max": n_max,
        "predicted_n": 256,
        "predicted_ms": round(256_000 / tok_s, 6),
        "draft_n": rounds * n_max if n_max else "",
        "draft_n_accepted": 256 - rounds if n_max else "",
    }


def seed_001_ab_rows() -> list[dict[str, Any]]:
    """256 rows in seed 001's layout whose paired analysis gives the card's A/B table.

    Boots A, B, B, A; 8 prompts x 2 repetitions x n_max 0, 2, 3, 4. Per prompt the B - A differences
    have exactly the published mean and sd; boot offsets give the published between-boot spread
    (A: -0.093, B: +0.403) and repetitions differ by +-0.02, both cancelling in the prompt means.
    """
    spread = [-0.9, -0.6, -0.3, 0.0, 0.2, 0.4, 0.5, 0.7]
    shape = _standardized([1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1.5, -1.5])
    boot_offset = {1: 0.0465, 4: -0.0465, 2: -0.2015, 3: 0.2015}
    per_round = {2: 2.4, 3: 2.9, 4: 3.2}
    rows, run_id = [], 0
    for boot, arm in zip((1, 2, 3, 4), "ABBA", strict=True):
        for n_max, (mean_a, diff, sd) in SEED_001_AB.items():
            for prompt in range(8):
                for rep in (1, 2):
                    run_id += 1
                    tok_s = mean_a + spread[prompt] - statistics.fmean(spread) + boot_offset[boot]
                    tok_s += (diff + sd * shape[prompt] if arm == "B" else 0.0) + (
                        0.02 if rep == 1 else -0.02
                    )
                    rows.append(
                        _seed_001_row(run_id, boot, arm, prompt + 1, rep, n_max, tok_s, per_round.get(n_max))
                    )
    return rows


def seed_001_sweep_rows() -> list[dict[str, Any]]:
    """144 rows in seed 001's layout (one boot, 8 prompts x 2 repetitions x 9 n_max values) with the
    published per-setting mean, sd and output tokens per round."""
    shape = _standardized([float(i % 5) + 0.3 * (i // 5) for i in range(16)])
    rows: list[dict[str, Any]] = []
    for n_max, (mean, sd, per_round) in SEED_001_SWEEP.items():
        for index in range(16):
            prompt, rep = index // 2 + 1, index % 2 + 1
            rows.append(
                _seed_001_row(
                    len(rows) + 1, 1, "m1-q4", prompt, rep, n_max, mean + sd * shape[index], per_round
                )
            )
    return rows


def read_sglang(
    record: Record, configuration: str = "x", options: ServingOptions = ServingOptions()
) -> ServingRun:
    """One bench_serving line read by its source, as build eval reads it."""
    return BenchServing().read(record, configuration, options)


def sglang_matrix(
    runs: Sequence[tuple[str | None, Record]],
    configurations: Sequence[Configuration],
    run: Run | None = None,
    options: ServingOptions = ServingOptions(),
) -> tuple[list[Cell], list[str]]:
    """bench_serving lines (CONFIG= name or None, record) assembled into the matrix, as build eval does."""
    return serving_cells(
        [(BenchServing(), name, record) for name, record in runs], configurations, run, options
    )


def vllm_result(
    *,
    model_id: str = "acme/target",
    max_concurrency: int | None = 4,
    output_lens: Sequence[int] = (101, 201, 301, 0),
    ttfts: Sequence[float] = (0.1, 0.2, 0.3, 0.0),
    decode_s: Sequence[float] = (1.0, 2.5, 2.0, 0.0),
    errors: Sequence[str] = ("", "", "", "Bad Gateway"),
    duration: float = 10.0,
    spec_decode: tuple[int, int, int] | None = (200, 1000, 560),
    save_detailed: bool = False,
    label: str | None = None,
) -> dict[str, Any]:
    """One ``vllm bench serve --save-result`` file as vLLM 0.33.0 writes it (vllm/benchmarks/serve.py).

    Keys and formulas from that file: the run metadata of main() (lines 2305-2330), the result dict
    of benchmark() (lines 1318-1340), ``process_one_metric``'s ``{mean,median,std,p99}_*_ms`` for the
    default metrics ttft, tpot, itl (lines 1400-1430, 2255), the spec_decode_* counters' difference
    (lines 1131-1170, 1376-1385) from ``spec_decode`` = (drafts, draft tokens, accepted tokens), and
    without ``save_detailed`` the per-request arrays deleted (lines 2428-2442). A request with an
    error is failed: output_len 0, left out of every figure (calculate_metrics, lines 640-700).
    """
    ok = [i for i, error in enumerate(errors) if not error]
    tpots = [decode_s[i] / (output_lens[i] - 1) for i in ok if output_lens[i] > 1]
    itls = [[0.9 * decode_s[i] / 4] * 4 if i in ok else [] for i in range(len(errors))]
    latencies = [ttfts[i] + decode_s[i] for i in range(len(errors))]
    total_output = sum(output_lens[i] for i in ok)
    result: dict[str, Any] = {
        "date": "20260809-101500",
        "endpoint_type": "openai",
        "backend": "openai",
        "label": label,
        "model_id": model_id,
        "tokenizer_id": model_id,
        "num_prompts": len(errors),
        "request_rate": "inf",
        "burstiness": 1.0,
        "max_concurrency": max_concurrency,
        "duration": duration,
        "completed": len(ok),
        "failed": len(errors) - len(ok),
        "total_input_tokens": 100 * len(ok),
        "total_output_tokens": total_output,
        "request_throughput": len(ok) / duration,
        "request_goodput": None,
        "output_throughput": total_output / duration,
        "total_token_throughput": (total_output + 100 * len(ok)) / duration,
        "input_lens": [100] * len(errors),
        "output_lens": list(output_lens),
        "ttfts": list(ttfts),
        "itls": itls,
        "latencies": latencies,
        "start_times": [float(i) for i in range(len(errors))],
        "queue_times": [0.0] * len(errors),
        "generated_texts": ["" for _ in errors],
        "errors": list(errors),
        "max_output_tokens_per_s": 120.0,
        "max_concurrent_requests": 4,
        "rtfx": 0.0,
    }
    if spec_decode is not None:
        drafts, draft_tokens, accepted = spec_decode
        result.update(
            spec_decode_acceptance_rate=accepted / draft_tokens * 100,
            spec_decode_acceptance_length=1 + accepted / drafts,
            spec_decode_num_drafts=drafts,
            spec_decode_draft_tokens=draft_tokens,
            spec_decode_accepted_tokens=accepted,
            spec_decode_per_position_acceptance_rates=[0.9, 0.7, 0.5, 0.3, 0.2],
        )
    for metric, values in (
        ("ttft", [ttfts[i] for i in ok]),
        ("tpot", tpots),
        ("itl", [gap for i in ok for gap in itls[i]]),
    ):
        ms = [1000 * v for v in values]
        result[f"mean_{metric}_ms"] = statistics.fmean(ms)
        result[f"median_{metric}_ms"] = statistics.median(ms)
        result[f"std_{metric}_ms"] = statistics.pstdev(ms)
        result[f"p99_{metric}_ms"] = sorted(ms)[-1]
    if not save_detailed:
        for key in ("input_lens", "output_lens", "start_times", "ttfts", "itls", "generated_texts", "errors"):
            del result[key]
    return result


def write_json(path: Path, data: dict[str, Any]) -> Path:
    """One JSON object, as ``vllm bench serve --save-result`` writes it (json.dump, no newline)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def spec_bench_attempt(
    *,
    task: str,
    run: int = 1,
    category: str = "dataset",
    generated: int = 256,
    decode_s: float = 4.0,
    stage: str | None = "dflash",
    drafted_by_position: Sequence[int] = (100, 80, 60),
    accepted_by_position: Sequence[int] = (80, 60, 30),
    details: bool = False,
    ok: bool = True,
) -> dict[str, Any]:
    """One ``llama-spec-bench --output-format jsonl`` attempt line with ik_llama.cpp's own keys.

    Compact lines follow ``spec_bench_compact_attempt_json`` (examples/spec-bench/spec-bench.cpp line
    997: no category), ``details`` lines ``spec_bench_attempt_json`` (line 941) with the stage as
    ``spec_bench_stage_json`` (line 526) writes it. Drafts are the first position's count (every round
    drafts position 1); accepted tokens the sum over positions; ``stage=None`` is the baseline.
    """
    drafts = drafted_by_position[0] if drafted_by_position else 0
    drafted, accepted = sum(drafted_by_position), sum(accepted_by_position)
    tps = generated / decode_s if decode_s > 0 else 0.0
    stages: list[dict[str, Any]] = []
    if stage is not None and not details:
        stages = [
            {
                "type": stage, "drafts": drafts, "draft_tokens": drafted, "accepted": accepted,
                "accept_percent": 100.0 * accepted / drafted if drafted else 0.0,
                "accept_length": 1.0 + accepted / drafts if drafts else 0.0,
                "drafted_by_position": list(drafted_by_position),
                "accepted_by_position": list(accepted_by_position),
            }
        ]  # fmt: skip
    if not details:
        return {
            "row_type": "attempt", "task": task, "run": run, "ok": ok, "stop": "limit" if ok else "fail",
            "generated": generated, "decode_s": decode_s, "decode_tps": tps, "stages": stages,
            "error": None if ok else "decode failed",
        }  # fmt: skip
    if stage is not None:
        stages = [
            {
                "type": stage, "num_drafts": drafts, "accepted_drafts": drafts, "draft_tokens": drafted,
                "accepted_tokens": accepted, "acceptance_rate": accepted / drafted if drafted else 0.0,
                "acceptance_length": 1.0 + accepted / drafts if drafts else 0.0,
                "drafted_by_position": list(drafted_by_position),
                "accepted_by_position": list(accepted_by_position),
                "acceptance_rate_by_position": [
                    a / d if d else 0.0 for a, d in zip(accepted_by_position, drafted_by_position, strict=True)
                ],
                "conditional_acceptance_rate": [None] + [
                    a / p if p else None for a, p in zip(accepted_by_position[1:], accepted_by_position, strict=False)
                ],
                "t_begin_s": 0.0, "t_draft_s": 0.5, "t_accept_s": 0.1,
            }
        ]  # fmt: skip
    return {
        "row_type": "attempt", "task_id": task, "task_name": task, "task_category": category,
        "max_tokens": generated, "repeat_index": run - 1, "builtin": False, "prompts": "prompts.jsonl",
        "runtime": {}, "variant": {"is_baseline": stage is None, "spec_types": [stage] if stage else [],
                                   "stage_chain": stage or ""},
        "sampler": {"temp": 0.0},
        "timing": {"prompt_s": 0.2, "decode_s": decode_s, "total_s": decode_s + 0.2, "decode_tps": tps,
                   "overall_tps": generated / (decode_s + 0.2)},
        "tokens": {"prompt": 50, "generated": generated},
        "speculative": {"num_drafts": drafts, "accepted_drafts": drafts, "draft_tokens": drafted,
                        "accepted_tokens": accepted, "stages": stages},
        "quality": {"ok": ok, "error": None if ok else "decode failed", "retries_used": 0, "hit_eog": False},
        "prompt": f"prompt of {task}", "output": "...",
    }  # fmt: skip
