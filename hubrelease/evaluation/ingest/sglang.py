"""SGLang ``bench_serving`` JSONL (one line per run) -> one matrix cell per line.

Every latency figure is bench_serving's own summary, never recomputed: the file does not carry
per-request latency, and TPOT needs it. bench_serving (sglang 0.5.23, python/sglang/benchmark/serving.py)
computes, per successful request, ``tpot = (latency - ttft) / (output_len - 1)`` (line 1172) where
``latency`` is stamped at every streamed chunk, the final ``[DONE]`` included (lines 356-357, 391), so
it is not the sum of the ITLs; ``median_tpot_ms = np.median(tpots or 0) * 1000`` (line 1287) and
``output_throughput = sum(output_lens) / dur_s`` (line 1274). Per-user tok/s is 1000 / median_tpot_ms,
the figure seed 000's table prints (80.7 = 1000 / 12.39). ``accept_length`` comes from
``/server_info`` ``internal_states[0].avg_spec_accept_length`` (lines 1643-1658), a server-lifetime
average that only ``--flush-cache`` (line 1519) resets; the file does not record whether it was used.
``server_info`` (line 1847) is the server's resolved ServerArgs and is checked against the configuration.
"""

from __future__ import annotations

from hubrelease.evaluation.ingest.interface import (
    ServerInfo,
    ServingOptions,
    ServingRun,
    ServingSource,
    failures_of,
    summary_cell,
)
from hubrelease.evaluation.records import Record


def server_info(record: Record) -> ServerInfo | None:
    """The parts of bench_serving's ``server_info`` (SGLang's resolved ServerArgs) that identify a configuration."""
    info = record.data.get("server_info")
    if info is None:
        return None
    if not isinstance(info, dict):
        raise record.error(f"expected an object, got {type(info).__name__}", "server_info")
    if isinstance(info.get("decode"), list) and info["decode"] and isinstance(info["decode"][0], dict):
        info = info["decode"][0]  # PD disaggregation: bench_serving reads the decode server too

    def text(key: str) -> str | None:
        value = info.get(key)
        return str(value) if value not in (None, "") else None

    tokens = info.get("speculative_num_draft_tokens")
    algorithm = text("speculative_algorithm")
    return ServerInfo(
        algorithm=None if algorithm in (None, "NONE") else algorithm,
        draft_model=text("speculative_draft_model_path"),
        model=text("model_path"),
        draft_tokens=tokens if isinstance(tokens, int) and not isinstance(tokens, bool) else None,
        version=text("version"),
    )


class BenchServing(ServingSource):
    """``python -m sglang.bench_serving`` / ``sglang.benchmark.serving`` result lines."""

    tool = "bench_serving"
    engine = "sglang"

    def recognises(self, record: Record) -> bool:
        return "completed" in record.data and "duration" in record.data

    def read(self, record: Record, configuration: str, options: ServingOptions) -> ServingRun:
        accepted: float | None = None
        if record.data.get("accept_length") is not None:
            accepted = record.number("accept_length")
            if accepted <= 0:
                accepted = None  # bench_serving reports -1 (or 0) when the server has no speculative state.
        failed, warnings = failures_of(record, record.integer("completed"))
        info = server_info(record)
        cell = summary_cell(
            record,
            configuration,
            options,
            accepted=accepted,
            per_run=options.flushed_cache,
            failed=failed,
            server_info=info is not None,
        )
        return ServingRun(cell, info, warnings=warnings)

    def server(self, record: Record) -> ServerInfo | None:
        return server_info(record)

    def served_by(self, record: Record) -> tuple[str, str] | None:
        """``server_info`` is the answer of SGLang's own ``/server_info`` endpoint (serving.py:1847)."""
        if server_info(record) is None:
            return None
        return "sglang", "it carries SGLang's /server_info"

    def sent(self, record: Record) -> int | None:
        """With --output-details, one ``output_lens`` entry per request sent; without, unknown."""
        lens = record.data.get("output_lens")
        return len(lens) if isinstance(lens, list) and lens else None
