"""Which tool wrote a record: ``SOURCES`` in the order records are tried, and ``source_of``.

llama-spec-bench lines first (every one has ``row_type``), then llama-server rows (they have
``predicted_n``), then ``vllm bench serve`` results (``model_id`` + ``num_prompts``), then SGLang
bench_serving lines.
"""

from __future__ import annotations

from hubrelease.evaluation.ingest.interface import Source
from hubrelease.evaluation.ingest.llama_server import LlamaServerRows
from hubrelease.evaluation.ingest.sglang import BenchServing
from hubrelease.evaluation.ingest.spec_bench import SpecBench
from hubrelease.evaluation.ingest.vllm import VllmBenchServe
from hubrelease.evaluation.records import Record

SOURCES: tuple[Source, ...] = (SpecBench(), LlamaServerRows(), VllmBenchServe(), BenchServing())
"""Every tool ``build eval`` reads, in recognition order."""


def source_of(record: Record) -> Source:
    """The tool that wrote ``record``; one line naming the record when none does."""
    for source in SOURCES:
        if source.recognises(record):
            return source
    tools = ", ".join(s.tool for s in SOURCES)
    raise record.error(f"not a record of any tool build eval reads ({tools})", "completed")
