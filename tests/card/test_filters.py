"""Every filter prints a value the same way, and ``None`` as n/a."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hubrelease.card.filters import FILTERS
from hubrelease.evaluation.models import Interval


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("tok_s", (114.23,), "114.2 tok/s"),
        ("tok_s", (None,), "n/a"),
        ("ms", (145.06,), "145.1 ms"),
        ("ms", (8.666, 2), "8.67 ms"),
        ("num", (4.0213,), "4.02"),
        ("num", (None,), "n/a"),
        ("pct", (0.44010,), "44.0%"),
        ("pct", (0.061, 1, True), "+6.1%"),
        ("pct", (-0.0001, 1, True), "+0.0%"),
        ("signed", (1.315,), "+1.315"),
        ("signed", (-0.093,), "-0.093"),
        ("signed", (-0.0001,), "+0.000"),
        ("ci", (Interval(low=0.36, high=2.27),), "[0.360, 2.270]"),
        ("ci", (Interval(low=-0.021, high=0.099), 3), "[-0.021, 0.099]"),
        ("pct_range", (Interval(low=0.0166, high=0.1049),), "+1.7% to +10.5%"),
        ("count", (100014884,), "100,014,884"),
        ("bytes", (737_000_000,), "737 MB"),
        ("bytes", (1_380_000_000,), "1.38 GB"),
        ("bytes", (19_982_543_552,), "20.0 GB"),
        ("bytes", (999_999,), "1.00 MB"),
        ("bytes", (512,), "512 B"),
        ("bytes", (None,), "n/a"),
        (
            "sha_short",
            ("7b9f2654dfc07c0a9197da3e6414db58202a60008a24f76387a52136f302134a",),
            "7b9f2654dfc07c0a",
        ),
        ("license_label", ("apache-2.0",), "Apache-2.0"),
        ("license_label", ("cc-by-4.0",), "CC-BY-4.0"),
        ("license_label", ("not-a-licence",), "not-a-licence"),
        ("join_list", (["Z-Lab", "Modal", "SGLang"], "or"), "Z-Lab, Modal, or SGLang"),
        ("join_list", (["A", "B"],), "A and B"),
        ("join_list", (["A"],), "A"),
        ("na", (None,), "n/a"),
        ("na", (0,), 0),
    ],
)
def test_filter(name: str, args: tuple[Any, ...], expected: object) -> None:
    assert FILTERS[name](*args) == expected


@given(st.integers(min_value=1000, max_value=10**17))
def test_bytes_keeps_three_significant_digits(size: int) -> None:
    value, unit = FILTERS["bytes"](size).split()
    scale = 1000 ** (["kB", "MB", "GB", "TB", "PB"].index(unit) + 1)
    assert abs(float(value) * scale - size) <= 0.005 * size
    assert 1 <= float(value) < 1000 or unit == "PB"


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), st.integers(min_value=0, max_value=4))
def test_signed_and_num_agree(value: float, digits: int) -> None:
    text = FILTERS["signed"](value, digits)
    assert text[0] in "+-"
    assert text.lstrip("+") == FILTERS["num"](value, digits) or (text[0] == "+" and float(text) == 0)
