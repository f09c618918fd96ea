"""``vllm bench serve`` result JSON (``--save-result``, with or without ``--save-detailed``) -> one matrix cell.

Format followed: vLLM 0.33.0 (PyPI wheel, commit g4ba787ec9), ``vllm/benchmarks/serve.py``. The file
is one JSON object: run metadata (``date``, ``backend``, ``label``, ``model_id``, ``tokenizer_id``,
``num_prompts``, ``request_rate``, ``max_concurrency``; lines 2305-2330) merged with the result
(lines 1318-1340): ``duration``, ``completed``, ``failed``, ``total_output_tokens``,
``output_throughput`` (``sum(actual_output_lens) / dur_s``), and per selected metric
``{mean,median,std,p99}_{ttft,tpot,itl,e2el}_ms`` (``process_one_metric``, lines 1400-1430; the
default metrics of a generation run are ttft, tpot and itl, line 2255). TPOT per request is
``(latency - ttft) / (output_len - 1)`` (lines 660-664), the same definition as bench_serving's, so
per-user tok/s is again 1000 / median_tpot_ms. Without ``--save-detailed`` the per-request arrays
``output_lens``, ``ttfts``, ``itls``, ``errors`` ... are deleted before saving (lines 2428-2442);
``failed`` stays, so failures are always counted. With speculative decoding the server's Prometheus
counters are read before and after the run (lines 996, 1131-1170) and their difference written as
``spec_decode_acceptance_length = 1 + accepted / drafts`` (bonus token included, like SGLang's
accept length) plus ``spec_decode_num_drafts``, ``_draft_tokens``, ``_accepted_tokens``
(lines 1376-1385): a per-run figure, warmup excluded, unlike bench_serving's lifetime average.
The file does not say which method or drafter the server ran; only that it speculated.
"""

from __future__ import annotations

from hubrelease.evaluation.ingest.interface import (
    ServingOptions,
    ServingRun,
    ServingSource,
    failures_of,
    summary_cell,
)
from hubrelease.evaluation.records import Record

VERSION = "0.33.0"
"""The vLLM release whose ``vllm bench serve`` output format this module follows."""
_NEEDED = (
    "duration",
    "completed",
    "failed",
    "total_output_tokens",
    "output_throughput",
    "median_ttft_ms",
    "median_tpot_ms",
)


class VllmBenchServe(ServingSource):
    """``vllm bench serve --save-result`` files (vllm/benchmarks/serve.py)."""

    tool = "vllm bench serve"
    engine = "vllm"

    def recognises(self, record: Record) -> bool:
        return all(key in record.data for key in ("model_id", "num_prompts", "completed"))

    def read(self, record: Record, configuration: str, options: ServingOptions) -> ServingRun:
        for key in _NEEDED:
            if record.data.get(key) is None:
                hint = (
                    " (it is written only for metrics in --percentile-metrics)" if key.endswith("_ms") else ""
                )
                raise record.error(f"absent from the vllm bench serve result; the card needs it{hint}", key)
        completed = record.integer("completed")
        failed = record.integer("failed", minimum=0)
        warnings: list[str] = []
        if record.data.get("errors") is not None:  # --save-detailed: the array must say the same
            listed, _ = failures_of(record, completed)
            if listed != failed:
                raise record.error(f"failed is {failed}, but the errors array lists {listed}", "failed")
        if failed:
            warnings.append(
                f"{record.path}:{record.line}: {failed} request{'s' if failed > 1 else ''} failed and "
                f"{'are' if failed > 1 else 'is'} left out of every figure"
            )
        sent = record.integer("num_prompts", minimum=1)
        if completed + failed != sent:
            warnings.append(
                f"{record.path}:{record.line}: {sent} prompts sent, {completed} completed and {failed} failed"
            )
        accepted = None
        if record.data.get("spec_decode_acceptance_length") is not None:
            accepted = record.number("spec_decode_acceptance_length", minimum=0) or None
        cell = summary_cell(
            record,
            configuration,
            options,
            accepted=accepted,
            per_run=True,
            failed=failed,
            server_info=False,
            e2e="e2el",
        )
        return ServingRun(cell, None, speculated=self.speculated(record), warnings=warnings)

    def speculated(self, record: Record) -> bool | None:
        """The spec_decode_* counters are written only when the server exported them (serve.py:1376)."""
        return True if record.data.get("spec_decode_acceptance_length") is not None else None

    def served_by(self, record: Record) -> tuple[str, str] | None:
        """The spec_decode_* figures come from the server's ``vllm:spec_decode*`` Prometheus metrics only
        (serve.py:235), so a file carrying them was served by vLLM."""
        if not self.speculated(record):
            return None
        return "vllm", "its spec_decode_* figures are read from vLLM's own vllm:spec_decode metrics"

    def default_name(self, record: Record) -> tuple[str, str] | None:
        """``compute_result_filename`` (serve.py:1615-1626): ``{label}-{rate}qps[-concurrency{N}]-{model}-
        {date}``, the label defaulting to the backend; the run is named by that label."""
        data = record.data
        label = str(data.get("label") or data.get("backend") or "")
        model, date = str(data.get("model_id") or ""), str(data.get("date") or "")
        if not (label and model and date):
            return None
        concurrency = data.get("max_concurrency")
        rate = f"{_rate(data.get('request_rate'))}qps" + (
            f"-concurrency{concurrency}" if concurrency is not None else ""
        )
        if data.get("ramp_up_strategy") is not None:
            rate = (
                f"ramp-up-{data['ramp_up_strategy']}-{data.get('ramp_up_start_rps')}qps-"
                f"{data.get('ramp_up_end_rps')}qps" + rate.partition("qps")[2]
            )
        return f"{label}-{rate}-{model.split('/')[-1]}-{date}", label

    def sent(self, record: Record) -> int | None:
        value = record.data.get("num_prompts")
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

    def model(self, record: Record) -> str | None:
        value = record.data.get("model_id")
        return str(value) if value else None


def _rate(value: object) -> str:
    """``request_rate`` as the file name spells it: the float's ``str`` (the file stores inf as "inf")."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(float(value))
    return str(value)
