"""Raw record reading: line numbers and cells survive unusual but valid text; broken text is one error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hubrelease.errors import FormatError
from hubrelease.evaluation.records import read_records


def test_jsonl_strings_may_hold_unicode_line_separators(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    rows = [{"prompt_id": "a\u2028b\x85c\x0cd"}, {"prompt_id": "e"}]
    path.write_text("\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\r\n", encoding="utf-8")
    records = list(read_records(path))
    assert [(r.line, r.data["prompt_id"]) for r in records] == [(1, "a\u2028b\x85c\x0cd"), (2, "e")]


def test_csv_byte_order_mark_and_unicode_separators_stay_out_of_the_cells(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_bytes("\ufeffprompt_id,arm\r\np\u2028q,A\r\nr,B\r\n".encode())
    records = list(read_records(path))
    assert [(r.line, dict(r.data)) for r in records] == [
        (2, {"prompt_id": "p\u2028q", "arm": "A"}),
        (3, {"prompt_id": "r", "arm": "B"}),
    ]


def test_deeply_nested_json_line_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text('{"ok": 1}\n' + "[" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        list(read_records(path))
    assert str(info.value) == f"{path}:2: malformed JSON line: nested more than 64 levels deep"
