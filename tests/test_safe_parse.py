"""The one input screen: integer, depth, surrogate, NUL and alias limits, defined once."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

import hubrelease.manifest.load as manifest_load
from hubrelease.errors import FormatError
from hubrelease.safe_parse import (
    LONE_SURROGATE,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    TOO_DEEP,
    ScreenError,
    bounded_product,
    load_json,
    name_problem,
    parse_json,
    parse_yaml,
    too_many_digits,
)


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_integers_up_to_the_limit_pass_and_one_digit_more_is_refused_with_its_line() -> None:
    assert parse_json(f"[-{'9' * MAX_INT_DIGITS}]") == [-int("9" * MAX_INT_DIGITS)]
    with pytest.raises(ScreenError) as info:
        parse_json('{"a": 1,\n "b": ' + "9" * 5000 + "}")
    assert (info.value.problem, info.value.line) == (too_many_digits(), 2)


def test_a_reader_of_64_bit_numbers_refuses_21_digits() -> None:
    assert parse_json(f"[{2**64 - 1}]", int_digits=20) == [2**64 - 1]
    with pytest.raises(ScreenError, match="more than 20 digits"):
        parse_json(f"[{10**20}]", int_digits=20)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1_000, 100_000])
def test_nesting_past_the_limit_is_refused_however_deep(depth: int) -> None:
    assert parse_json(nested(MAX_DEPTH)) is not None
    with pytest.raises(ScreenError) as info:
        parse_json(nested(depth))
    assert info.value.problem == TOO_DEEP


def test_lone_surrogates_are_refused_and_pairs_are_text() -> None:
    assert parse_json('["\\ud83d\\ude00"]') == ["\U0001f600"]
    for text in ('["\\ud800"]', '{"a": {"b": "x\\udfffy"}}'):
        with pytest.raises(ScreenError) as info:
            parse_json(text)
        assert info.value.problem == LONE_SURROGATE


def test_a_key_is_a_name_a_value_may_hold_a_nul() -> None:
    assert parse_json('{"a": "x\\u0000y"}') == {"a": "x\x00y"}
    with pytest.raises(ScreenError, match="holds a NUL character"):
        parse_json('{"ok": {"a\\u0000b": 1}}')
    with pytest.raises(ScreenError, match="holds a lone surrogate"):
        parse_json('{"a\\udc80": 1}')


def test_bytes_must_be_utf8() -> None:
    with pytest.raises(ScreenError, match="not UTF-8 text"):
        parse_json(b'["\xff"]')


def test_load_json_words_a_refusal_as_the_readers_own_error_naming_the_file(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        load_json(
            nested(100_000), tmp_path / "x.jsonl", error=FormatError, what="malformed JSON line", line=7
        )
    assert str(info.value) == f"{tmp_path / 'x.jsonl'}:7: malformed JSON line: {TOO_DEEP}"


def alias_bomb(levels: int = 9) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (alias_bomb(), "YAML aliases expand to more than 1,000,000 values"),
        ("x: &x [*x]\n", "refers to a value that contains it"),
        ("x: " + nested(1_000) + "\n", "nested more than 64 levels deep"),
        ("x: " + "9" * 5000 + "\n", "more than 4,300 digits"),
        ('x: "\\ud800"\n', "invalid YAML"),  # libyaml itself refuses the escape
        ('"a\\0b": 1\n', "holds a NUL character"),
        ("[1, 2", "invalid YAML"),
    ],
)
def test_yaml_is_screened_before_anything_walks_it(text: str, problem: str) -> None:
    with pytest.raises(ScreenError, match=problem):
        parse_yaml(text)


def test_name_problem() -> None:
    assert name_problem("blk.0.attn_q.weight") is None
    assert name_problem("a\x00b") == "holds a NUL character"
    assert name_problem("a\udc80") == "holds a lone surrogate (not UTF-8 text)"


def test_bounded_product_stops_at_the_first_partial_product_past_the_bound() -> None:
    read: list[int] = []

    def dims() -> Iterator[int]:  # 3,000 dimensions of 4,200 digits: the product would take minutes
        for _ in range(3000):
            read.append(1)
            yield 10**4199

    assert bounded_product(dims(), 2**64 - 1) is None
    assert len(read) == 1
    assert bounded_product([2**32, 2**32 - 1], 2**64 - 1) == 2**64 - 2**32
    assert bounded_product([2**32, 2**32], 2**64 - 1) is None
    assert bounded_product([], 1) == 1


def test_the_manifest_loader_has_no_limits_of_its_own() -> None:
    """One definition: the manifest's YAML reader uses the screen's limits (it had its own copies)."""
    own = {"MAX_DEPTH", "MAX_NODES", "_INT_DIGITS", "_TOO_MANY_DIGITS", "_shape_problem"}
    assert own.isdisjoint(vars(manifest_load))
    assert vars(manifest_load)["MAX_INT_DIGITS"] is MAX_INT_DIGITS


def test_a_long_string_costs_memory_linear_in_its_length() -> None:
    """Nesting is measured on the text outside strings; the regex that cuts strings out once kept a
    frame per character (a 1 MiB string: 153 MB), which a server reading JSON bodies cannot afford."""
    text = json.dumps({"content": "x" * (1 << 20), "escaped": 'a\\"b'})
    tracemalloc.start()
    try:
        assert parse_json(text)["escaped"] == 'a\\"b'
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20
