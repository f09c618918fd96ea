"""Raw JSON text no ``json.dumps`` writes, through every JSON reader.

The other fuzz modules draw Python values and serialise them, so a document's text is always what
``json.dumps`` can write. The hostile inputs of a campaign against it are not: integers of 5,000
digits (past Python's 4,300-digit conversion limit, ``ValueError`` inside ``json``), arrays and
objects nested 100,000 deep (``RecursionError``), lone surrogate escapes (``"\\ud800"``), NUL
escapes in keys, shapes of thousands of 4,200-digit dimensions. ``fragments``
(tests/fuzz/values.py) draws such text; ``tests.factories.hostile_input`` splices it into an
otherwise valid document at a drawn place and names the command that reads it: bench_serving and llama-server JSONL (``build eval``), a spec (``build eval
--spec``), an evaluation file (``render-card --check``, ``add``), ``init`` over a config.json,
safetensors headers and index files (``inspect``), sum files (``verify``) and GGUF key and tensor
names (``inspect``). The contract is the harness's: never exit 3, one ``error:`` line.

``HUBRELEASE_FUZZ_TALLY=FILE`` appends each case's test name and exit code to FILE (one JSON
line a case): how the README's baseline figures for this tier were counted.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from typer.testing import Result

from tests.factories.drafters import write_raw_gguf
from tests.factories.hostile_input import READERS, write_safetensors
from tests.fuzz.harness import fuzz, run_case
from tests.fuzz.values import fragments, places


def _tally(test: str, result: Result) -> None:
    tally = os.environ.get("HUBRELEASE_FUZZ_TALLY")
    if tally:
        with open(tally, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"test": test, "exit": result.exit_code}) + "\n")


def _run(test: str, args: list[str], folder: Path) -> None:
    _tally(test, run_case(args, folder))


@fuzz(60)
@given(reader=st.sampled_from(list(READERS)), raw=fragments, place=places)
def test_raw_json_through_every_reader(reader: str, raw: str, place: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _run("raw_json", READERS[reader](root, raw, place), root)


@fuzz(25)
@given(
    dims=st.lists(
        st.one_of(
            st.integers(0, 2**70).map(str),
            st.integers(15, 4400).map(lambda n: "9" * n),
            st.sampled_from([str(2**64 - 1), str(2**64), str(2**32), "0", "-1", "1.5", "1e400"]),
        ),
        min_size=1,
        max_size=3000,
    ),
    dtype=st.sampled_from(["F32", "BF16", "U8", "F64"]),
)
def test_huge_shapes(dims: list[str], dtype: str) -> None:
    """Shapes as text: thousands of dimensions, 4,400-digit ones, products past 64 bits."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        header = '{"a":{"dtype":"' + dtype + '","shape":[' + ",".join(dims) + '],"data_offsets":[0,4]}}'
        write_safetensors(root / "model.safetensors", header)
        _run("huge_shapes", ["inspect", str(root / "model.safetensors")], root)


hostile_names = st.one_of(
    st.sampled_from(["a\x00b", "\x00", "a\udc80", "\ud800", "ok", "a\nb", "a\\b", "../x"]),
    st.text(st.characters(codec="utf-8"), min_size=1, max_size=12),
)


@fuzz(30)
@given(name=hostile_names, escaped=st.booleans())
def test_sum_file_names(name: str, escaped: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a.bin").write_bytes(b"a")
        prefix, text = ("\\", name.replace("\\", "\\\\").replace("\n", "\\n")) if escaped else ("", name)
        line = f"{prefix}{hashlib.sha256(b'a').hexdigest()}  {text}\n"
        (root / "SHA256SUMS").write_bytes(
            line.encode("utf-8", "surrogateescape" if "\udc80" in line else "surrogatepass")
        )
        _run("sum_file_names", ["verify", str(root / "SHA256SUMS")], root)


@fuzz(30)
@given(
    key=hostile_names,
    tensor=hostile_names,
    dims=st.lists(
        st.sampled_from([1, 2**31, 2**32, 2**62, 2**63 - 1, 2**63, 2**64 - 1]), min_size=1, max_size=4
    ),
)
def test_gguf_names_and_element_counts(key: str, tensor: str, dims: list[int]) -> None:
    """Key and tensor names written as raw bytes (a NUL, a surrogate's UTF-8 form), element counts past int64."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = write_raw_gguf(root / "g.gguf", "llama", {"general.keyname": 1}, [("tensorname", (4,), 0, 16)])
        raw = path.read_bytes()
        at = 0
        for placeholder, value in (
            (b"general.keyname", key),
            (b"tensorname", tensor),
        ):  # KV first, then tensors
            encoded = value.encode("utf-8", "surrogatepass")
            at = raw.index(placeholder)
            raw = raw[: at - 8] + struct.pack("<Q", len(encoded)) + encoded + raw[at + len(placeholder) :]
            at += len(encoded)  # the tensor's n_dims (1) and its one dimension (4) follow its name
        shape = struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        raw = raw[:at] + shape + raw[at + 12 :]
        path.write_bytes(raw)
        _run("gguf_names", ["inspect", str(path)], root)
