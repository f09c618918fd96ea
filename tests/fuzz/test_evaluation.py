"""bench_serving JSONL, llama-server CSV/JSONL rows and eval specs, mutated, through ``build eval``; evaluation JSON through ``add``.

The inputs start from tests/factories/bench_runs (valid runs and a valid spec), so most mutations
reach deep into ingestion and the statistics rather than failing at the first parse.
Bounds per case and the contract: tests/fuzz/harness.py.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.factories.bench_runs import (
    LLAMA_FIELDS,
    ab_eval_args,
    ab_rows,
    ab_spec_parts,
    dflash_runs,
    eval_spec,
    llama_rows,
    sglang_line,
    write_csv,
    write_jsonl,
)
from tests.factories.cards import matrix_evaluation
from tests.factories.releases import write_release
from tests.fuzz.harness import fuzz, run_case
from tests.fuzz.values import set_path, values

SGLANG_KEYS = (*sglang_line().keys(), "server_info", "nonsense")
AB_ROWS = ab_rows()


def _write(path: Path, text: str) -> None:
    path.write_bytes(text.encode("utf-8", errors="surrogatepass"))


@fuzz(40)
@given(
    key=st.sampled_from(SGLANG_KEYS),
    value=values,
    line=st.integers(0, 1),
    garble=st.none() | st.tuples(st.integers(0, 10_000), st.binary(max_size=4)),
)
def test_bench_serving_jsonl(key: str, value: Any, line: int, garble: tuple[int, bytes] | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        runs = dflash_runs(accept_length=4.0)
        set_path(runs[line], (key,), value)
        text = "".join(json.dumps(r, allow_nan=True) + "\n" for r in runs)
        path = folder / "df.jsonl"
        _write(path, text)
        if garble is not None:
            raw = path.read_bytes()
            at = garble[0] % (len(raw) + 1)
            path.write_bytes(raw[:at] + garble[1] + raw[at:])
        run_case(["build", "eval", path, "--hardware", "GPU", "--out", folder / "out.json"], folder)


cells = st.one_of(
    values.map(lambda v: v if isinstance(v, str) else json.dumps(v, allow_nan=True, default=str)),
    st.sampled_from(["", "nan", "inf", "-0", "1e999", "0x10", "1_000", " 3 ", "3.0", "x" * 140_000]),
)


@fuzz(40)
@given(
    row=st.integers(0, len(AB_ROWS) - 1),
    field=st.sampled_from([*LLAMA_FIELDS, "extra"]),
    cell=cells,
    bom=st.booleans(),
    as_jsonl=st.booleans(),
    drop=st.none() | st.sampled_from(LLAMA_FIELDS),
)
def test_llama_server_rows(
    row: int, field: str, cell: str, bom: bool, as_jsonl: bool, drop: str | None
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = copy.deepcopy(AB_ROWS)
        rows[row][field] = cell
        fields = [f for f in [*LLAMA_FIELDS, "extra"] if f != drop]
        if as_jsonl:
            path = write_jsonl(folder / "ab.jsonl", [{k: r.get(k) for k in fields} for r in rows])
        else:
            buffer = io.StringIO()
            writer = csv.DictWriter(buffer, fieldnames=fields, extrasaction="ignore")
            writer.writeheader()
            writer.writerows(rows)
            path = folder / "ab.csv"
            _write(path, ("\ufeff" if bom else "") + buffer.getvalue())
        run_case(ab_eval_args(path, folder / "out.json"), folder)


SPEC_PATHS = (
    ("schema_version",),
    ("title",),
    ("run",),
    ("run", "hardware"),
    ("run", "hardware", "id"),
    ("run", "engine", "name"),
    ("run", "engine", "commit"),
    ("run", "target", "repo_id"),
    ("run", "target", "revision"),
    ("run", "serving", "draft_tokens"),
    ("run", "prompt_set", "total"),
    ("run", "prompt_set", "categories"),
    ("configurations",),
    ("configurations", 0),
    ("configurations", 0, "id"),
    ("configurations", 1, "method"),
    ("configurations", 1, "drafter"),
    ("comparisons",),
    ("comparisons", 0, "baseline"),
    ("comparisons", 0, "arms"),
    ("comparisons", 0, "primary_setting"),
    ("comparisons", 0, "design"),
    ("comparisons", 0, "design", "boot_order"),
    ("sweeps", 0, "arm"),
    ("sweeps", 0, "pairs"),
    ("sweeps", 0, "pairs", 0, "treatment"),
    ("unknown",),
)


@fuzz(30)
@given(
    path=st.sampled_from(SPEC_PATHS),
    value=values,
    yaml_text=st.sampled_from([None, "", "[", "a: &a [*a]", "- 1\n- 2"]),
)
def test_eval_spec(path: tuple[str | int, ...], value: Any, yaml_text: str | None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_csv(folder / "ab.csv", AB_ROWS)
        write_jsonl(folder / "sweep.jsonl", llama_rows(arms={"S": [1]}, n_max_values=(0, 3)))
        spec = eval_spec(**ab_spec_parts())
        set_path(spec, path, value)
        spec_path = folder / "spec.json"
        if yaml_text is None:
            _write(spec_path, json.dumps(spec, allow_nan=True))
        else:
            spec_path = folder / "spec.yaml"
            _write(spec_path, yaml_text)
        args: list[str | Path] = [
            "build",
            "eval",
            folder / "ab.csv",
            folder / "sweep.jsonl",
            "--spec",
            spec_path,
        ]
        run_case([*args, "--out", folder / "out.json"], folder, located_list=True)


EVAL_PATHS = (
    ("schema_version",),
    ("title",),
    ("cells",),
    ("cells", 0),
    ("cells", 0, "configuration"),
    ("cells", 0, "concurrency"),
    ("cells", 0, "output_tok_s"),
    ("configurations",),
    ("configurations", 0, "id"),
    ("run",),
    ("run", "prompt_set", "total"),
    ("provenance",),
)


@fuzz(25)
@given(path=st.sampled_from(EVAL_PATHS), value=values, command=st.sampled_from(["add", "render-card"]))
def test_evaluation_json(path: tuple[str | int, ...], value: Any, command: str) -> None:
    """A mutated evaluation file: ``add`` decides whether it is one; ``render-card`` reads it for the card."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        evaluation = matrix_evaluation()
        set_path(evaluation, path, value)
        eval_path = folder / "evaluation.json"
        _write(eval_path, json.dumps(evaluation, allow_nan=True))
        extra: dict[str, object] | None = (
            {"evaluations": ["evaluation.json"]} if command == "render-card" else None
        )
        manifest = write_release(folder, {"model.safetensors": b"\0" * 16}, extra_manifest=extra)
        if command == "add":
            run_case(["add", manifest, eval_path], folder)
        else:
            run_case(["render-card", manifest, "--check"], folder)
