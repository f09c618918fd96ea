"""Reading raw benchmark records (JSONL lines, CSV rows) with file:line context on every error."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hubrelease.errors import FormatError, InputError
from hubrelease.safe_parse import load_json


@dataclass(frozen=True)
class Record:
    """One raw record and where it came from (``line`` is the 1-based line in the file)."""

    path: Path
    line: int
    data: Mapping[str, Any]

    def error(self, message: str, field: str | None = None) -> FormatError:
        """A one-line error pointing at this record."""
        return FormatError(message, path=self.path, line=self.line, field=field)

    def number(self, key: str, *, default: float | None = None, minimum: float | None = None) -> float:
        """A finite number field (at least ``minimum``); empty CSV cells and JSON nulls count as absent."""
        value = self.data.get(key)
        if value is None or value == "":
            if default is not None:
                return default
            raise self.error("required field is missing", key)
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            raise self.error(f"expected a number, got {value!r}", key) from None
        if not math.isfinite(number):
            raise self.error(f"expected a finite number, got {value!r}", key)
        if minimum is not None and number < minimum:
            raise self.error(f"expected a number >= {minimum:g}, got {value!r}", key)
        return number

    def integer(self, key: str, *, default: int | None = None, minimum: int | None = None) -> int:
        """An integer field (``3`` or ``3.0``)."""
        number = self.number(key, default=None if default is None else float(default), minimum=minimum)
        if number != int(number):
            raise self.error(f"expected an integer, got {self.data.get(key)!r}", key)
        return int(number)

    def text(self, key: str) -> str:
        """A non-empty string field (numbers are read as their text)."""
        value = self.data.get(key)
        if value is None or value == "":
            raise self.error("required field is missing", key)
        return str(value)


def read_text(path: Path, expected: str) -> str:
    """A UTF-8 file's text; ``expected`` names what it should be, for the error line."""
    try:
        # utf-8-sig: spreadsheet exports start CSV files with a byte-order mark.
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError("file not found", path=path) from None
    except IsADirectoryError:
        raise InputError(f"is a folder, expected {expected}", path=path) from None
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", path=path) from None


def read_records(path: Path) -> Iterator[Record]:
    """Records of a ``.csv`` (header row, then one record per row) or JSONL file (one object per line)."""
    text = read_text(path, "a benchmark file")
    if path.suffix.lower() == ".csv":
        yield from _csv_records(path, text)
        return
    # Split on "\n" only: str.splitlines also breaks at U+2028, U+0085 and other characters that
    # JSON allows unescaped inside strings (and the trailing "\r" of CRLF is JSON whitespace).
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        data = load_json(line, path, error=FormatError, what="malformed JSON line", line=number)
        if not isinstance(data, dict):
            raise FormatError("expected a JSON object on each line", path=path, line=number)
        yield Record(path, number, data)


def _csv_records(path: Path, text: str) -> Iterator[Record]:
    # newline="": quoted cells may hold line breaks, and U+2028 and the like are not line ends.
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows = iter(reader)
    while True:
        try:
            row = next(rows)
        except StopIteration:
            return
        except csv.Error as exc:
            # e.g. "field larger than field limit (131072)": the csv module's cap on one cell.
            raise FormatError(f"malformed CSV: {exc}", path=path, line=reader.reader.line_num) from None
        # DictReader puts surplus cells under the None key and fills missing ones with None.
        if None in row:
            raise FormatError(
                f"row has more cells than the header's {len(reader.fieldnames or ())}",
                path=path,
                line=reader.line_num,
            )
        yield Record(path, reader.line_num, row)
