"""The numbers of an evaluation file, each with its JSON path: what ``rebuild`` compares one by one
and the card's Reproducibility section counts."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def _is_figure(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def figures(data: Any, where: str = "") -> Iterator[tuple[str, float]]:
    """Every number in a JSON document with its path (``cells[0].overall_tok_s``), in document order."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield from figures(value, f"{where}.{key}" if where else key)
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from figures(value, f"{where}[{index}]")
    elif _is_figure(data):
        yield where, data
