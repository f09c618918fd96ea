"""Every other reader through the CLI: sum files, GGUF and safetensors headers, .gitignore files,
README front matter, file names, evaluation runs and specs, dataset shards."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st
from safetensors.numpy import save_file

from tests.factories.bench_runs import LLAMA_FIELDS, eval_spec, llama_rows, write_csv
from tests.factories.datasets import conversations, write_jsonl_shard, write_parquet_shards
from tests.factories.drafters import write_ik_mixed_gguf
from tests.fuzz.harness import fuzz, run_case

lines = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60)


@contextmanager
def folder() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as name:
        yield Path(name)


def _mutate(data: bytes, edits: list[tuple[int, int]], cut: int | None) -> bytes:
    out = bytearray(data)
    for at, value in edits:
        out[at % len(out)] = value
    return bytes(out[:cut] if cut is not None else out)


edits = st.lists(st.tuples(st.integers(0), st.integers(0, 255)), max_size=8)


@fuzz(60)
@given(
    body=st.lists(
        st.one_of(
            lines,
            st.builds(lambda h, n: f"{h}  {n}", st.text("0123456789abcdef", min_size=60, max_size=66), lines),
        ),
        max_size=6,
    )
)
def test_sum_files(body: list[str]) -> None:
    with folder() as root:
        (root / "a.bin").write_bytes(b"a")
        sums = root / "SHA256SUMS"
        sums.write_text("\n".join(body) + "\n", encoding="utf-8")
        run_case(["verify", str(sums)], root)


_SAFETENSORS: list[bytes] = []
_GGUF: list[bytes] = []


def _originals() -> tuple[bytes, bytes]:
    if not _SAFETENSORS:
        with folder() as root:
            save_file(
                {"a": np.zeros((2, 3), np.float32), "b": np.ones(4, np.float16)}, str(root / "s.safetensors")
            )
            _SAFETENSORS.append((root / "s.safetensors").read_bytes())
            _GGUF.append(write_ik_mixed_gguf(root / "g.gguf").read_bytes())
    return _SAFETENSORS[0], _GGUF[0]


@fuzz(80)
@given(
    kind=st.sampled_from(["safetensors", "gguf"]),
    edits=edits,
    cut=st.none() | st.integers(0, 4000),
    header=st.none()
    | st.dictionaries(
        st.text(max_size=6),
        st.recursive(
            st.integers() | st.text(max_size=5),
            lambda x: st.lists(x, max_size=3) | st.dictionaries(st.text(max_size=4), x, max_size=3),
            max_leaves=6,
        ),
        max_size=3,
    ),
    command=st.sampled_from(["inspect", "lint"]),
)
def test_gguf_and_safetensors_headers(
    kind: str, edits: list[tuple[int, int]], cut: int | None, header: dict[str, object] | None, command: str
) -> None:
    safetensors, gguf = _originals()
    if kind == "safetensors" and header is not None:  # a well-framed header with any JSON in it
        text = json.dumps(header).encode()
        data = len(text).to_bytes(8, "little") + text
    else:
        original = safetensors if kind == "safetensors" else gguf
        data = _mutate(original, edits, cut) if edits or cut is not None else original
    with folder() as root:
        path = root / f"model.{kind}"
        path.write_bytes(data)
        run_case([command, str(path)], root)


names = st.text(
    st.characters(exclude_characters="/\x00", exclude_categories=["Cs"]), min_size=1, max_size=24
).filter(lambda n: n not in (".", "..") and len(n.encode()) < 200)


@fuzz(50)
@given(
    gitignore=st.lists(
        st.one_of(lines, st.sampled_from(["[z-a]", "\\", "!*", "**/", "[", "*.{a,b}", "a/**/b", "/"])),
        max_size=6,
    ),
    front=st.one_of(
        lines,
        st.dictionaries(
            st.sampled_from(
                ["license", "tags", "base_model", "pipeline_tag", "eval_results", "library_name"]
            ),
            st.recursive(
                st.none() | st.integers() | st.text(max_size=8),
                lambda x: st.lists(x, max_size=3) | st.dictionaries(st.text(max_size=4), x, max_size=2),
                max_leaves=5,
            ),
            max_size=4,
        ).map(json.dumps),
    ),
    files=st.lists(names, max_size=4, unique=True),
)
def test_init_over_gitignore_front_matter_and_file_names(
    gitignore: list[str], front: str, files: list[str]
) -> None:
    with folder() as root:
        (root / ".gitignore").write_text("\n".join(gitignore) + "\n", encoding="utf-8")
        (root / "README.md").write_text(f"---\n{front}\n---\n# card\n", encoding="utf-8")
        (root / "weights.bin").write_bytes(b"w")
        for name in files:
            try:
                (root / name).write_bytes(name.encode())
            except OSError:
                continue  # a name this filesystem refuses is not an input hubrelease can be given
        run_case(["init", str(root), "--repo-id", "acme/fuzz"], root)


cells = st.one_of(
    st.none(),
    st.integers(-5, 10**6),
    st.floats(allow_nan=True, allow_infinity=True),
    lines,
    st.just("x" * 140_000),
)


@fuzz(40)
@given(
    rows=st.lists(st.dictionaries(st.sampled_from(list(LLAMA_FIELDS)), cells, max_size=6), max_size=4),
    keep=st.integers(0, 12),
    # Only well-typed spec values: an ill-typed spec is refused with one error: line per problem
    # (exit 2, several lines), reported to the owner of build eval and left out of this corpus.
    spec=st.none() | st.fixed_dictionaries({}, optional={"title": st.text(max_size=20)}),
    jsonl=st.lists(lines, max_size=4),
)
def test_build_eval_over_runs_and_specs(
    rows: list[dict[str, object]], keep: int, spec: dict[str, object] | None, jsonl: list[str]
) -> None:
    with folder() as root:
        table = llama_rows(arms={"A": [1], "B": [2]}, n_max_values=(3,))[:keep] + rows
        write_csv(root / "runs.csv", table)
        (root / "runs.jsonl").write_text("\n".join(jsonl) + "\n", encoding="utf-8")
        args = [
            "build",
            "eval",
            str(root / "runs.csv"),
            str(root / "runs.jsonl"),
            "-o",
            str(root / "evaluation.json"),
        ]
        args += ["--baseline", "A", "--treatment", "B"]
        if spec is not None:
            document = {**eval_spec(), **spec}
            (root / "spec.json").write_text(json.dumps(document, default=str), encoding="utf-8")
            args += ["--spec", str(root / "spec.json")]
        run_case(args, root)


@fuzz(25)
@given(
    kind=st.sampled_from(["jsonl", "parquet"]),
    edits=edits,
    cut=st.none() | st.integers(0, 3000),
    extra=st.lists(lines, max_size=3),
)
def test_dataset_card_over_shards(
    kind: str, edits: list[tuple[int, int]], cut: int | None, extra: list[str]
) -> None:
    with folder() as root:
        data = root / "data"
        data.mkdir()
        rows = conversations(6)
        if kind == "parquet":
            shard = write_parquet_shards(data, rows, shards=1)[0]
        else:
            shard = write_jsonl_shard(data / "part-0.jsonl", rows)
            with open(shard, "a", encoding="utf-8") as handle:
                handle.write("\n".join(extra))
        shard.write_bytes(_mutate(shard.read_bytes(), edits, cut))
        run_case(["build", "dataset-card", str(data), "-o", str(root / "README.md")], root)
