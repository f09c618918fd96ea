"""Jinja filters for cards: formatting only, never arithmetic a reader could not check.

Numbers reach templates already computed (``card.context``); these filters decide how they look,
so every table and sentence prints the same value the same way. ``None`` prints as ``n/a``
everywhere (a cell without speculation has no accepted length). The README lists every filter.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from hubrelease.hub_licenses import license_label

NA = "n/a"
_BYTE_UNITS = ("kB", "MB", "GB", "TB", "PB")


def _fixed(value: float, digits: int, signed: bool = False) -> str:
    text = f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"
    # A value that rounds to zero prints without a sign ("-0.000" would claim a direction).
    if float(text) == 0:
        text = f"{0:+.{digits}f}" if signed else f"{0:.{digits}f}"
    return text


def num(value: float | None, digits: int = 2) -> str:
    """``4.0213 | num`` -> ``4.02``: fixed decimals."""
    return NA if value is None else _fixed(value, digits)


def signed(value: float | None, digits: int = 3) -> str:
    """``1.315 | signed`` -> ``+1.315``: a difference, with its sign."""
    return NA if value is None else _fixed(value, digits, signed=True)


def tok_s(value: float | None, digits: int = 1) -> str:
    """``114.23 | tok_s`` -> ``114.2 tok/s``."""
    return NA if value is None else f"{_fixed(value, digits)} tok/s"


def ms(value: float | None, digits: int = 1) -> str:
    """``145.06 | ms`` -> ``145.1 ms``; ``ms(2)`` for TPOT-sized values."""
    return NA if value is None else f"{_fixed(value, digits)} ms"


def pct(fraction: float | None, digits: int = 1, signed: bool = False) -> str:
    """``0.44 | pct`` -> ``44.0%``; ``pct(signed=True)`` -> ``+44.0%``. Takes a fraction, not percent."""
    return NA if fraction is None else f"{_fixed(fraction * 100, digits, signed)}%"


def ci(interval: Any, digits: int = 3) -> str:
    """An interval (``.low``/``.high``) -> ``[0.360, 2.270]``."""
    if interval is None:
        return NA
    return f"[{_fixed(interval.low, digits)}, {_fixed(interval.high, digits)}]"


def pct_range(interval: Any, digits: int = 1) -> str:
    """A relative interval (fractions) -> ``+1.7% to +10.5%``."""
    if interval is None:
        return NA
    return f"{pct(interval.low, digits, True)} to {pct(interval.high, digits, True)}"


def p_value(value: float | None) -> str:
    """``0.0139 | p_value`` -> ``p = 0.0139``; below 0.0001 -> ``p < 0.0001`` (never ``p = 0.0000``)."""
    if value is None:
        return NA
    return "p < 0.0001" if value < 0.0001 else f"p = {_fixed(value, 4)}"


def count(value: int | None) -> str:
    """``100014884 | count`` -> ``100,014,884``."""
    return NA if value is None else f"{value:,}"


def bytes_(size: int | None) -> str:
    """``737000000 | bytes`` -> ``737 MB``: decimal units as the Hub shows them, 3 significant digits."""
    if size is None:
        return NA
    if size < 1000:
        return f"{size} B"
    value = float(size)
    for unit in _BYTE_UNITS:
        value /= 1000
        if value < 999.5 or unit == _BYTE_UNITS[-1]:
            digits = 0 if value >= 99.95 else 1 if value >= 9.995 else 2
            return f"{value:.{digits}f} {unit}"
    raise AssertionError("unreachable: the last unit always returns")


def sha_short(digest: str | None, length: int = 16) -> str:
    """The first ``length`` hex characters of a digest (for tables; checksum blocks print it whole)."""
    return NA if digest is None else digest[:length]


def join_list(items: Iterable[object], conjunction: str = "and") -> str:
    """``['A', 'B', 'C'] | join_list('or')`` -> ``A, B, or C``."""
    words = [str(item) for item in items]
    if len(words) <= 2:
        return f" {conjunction} ".join(words)
    return f"{', '.join(words[:-1])}, {conjunction} {words[-1]}"


def plain(value: float | None) -> str:
    """``0.0 | plain`` -> ``0``, ``10000000.0`` -> ``10000000``, ``0.0001`` -> ``0.0001``: a number as written."""
    if value is None:
        return NA
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def sci(value: float | None) -> str:
    """``10000000.0 | sci`` -> ``1e7``: a power of ten as GGUF dumps and model cards write it."""
    if value is None:
        return NA
    mantissa, _, exponent = f"{float(value):.6g}".partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else mantissa


def json_value(value: object) -> str:
    """A value as JSON writes it (``10000000.0`` stays ``10000000.0``, ``True`` is ``true``)."""
    return json.dumps(value)


def na(value: object) -> object:
    """``None`` -> ``n/a``; anything else unchanged."""
    return NA if value is None else value


FILTERS: dict[str, Callable[..., Any]] = {
    "num": num,
    "signed": signed,
    "tok_s": tok_s,
    "ms": ms,
    "pct": pct,
    "ci": ci,
    "pct_range": pct_range,
    "p_value": p_value,
    "count": count,
    "bytes": bytes_,
    "sha_short": sha_short,
    "license_label": license_label,
    "join_list": join_list,
    "plain": plain,
    "sci": sci,
    "json": json_value,
    "na": na,
}
"""Every filter a card template may use, by name."""
