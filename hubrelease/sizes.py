"""Sizes as people write them on command lines and in recipes ('2G', '500M', '1.5GB', 1048576)."""

from __future__ import annotations

import re

from hubrelease.errors import InputError

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*$", re.IGNORECASE)


def parse_size(text: str | None) -> int:
    """'2G', '500M', '1.5GB' or plain bytes -> bytes (binary units, like llama.cpp's --split-max-size)."""
    if not text:
        return 0
    match = _SIZE.match(text)
    if not match:
        raise InputError(f"{text!r} is not a size like 2G, 500M or 1048576")
    power = "KMGT".find(match[2].upper()) + 1 if match[2] else 0
    return int(float(match[1]) * 1024**power)


def human_bytes(count: int) -> str:
    """Bytes as people read them: ``512 B``, ``1.5 MiB`` (binary units, one decimal)."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{count} B"
