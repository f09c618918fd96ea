"""The work budget of one card render: a template cannot run the CI gate out of memory or time.

Jinja's sandbox stops a template from reaching the file system or Python's internals, not from
working without end: one line (``{{ 'x' * 10**10 }}``, nested ``range``, ``lipsum(10**6)``) took the
gate to 3.9 GB and a ``MemoryError``, or past 30 s. The budget is counted in work, not seconds, so
a render that fits it fits it on any machine:

- ``MAX_STEPS`` steps: each loop item, filter and intercepted operator is one, each call (macros,
  methods, ``loop()``) ``CALL_STEPS`` (what a macro call costs Jinja, in loop items), and each run
  of a loop, macro or call block body as many as the body has template nodes;
- ``MAX_VOLUME`` units of volume: the size of every value a filter, call or operator takes or makes
  and of everything printed (one unit per character, ``ITEM_UNITS`` per list, dict or range item);
- ``MAX_VALUE`` characters (or items) in any one value, the rendered card included;
- sizes known before the work (``'x' * n``, ``a ** b``, widths such as ``center(n)``,
  ``'%*d'``, ``replace``, ``join``) are checked before it is done, so the memory is never asked for;
- ``range`` is Jinja's sandbox range (at most ``MAX_RANGE`` items), ``lipsum`` at most
  ``MAX_LIPSUM_PARAGRAPHS`` paragraphs of at most ``MAX_LIPSUM_WORDS`` words.

The built-in cards of the example and both seeds use well under 1% of each limit. Exceeding one
raises ``BudgetExceeded``, which ``card.render`` reports as exit 2 naming the template and line.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from typing import Any

from jinja2 import nodes, pass_context
from jinja2.compiler import CodeGenerator, Frame
from jinja2.runtime import Context, LoopContext
from jinja2.sandbox import MAX_RANGE, SandboxedEnvironment
from jinja2.utils import generate_lorem_ipsum
from jinja2.visitor import NodeTransformer

MAX_STEPS = 5_000_000
CALL_STEPS = 50
MAX_VOLUME = 64 << 20
MAX_VALUE = 16 << 20
ITEM_UNITS = 8
MAX_INT_BITS = 14_300  # about 4,300 decimal digits: Python's own int/str conversion limit
MAX_LIPSUM_PARAGRAPHS = 100
MAX_LIPSUM_WORDS = 1_000
__all__ = ["MAX_RANGE", "BudgetExceeded", "MeteredSandbox", "metered"]

_STEPS = "_hubrelease_steps"
_CHARGE = "_hubrelease_charge"
_VALUE = "_hubrelease_value"
# Width and precision of a %-format conversion ("%1000000000d", "%*d"); a str.format field, with
# at most one level of nested fields ("{:>1000000000}", "{:{width}}").
_PERCENT_SPEC = re.compile(r"%[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?")
_FORMAT_FIELD = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")
_DIGITS = re.compile(r"\d+")
# Built-in filters whose int arguments are sizes of what they make (a width, a number of pieces).
_SIZE_ARGUMENTS = frozenset({"center", "indent", "wordwrap", "truncate", "slice", "batch", "format"})
_SIZED_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})


class BudgetExceeded(Exception):
    """A template asked for more work or memory than a card render may use (an ``Exception``, so
    Jinja's compile-time constant folding leaves the expression to the render, which reports it)."""


class _Meter:
    def __init__(self) -> None:
        self.steps = 0
        self.volume = 0

    def step(self, cost: int = 1) -> None:
        self.steps += cost
        if self.steps > MAX_STEPS:
            raise BudgetExceeded(f"over {MAX_STEPS:,} steps (loop items, calls, filters, operators)")

    def take(self, value: object) -> None:
        self.volume += size(value)
        if self.volume > MAX_VOLUME:
            raise BudgetExceeded(f"over {MAX_VOLUME:,} units of values made or printed")


_meter: contextvars.ContextVar[_Meter | None] = contextvars.ContextVar("hubrelease_card_meter", default=None)


def _active() -> _Meter:
    """The render's meter; none while Jinja compiles, so nothing is folded into a constant unmetered."""
    meter = _meter.get()
    if meter is None:
        raise BudgetExceeded("evaluated at render time")
    return meter


@contextlib.contextmanager
def metered() -> Iterator[_Meter]:
    """Run one render under a fresh budget."""
    token = _meter.set(_Meter())
    try:
        yield _active()
    finally:
        _meter.reset(token)


def size(value: object) -> int:
    """Volume units of ``value``: characters of a string, ``ITEM_UNITS`` per item of a collection."""
    if isinstance(value, str | bytes | bytearray):
        return len(value)
    if isinstance(value, int | float | bool | None):
        return 1
    if isinstance(value, Sized) and not isinstance(value, LoopContext):
        try:
            return len(value) * ITEM_UNITS
        except (TypeError, OverflowError):
            return 0
    return 1


def check_size(value: object) -> object:
    """``value``, unless it is larger than any one value may be."""
    if isinstance(value, str):
        if len(value) > MAX_VALUE:
            raise BudgetExceeded(f"a value of over {MAX_VALUE:,} characters or items")
        return value
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise BudgetExceeded(f"an integer of over {MAX_INT_BITS:,} bits")
    if size(value) > MAX_VALUE * (ITEM_UNITS if not isinstance(value, str | bytes | bytearray) else 1):
        raise BudgetExceeded(f"a value of over {MAX_VALUE:,} characters or items")
    return value


def _refuse_width(number: object) -> None:
    if isinstance(number, int) and not isinstance(number, bool) and number > MAX_VALUE:
        raise BudgetExceeded(f"a width or count of {number:,}, over {MAX_VALUE:,}")


def _check_percent(fmt: str, args: Sequence[object]) -> None:
    """A %-format with a width past the cap, written out or taken from the arguments (``*``), is refused."""
    for match in _PERCENT_SPEC.finditer(fmt):
        for number in match.groups():
            if number == "*":
                for arg in args:
                    _refuse_width(arg)
            elif number:
                _refuse_width(int(number))


def _check_braces(fmt: str, args: Sequence[object]) -> None:
    """``str.format``'s version of ``_check_percent``: widths in specs, or from nested fields."""
    for match in _FORMAT_FIELD.finditer(fmt):
        field = match[0]
        for digits in _DIGITS.findall(field.partition(":")[2]):
            _refuse_width(int(digits))
        if "{" in field[1:]:
            for arg in args:
                _refuse_width(arg)


def _length(value: object) -> int:
    return len(value) if isinstance(value, Sized) else 0


def _repeat_size(left: object, right: object) -> int | None:
    """Size of ``left * right`` for a sequence times an int, None otherwise."""
    for seq, times in ((left, right), (right, left)):
        if isinstance(seq, str | bytes | list | tuple) and isinstance(times, int):
            return _length(seq) * max(times, 0)
    return None


def _before_binop(op: str, left: object, right: object) -> None:
    if op == "%" and isinstance(left, str):
        _check_percent(left, right if isinstance(right, tuple) else (right,))
        return
    repeated = _repeat_size(left, right) if op == "*" else None
    if repeated is not None and repeated > MAX_VALUE:
        raise BudgetExceeded(f"a repetition of {repeated:,} characters or items, over {MAX_VALUE:,}")
    if isinstance(left, int) and isinstance(right, int) and _int_bits(op, left, right) > MAX_INT_BITS:
        raise BudgetExceeded(f"an integer of over {MAX_INT_BITS:,} bits")


def _int_bits(op: str, left: int, right: int) -> float:
    """About how many bits ``left op right`` has (0 for operators that do not grow integers)."""
    if op == "*":
        return left.bit_length() + right.bit_length()
    if op == "**" and abs(left) > 1 and right > 0:
        return right * math.log2(abs(left))
    return 0


def _before_call(obj: object, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    owner = getattr(obj, "__self__", None)
    name = getattr(obj, "__name__", "")
    if isinstance(owner, str | bytes | list | tuple):
        if name in _SIZED_METHODS:
            for arg in (*args, *kwargs.values()):
                _refuse_width(arg)
        elif name == "replace" and len(args) >= 2:
            _check_replace(owner, args[0], args[1])
        elif name == "join" and args:
            _check_join(owner, args[0])


def _check_replace(text: object, old: object, new: object) -> None:
    if isinstance(text, str) and isinstance(old, str) and isinstance(new, str) and len(new) > len(old):
        grows = (text.count(old) if old else len(text) + 1) * (len(new) - len(old))
        if len(text) + grows > MAX_VALUE:
            raise BudgetExceeded(f"a replace making over {MAX_VALUE:,} characters")


def _check_join(separator: object, items: object) -> None:
    if isinstance(items, list | tuple):
        total = _length(separator) * max(len(items) - 1, 0) + sum(_length(i) for i in items)
        if total > MAX_VALUE:
            raise BudgetExceeded(f"a join making over {MAX_VALUE:,} characters")


# The meter's own filters take the context only so that Jinja never folds them into constants
# at compile time (it folds no ``pass_context`` filter): they must run at every evaluation.
@pass_context
def _steps(context: Context, iterable: Iterable[Any]) -> Iterator[Any]:
    return _counted(iterable)


def _counted(iterable: Iterable[Any]) -> Iterator[Any]:
    meter = _active()
    for item in iterable:
        meter.step()
        yield item


@pass_context
def _value(context: Context, value: Any) -> Any:
    _active().take(check_size(value))
    return value


def _arguments(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """A filter's own arguments, without the environment or context Jinja passes first."""
    from jinja2.nodes import EvalContext

    skip = 1 if args and isinstance(args[0], SandboxedEnvironment | Context | EvalContext) else 0
    return args[skip:]


def metered_filter(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` charged to the budget: one step, the sizes it takes and makes, widths checked first."""

    @functools.wraps(function)  # keeps Jinja's pass_environment/pass_context marks
    def run(*args: Any, **kwargs: Any) -> Any:
        meter = _active()
        meter.step()
        own = _arguments(args)
        for value in own:
            meter.take(value)
        if name in _SIZE_ARGUMENTS:
            for arg in (*own[1:], *kwargs.values()):
                _refuse_width(arg)
        if name == "format" and own and isinstance(own[0], str):
            _check_percent(own[0], own[1:])
        elif name == "replace" and len(own) >= 3:
            _check_replace(own[0], own[1], own[2])
        elif name == "join" and own:
            items = own[0] if isinstance(own[0], list | tuple) else None
            if items is not None:
                _check_join(own[1] if len(own) > 1 else kwargs.get("d", ""), items)
        result = function(*args, **kwargs)
        meter.take(check_size(result))
        return result

    return run


def lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    """Jinja's ``lipsum``, capped (``lipsum(10**6)`` made a gigabyte of text)."""
    if n > MAX_LIPSUM_PARAGRAPHS or max > MAX_LIPSUM_WORDS:
        raise BudgetExceeded(
            f"lipsum is capped at {MAX_LIPSUM_PARAGRAPHS} paragraphs of {MAX_LIPSUM_WORDS} words"
        )
    return generate_lorem_ipsum(n=n, html=html, min=min, max=max)


@pass_context
def _charge(context: Context, value: str, cost: int) -> str:
    _active().step(cost)
    return value


def _charged(body: list[nodes.Node], lineno: int) -> list[nodes.Node]:
    """``body`` starting with a charge of one step per node in it (printing nothing)."""
    cost = 1 + sum(1 for node in body for _ in node.find_all(nodes.Node))
    charge = nodes.Filter(nodes.Const(""), _CHARGE, [nodes.Const(cost)], [], None, None, lineno=lineno)
    return [nodes.Output([charge], lineno=lineno), *body]


class _Metering(NodeTransformer):
    """Each loop item is a step, each run of a loop or macro body costs its size in nodes; printed
    values and ``~`` concatenations are charged by size."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Filter(node.iter, _STEPS, [], [], None, None, lineno=node.lineno)
        node.body = _charged(node.body, node.lineno)
        return node

    def visit_Macro(self, node: nodes.Macro) -> nodes.Node:
        self.generic_visit(node)
        node.body = _charged(node.body, node.lineno)
        return node

    def visit_CallBlock(self, node: nodes.CallBlock) -> nodes.Node:
        self.generic_visit(node)
        node.body = _charged(node.body, node.lineno)
        return node

    def visit_Output(self, node: nodes.Output) -> nodes.Node:
        self.generic_visit(node)
        node.nodes = [nodes.Filter(n, _VALUE, [], [], None, None, lineno=n.lineno) for n in node.nodes]
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return nodes.Filter(node, _VALUE, [], [], None, None, lineno=node.lineno)


class _MeteredCodeGenerator(CodeGenerator):
    def visit_Template(self, node: nodes.Template, frame: Frame | None = None) -> None:
        _Metering().visit(node)
        super().visit_Template(node, frame)


class MeteredSandbox(SandboxedEnvironment):
    """Jinja's sandbox with every loop, call, filter and size-making operator charged to the budget."""

    code_generator_class = _MeteredCodeGenerator
    intercepted_binops = frozenset({"*", "**", "%", "+", "//"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.globals["lipsum"] = lipsum
        self.filters = {name: metered_filter(name, f) for name, f in self.filters.items()}
        self.filters[_STEPS] = _steps
        self.filters[_VALUE] = _value
        self.filters[_CHARGE] = _charge

    def add_filters(self, filters: Mapping[str, Callable[..., Any]]) -> None:
        """Add filters (the card's own), metered like the built-in ones."""
        self.filters.update((name, metered_filter(name, f)) for name, f in filters.items())

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """``str.format``/``format_map`` as the sandbox wraps them, widths checked first."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        fmt = value.__self__

        @functools.wraps(wrapped)
        def checked(*args: Any, **kwargs: Any) -> str:
            values = [*args, *kwargs.values()]
            if values and isinstance(values[0], Mapping):  # format_map(mapping)
                values = [*values, *values[0].values()]
            _check_braces(fmt, values)
            return wrapped(*args, **kwargs)

        return checked

    def call_binop(self, context: Context, operator_: str, left: Any, right: Any) -> Any:
        meter = _active()
        meter.step()
        _before_binop(operator_, left, right)
        result = self.binop_table[operator_](left, right)
        meter.take(check_size(result))
        return result

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        meter = _active()
        meter.step(CALL_STEPS)
        _before_call(__obj, args, kwargs)
        if isinstance(__obj, LoopContext) and args:  # loop(children) in a recursive for
            args = (_counted(args[0]), *args[1:])
        result = super().call(__context, __obj, *args, **kwargs)
        meter.take(check_size(result))
        return result
