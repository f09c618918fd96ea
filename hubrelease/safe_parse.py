"""The one input screen every JSON and YAML reader of user or remote input goes through.

Python's parsers fail on hostile input in ways that are no user's error message: ``json.loads``
raises ``ValueError`` deep inside for an integer past Python's 4,300-digit conversion limit and
``RecursionError`` for brackets nested ~1,000 deep, returns lone surrogates (``"\\ud800"``) that
cannot be encoded again, and a YAML file of 3 KB can alias itself into billions of values. Each
reader used to guard against some of these its own way. Here they are defined once:

- integers: at most ``MAX_INT_DIGITS`` digits (a reader of a format whose numbers are 64-bit, a
  safetensors header, passes its own smaller bound, so a 4,200-digit shape is refused before
  Python converts it);
- nesting: at most ``MAX_DEPTH`` levels of objects/arrays (mappings/lists in YAML);
- strings: no lone surrogate anywhere; keys (which are names) hold no NUL either;
- YAML aliases: at most ``MAX_NODES`` values once expanded, measured without expanding.

``parse_json`` raises ``ScreenError`` (exit 2) with the problem and its line; ``load_json`` words it
as the calling reader's own error class, naming the file. A reader of a server's answer maps it to
exit 4 as it does any malformed answer. ``name_problem`` is the same NUL/surrogate check for names
read from binary formats (GGUF keys, sum-file names); ``bounded_product`` is shape arithmetic that
stops at a bound instead of building a number of millions of digits.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from itertools import accumulate
from pathlib import Path
from typing import Any

from hubrelease.errors import HubReleaseError, InputError

MAX_INT_DIGITS = 4300
"""Most digits of an integer: Python's default int/str conversion limit (``sys.get_int_max_str_digits``)."""
MAX_DEPTH = 64
"""Deepest nesting of objects and arrays (the manifest schema is 5 levels deep, evaluation files 6)."""
MAX_NODES = 1_000_000
"""Most values a YAML document may hold once aliases are expanded (a 25,000-artifact manifest has ~100,000)."""
U64_DIGITS = 20
"""Digits of the largest unsigned 64-bit integer: the bound for formats whose numbers are u64/usize."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_NAME_UNSAFE = re.compile("[\x00\ud800-\udfff]")
_SCALARS = frozenset({str, int, float, bool, type(None)})


def too_many_digits(limit: int = MAX_INT_DIGITS) -> str:
    """The problem text for an integer past ``limit`` digits."""
    return f"an integer with more than {limit:,} digits"


TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"
LONE_SURROGATE = "a lone surrogate escape (such as \\ud800) is not text"


class ScreenError(InputError):
    """Input the screen refuses: ``problem`` says what, ``line`` (1-based) where when known."""

    def __init__(self, problem: str, *, line: int | None = None, pos: int | None = None) -> None:
        super().__init__(problem, line=line)
        self.problem = problem
        self.pos = pos


class _TooLong(Exception):
    """Raised from inside ``json.loads`` by an integer literal past the digit bound."""


def name_problem(name: str) -> str | None:
    """Why ``name`` (a key, a file or tensor name) cannot be a name: a NUL or a lone surrogate; else None."""
    found = _NAME_UNSAFE.search(name)
    if found is None:
        return None
    return "holds a NUL character" if found[0] == "\x00" else "holds a lone surrogate (not UTF-8 text)"


def parse_json(text: str | bytes, *, int_digits: int = MAX_INT_DIGITS) -> Any:
    """``json.loads`` of screened ``text`` (bytes must be UTF-8); anything refused is a ``ScreenError``.

    At the default bound, Python's own conversion limit refuses a longer integer inside ``json``
    (it is the same 4,300 digits, checked before converting); a smaller bound, or a Python whose
    limit was changed, measures each integer's digits before it is converted (``parse_int``: 1.7x
    the parse time, so only where needed). Nesting is measured after the parse, which itself
    stops at Python's recursion limit (~1,000 levels) for anything deeper.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ScreenError("not UTF-8 text", pos=exc.start) from None

    def parse_int(digits: str) -> int:
        if len(digits) - digits.startswith("-") > int_digits:
            raise _TooLong
        return int(digits)

    try:
        if int_digits == sys.get_int_max_str_digits():
            data = json.loads(text)
        else:
            data = json.loads(text, parse_int=parse_int)
    except json.JSONDecodeError as exc:
        raise ScreenError(exc.msg, line=exc.lineno, pos=exc.pos) from None
    except (_TooLong, ValueError):  # ValueError: Python's own limit, raised by int() inside json
        raise ScreenError(too_many_digits(int_digits), line=digits_line(text, int_digits)) from None
    except RecursionError:
        raise ScreenError(TOO_DEEP) from None
    if _json_depth(text) > MAX_DEPTH:
        raise ScreenError(TOO_DEEP)
    # A NUL or a lone surrogate is written as a \u escape: text decoded as UTF-8 (bytes here, or
    # each reader's strict read_text) cannot hold either raw.
    if "\\u" in text:
        problem = content_problem(data)
        if problem is not None:
            raise ScreenError(problem)
    return data


# Unrolled ("normal* (special normal*)*"): the alternation "(?:[^"\\]|\\.)*" kept a backtracking
# frame per character, 146 bytes of memory per byte of a long string (a 1 MiB string: 153 MB).
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_BRACKET_STEP = [{ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}.get(b, 0) for b in range(256)]


def _json_depth(text: str) -> int:
    """Deepest nesting of valid JSON ``text``, from its brackets outside strings: a regex, a byte
    translate and ``accumulate``, all in C (walking the parsed data in Python cost 0.7x the parse,
    this 0.13x, bench/input_screen_bench.py)."""
    brackets = _JSON_STRING.sub("", text).encode("utf-8", "surrogatepass").translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)


def load_json(
    text: str | bytes,
    path: str | Path,
    *,
    error: type[HubReleaseError] = InputError,
    what: str = "invalid JSON",
    line: int | None = None,
    int_digits: int = MAX_INT_DIGITS,
) -> Any:
    """``parse_json``, a refusal worded ``PATH[:LINE]: WHAT: PROBLEM`` as ``error`` (the reader's class).

    ``line`` is the line of ``text`` in its file (a JSONL record's), which then locates every problem.
    """
    try:
        return parse_json(text, int_digits=int_digits)
    except ScreenError as exc:
        raise error(f"{what}: {exc.problem}", path=path, line=line or exc.line) from None


def content_problem(data: Any, *, strings: bool = True) -> str | None:
    """What parsed data holds that no reader accepts: nesting past ``MAX_DEPTH``, a key that is no
    name (``name_problem``), a lone surrogate in a string value (looked for when ``strings``: a
    caller whose text has no escapes knows there is none)."""
    if not isinstance(data, (dict, list)):
        return LONE_SURROGATE if strings and isinstance(data, str) and _SURROGATE.search(data) else None
    stack: list[tuple[dict[Any, Any] | list[Any], int]] = [(data, 1)]
    while stack:  # only containers are pushed
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            return TOO_DEEP
        children: Iterable[Any] = node
        if isinstance(node, dict):
            for key in node:
                problem = name_problem(key) if isinstance(key, str) else None
                if problem is not None:
                    return f"key {key!r} {problem}"
            children = node.values()
        kinds = set(map(type, children))  # C-level: a list of a million numbers is not walked in Python
        if strings and str in kinds and any(isinstance(c, str) and _SURROGATE.search(c) for c in children):
            return LONE_SURROGATE
        if not kinds <= _SCALARS:
            stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return None


def yaml_shape_problem(root: Any, memo: dict[int, tuple[int, int]]) -> str | None:
    """What is wrong with the shape of parsed YAML ``root``: an alias bomb, deep nesting, complex keys.

    One pass over the distinct containers (aliases are shared objects, memoized by id in ``memo``,
    which a caller measuring several roots of one document passes to each), so the cost is that
    of the file, never of its expansion.
    """
    stack: list[tuple[Any, bool]] = [(root, False)]
    open_ids: set[int] = set()  # containers whose children are still being measured (depth-first)
    while stack:
        node, children_done = stack.pop()
        if not isinstance(node, (dict, list)) or id(node) in memo:
            continue
        children = list(node.values()) if isinstance(node, dict) else node
        if not children_done:
            if id(node) in open_ids:
                return "a YAML alias refers to a value that contains it"
            if isinstance(node, dict) and any(isinstance(k, (tuple, list, dict)) for k in node):
                return "complex (non-scalar) YAML keys are not allowed"
            open_ids.add(id(node))
            stack.append((node, True))
            stack.extend((child, False) for child in children if isinstance(child, (dict, list)))
            continue
        size, depth = 1, 1
        for child in children:
            child_size, child_depth = memo.get(id(child), (1, 0))
            size += child_size
            depth = max(depth, child_depth + 1)
        if size > MAX_NODES:
            return f"YAML aliases expand to more than {MAX_NODES:,} values (an alias bomb?)"
        if depth > MAX_DEPTH:
            return TOO_DEEP
        memo[id(node)] = (size, depth)
        open_ids.discard(id(node))
    return None


def parse_yaml(text: str | bytes) -> Any:
    """PyYAML's safe load of screened ``text``: aliases measured before anything walks the data.

    For YAML read without line-located validation (a README's front matter, an ``.eval_results``
    file); manifests and specs have their own YAML 1.2 loader (``manifest.load``) over the same limits.
    """
    import yaml  # loaded only by a command that reads such YAML (a warm verify loads none)

    source = text if isinstance(text, str) else text.decode("utf-8", "replace")  # for locating only
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()  # composed: an alias is a reference, nothing is expanded yet
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        # libyaml stops at 1,000 levels itself: deeper than the screen's limit all the same
        reason = TOO_DEEP if "maximum nesting depth" in reason else f"invalid YAML: {reason}"
        raise ScreenError(reason, line=mark.line + 1 if mark else None) from None
    except yaml.YAMLError as exc:
        raise ScreenError(f"invalid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise ScreenError(TOO_DEEP) from None
    except ValueError:  # PyYAML's int() of a number past Python's digit limit
        raise ScreenError(too_many_digits(), line=digits_line(source)) from None
    finally:
        loader.dispose()
    problem = yaml_shape_problem(data, {}) or content_problem(data, strings="\\" in source)
    if problem is not None:
        raise ScreenError(problem)
    return data


def digits_line(text: str, limit: int = MAX_INT_DIGITS) -> int | None:
    """1-based line of the first run of more than ``limit`` digits in ``text`` (YAML's ``1_000`` included)."""
    found = re.search(f"[0-9_]{{{limit + 1},}}", text)
    return text.count("\n", 0, found.start()) + 1 if found else None


def bounded_product(dims: Iterable[int], bound: int) -> int | None:
    """The product of ``dims``, or None as soon as a partial product passes ``bound``.

    Shape arithmetic of a file's declared dimensions: 3,000 dimensions of 4,200 digits multiply
    into a number of millions of digits (minutes of CPU); formats whose element counts are
    machine integers refuse such a shape instead (safetensors: ``checked_mul``, GGUF: INT64_MAX).
    """
    total = 1
    for dim in dims:
        total *= dim
        if total > bound:
            return None
    return total
