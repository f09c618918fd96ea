"""Sum files (``verify SHA256SUMS``: GNU, binary and BSD forms, escapes, CRLF/CR, UTF-16, hostile names)
and dataset shards (``build dataset-card``: any value in any row field, garbled parquet and JSONL).
test_readers.py fuzzes free-form lines of both.

Bounds per case and the contract: tests/fuzz/harness.py.
"""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.factories.datasets import conversations, write_jsonl_shard, write_parquet_shards
from tests.fuzz.harness import fuzz, run_case
from tests.fuzz.values import set_path, values

DIGEST = hashlib.sha256(b"weights").hexdigest()
sum_lines = st.one_of(
    st.just(f"{DIGEST}  model.bin"),
    st.just(f"{DIGEST} *model.bin"),
    st.just(f"SHA256 (model.bin) = {DIGEST}"),
    st.just(f"\\{DIGEST}  model\\nbin"),
    st.builds(lambda d, n: f"{d}  {n}", st.text("0123456789abcdefABCDEF", max_size=70), st.text(max_size=12)),
    st.sampled_from(
        [
            "",
            " ",
            "#",
            "\x00",
            "SHA256 (",
            f"MD5 (model.bin) = {DIGEST[:32]}",
            f"{DIGEST}  ../x",
            f"{DIGEST}  /etc/passwd",
            f"{DIGEST}  a\\\\b",
            "\ud800",
        ]
    ),
    st.text(max_size=30),
)


@fuzz(40)
@given(
    lines=st.lists(sum_lines, max_size=6),
    ending=st.sampled_from(["\n", "\r\n", "\r", ""]),
    encoding=st.sampled_from(["utf-8", "utf-16", "latin-1"]),
)
def test_sum_file_forms_endings_and_encodings(lines: list[str], ending: str, encoding: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "model.bin").write_bytes(b"weights")
        sums = folder / "SHA256SUMS"
        sums.write_bytes(
            ending.join(lines).encode(encoding, errors="surrogatepass" if encoding == "utf-8" else "replace")
        )
        run_case(["verify", sums], folder)


ROW_PATHS = (
    ("messages",),
    ("messages", 0),
    ("messages", 0, "role"),
    ("messages", 1, "content"),
    ("category",),
    ("license",),
    ("generator",),
    ("completion_tokens",),
    ("extra",),
)


@fuzz(30)
@given(
    path=st.sampled_from(ROW_PATHS),
    value=values,
    row=st.integers(0, 5),
    form=st.sampled_from(["jsonl", "parquet", "garbled-jsonl", "garbled-parquet"]),
    cut=st.integers(0, 10_000),
)
def test_dataset_rows_and_garbled_parquet_and_jsonl(
    path: tuple[str | int, ...], value: object, row: int, form: str, cut: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = conversations(6)
        set_path(rows[row], path, value)
        data = folder / "data"
        if form.endswith("jsonl"):
            try:
                shards = [write_jsonl_shard(data / "train-00000-of-00001.jsonl", rows)]
            except (TypeError, ValueError, UnicodeEncodeError):
                return  # not JSON-serializable: nothing a generation run could have written
        else:
            try:
                shards = write_parquet_shards(data, rows, shards=2)
            except Exception:  # pyarrow refuses mixed types: such a shard cannot exist
                return
        if form.startswith("garbled"):  # a cut, or one byte changed (pages are decoded only when read)
            raw = bytearray(shards[0].read_bytes())
            if cut % 2:
                raw[cut % len(raw)] ^= 0xFF
            else:
                del raw[cut % (len(raw) + 1) :]
            shards[0].write_bytes(bytes(raw))
        run_case(
            ["build", "dataset-card", data, "--out", folder / "README.md", "--license", "cc-by-4.0"], folder
        )
