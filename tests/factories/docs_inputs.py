"""Small stand-ins for the raw inputs the measured-data manual's blocks read: llama-server request
rows, ``vllm bench serve --save-result`` files and a conversation dataset with its tokenizer.

The real ones are hours of GPU time or gigabytes; these have their files' layouts (written by the
factories the ingest tests use), so every command of that page runs on them as written. From a
checkout: ``python -m tests.factories.docs_inputs DIR``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.factories.bench_runs import ab_rows, llama_rows, vllm_result, write_csv, write_json
from tests.factories.datasets import conversations, write_parquet_shards, write_tokenizer

MEASURED_MARK = "<!-- docs-test: with measured runs -->"
"""A docs page whose blocks read these stand-ins (``tests/test_docs.py`` writes them first)."""


def write_measured_runs(folder: Path) -> None:
    """``bench/`` (an A/B of arms A and B, a sweep of arm S), ``vllm/`` (one DFlash2 configuration at
    concurrency 1 and 4), ``data/`` (two parquet shards of conversations) and ``tokenizer.json``."""
    write_csv(folder / "bench" / "results-retrain-ab.csv", ab_rows())
    sweep = llama_rows(arms={"S": [5]}, n_max_values=(0, 1, 2, 3, 4), gain={"S": 0.2})
    write_csv(folder / "bench" / "results-m1q4.csv", sweep)
    for concurrency in (1, 4):
        write_json(folder / "vllm" / f"dflash2-c{concurrency}.json", vllm_result(max_concurrency=concurrency))
    write_parquet_shards(folder / "data", conversations(40))
    write_tokenizer(folder / "tokenizer.json")


if __name__ == "__main__":
    write_measured_runs(Path(sys.argv[1]))
