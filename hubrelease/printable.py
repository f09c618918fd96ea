"""Text that came from a file or a server, made safe to print on one line.

A name or value read from a file (a GGUF key, a tensor name, a file name in a sum file, a label in
an evaluation spec) or from a server's answer may hold a newline, a carriage return, an ANSI escape
or a lone surrogate. Printed as is, a newline lets the file's author add their own ``error:`` lines
to the output, an escape sequence rewrites the terminal and a lone surrogate cannot be encoded at
all. ``escaped`` makes each such character visible as its Python escape; the CLI's output layer
applies it to every message line, and ``shown`` quotes and clips a value put into a message.
"""

from __future__ import annotations

import re

# C0 and C1 controls and DEL, the Unicode line and paragraph separators, the bidirectional
# overrides and isolates (they reorder what a terminal shows), and lone surrogates. A pattern
# string, compiled (and cached by ``re``) on first use: ``--help`` imports this module, never calls it.
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
SHOWN_CHARS = 200
"""Most characters of a value put into a message (a 5,000-digit header stays one readable line)."""


def escaped(text: str) -> str:
    """``text`` with every unsafe character as its escape (``\\n``, ``\\x1b``, ``\\u2028``, ``\\ud800``)."""
    if re.search(_UNSAFE, text) is None:
        return text
    return re.sub(_UNSAFE, lambda match: repr(match[0])[1:-1], text)


def shown(value: object, limit: int = SHOWN_CHARS) -> str:
    """``value`` for a message: a string quoted as ``repr`` does (escapes visible), at most ``limit`` characters."""
    if isinstance(value, int) and value.bit_length() > 3 * limit:  # str() of one past 4,300 digits raises
        return f"an integer of about {int(value.bit_length() * 0.30103):,} digits"
    text = repr(value) if isinstance(value, str) else escaped(str(value))
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"
