"""Parameter values without pydantic for the plain types our commands take.

typer 0.29 coerces every parameter value through a pydantic ``TypeAdapter`` (typer/core.py:100-109,
``get_runtime_param``), built even for an option that was not given: every command run would
import pydantic (more than ``import typer`` costs) before any command code runs, where a warm
``verify`` otherwise never needs it. Our parameters are plain (bool, str, int with bounds, Path,
Literal choices, lists of those), so ``PlainOption`` / ``PlainArgument`` convert them here with
typer's messages; any other annotation, a custom ``parser``, ``clamp``, ``resolve_path`` or
``allow_dash`` keeps typer's own coercion, and so does a missing required value (its message).

What each parameter declares is read from our own callback: its signature (``inspect.signature``
follows the ``__wrapped__`` that typer's wrapper carries) gives the annotation and the
``typer.Option`` / ``typer.Argument`` it was declared with, matched to click's parameter by name.
typer builds its ``TyperOption`` / ``TyperArgument`` itself (typer/main.py ``_get_param``) and takes
no parameter class, so ``plain`` moves each built parameter to the subclass, which overrides only
click's public ``Parameter.process_value``: Python's class assignment, the one step here no typer
API offers. ``tests/cli/test_params.py`` fails if typer stops building these classes (every
parameter of every command must have moved) or stops calling ``process_value`` (pydantic loads).
"""

from __future__ import annotations

import inspect
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import typer
from typer.core import TyperArgument, TyperOption
from typer.models import ParameterInfo

Convert = Callable[[Any, Any, Any], Any]
"""(value, parameter, click context) -> the converted value, or ``typer.BadParameter``."""


def _integral(text: str) -> bool:
    """pydantic's integer strings: ``^\\s*[-+]?[0-9]+\\s*$`` (checked without compiling a pattern)."""
    digits = text.strip()
    digits = digits[1:] if digits[:1] in ("+", "-") else digits
    return digits.isascii() and digits.isdigit()


def _bool(value: Any, param: Any, ctx: Any) -> bool:
    # pydantic's lax bool strings and message, as typer's adapter gives them.
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("", "0", "false", "f", "no", "n", "off"):
        return False
    if text in ("1", "true", "t", "yes", "y", "on"):
        return True
    raise typer.BadParameter(
        "Input should be a valid boolean, unable to interpret input", ctx=ctx, param=param
    )


def _str(value: Any, param: Any, ctx: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _int(info: ParameterInfo) -> Convert:
    def convert(value: Any, param: Any, ctx: Any) -> int:
        # pydantic's int parsing and messages (typer's adapter adds ``ge``/``le`` for min/max).
        if isinstance(value, bool) or not (isinstance(value, int) or _integral(str(value))):
            message = "Input should be a valid integer, unable to parse string as an integer"
            raise typer.BadParameter(message, ctx=ctx, param=param)
        number = int(value)
        if info.min is not None and number < info.min:
            raise typer.BadParameter(
                f"Input should be greater than or equal to {info.min}", ctx=ctx, param=param
            )
        if info.max is not None and number > info.max:
            raise typer.BadParameter(
                f"Input should be less than or equal to {info.max}", ctx=ctx, param=param
            )
        return number

    return convert


def _path(info: ParameterInfo, path_type: type[Path]) -> Convert:
    """typer's path checks and messages (typer 0.29.2 typer/_param_types.py:217-265, ``coerce_cli_path``)."""
    label = "path"
    if info.file_okay and not info.dir_okay:
        label = "file"
    elif info.dir_okay and not info.file_okay:
        label = "dir"

    def convert(value: Any, param: Any, ctx: Any) -> Path:
        path = value if isinstance(value, path_type) else path_type(value)
        shown = repr(typer.format_filename(value))
        try:
            mode = os.stat(path).st_mode
        except OSError:
            if not info.exists:
                return path
            raise typer.BadParameter(f"{label} {shown} does not exist.", ctx=ctx, param=param) from None
        problem = None
        if not info.file_okay and stat.S_ISREG(mode):
            problem = "is a file"
        elif not info.dir_okay and stat.S_ISDIR(mode):
            problem = "is a directory"
        elif info.readable and not os.access(path, os.R_OK):
            problem = "is not readable"
        elif info.writable and not os.access(path, os.W_OK):
            problem = "is not writable"
        if problem is not None:
            raise typer.BadParameter(f"{label} {shown} {problem}.", ctx=ctx, param=param)
        return path

    return convert


def _choice(choices: tuple[Any, ...], case_sensitive: bool) -> Convert:
    """typer's choice matching and message (typer 0.29.2 typer/_param_types.py:125-155)."""

    def normal(choice: Any, ctx: Any) -> str:
        text = str(choice)
        if ctx is not None and ctx.token_normalize_func is not None:
            text = ctx.token_normalize_func(text)
        return text if case_sensitive else text.casefold()

    def convert(value: Any, param: Any, ctx: Any) -> Any:
        normalized = {choice: normal(choice, ctx) for choice in choices}
        wanted = normal(value, ctx)
        for choice, text in normalized.items():
            if text == wanted:
                return choice
        listed = ", ".join(map(repr, normalized.values()))
        raise typer.BadParameter(f"{value!r} is not one of {listed}.", ctx=ctx, param=param)

    return convert


def _leaf(annotation: Any, info: ParameterInfo) -> Convert | None:
    if info.parser is not None or info.clamp or info.resolve_path or info.allow_dash:
        return None
    if get_origin(annotation) is Literal:
        return _choice(get_args(annotation), info.case_sensitive)
    if annotation is bool:
        return _bool
    if annotation is str:
        return _str
    if annotation is int:
        return _int(info)
    if isinstance(annotation, type) and issubclass(annotation, Path) and info.path_type is None:
        return _path(info, annotation)
    return None


def _converter(annotation: Any, info: ParameterInfo) -> Convert | None:
    if get_origin(annotation) is list:
        item = _leaf(get_args(annotation)[0], info)
        if item is None:
            return None
        return lambda values, param, ctx: [item(v, param, ctx) for v in values]
    return _leaf(annotation, info)


def _declared(parameter: inspect.Parameter) -> Convert | None:
    """The converter for what ``parameter`` declares: ``Annotated[T, typer.Option(...)]`` or
    ``T = typer.Option(...)``, ``T | None`` read as ``T`` (as typer reads it)."""
    annotation, info = parameter.annotation, parameter.default
    if get_origin(annotation) is Annotated:
        annotation, *extras = get_args(annotation)
        info = next((extra for extra in extras if isinstance(extra, ParameterInfo)), None)
    if not isinstance(info, ParameterInfo):
        return None
    if get_origin(annotation) in (Union, UnionType):  # typer allows only ``T | None``
        annotation = next(arg for arg in get_args(annotation) if arg is not type(None))
    return _converter(annotation, info)


def _process(param: PlainOption | PlainArgument, ctx: Any, value: Any) -> tuple[bool, Any]:
    """(handled, value): typer's ``process_value`` steps with ``_converter`` doing the coercion."""
    if param.required and param.value_is_missing(value):
        return False, None
    multiple = param.multiple or param.nargs == -1
    if value is None:
        value = () if multiple else None
    elif multiple and isinstance(value, str):
        raise typer.BadParameter("Value must be an iterable.", ctx=ctx, param=param)
    else:
        value = param.convert_plain(value, param, ctx)
    if param.callback is not None:
        value = param.callback(ctx, param, value)
    return True, value


class PlainOption(TyperOption):
    """A ``TyperOption`` whose plain values are converted without pydantic."""

    convert_plain: Convert

    def process_value(self, ctx: Any, value: Any) -> Any:
        handled, converted = _process(self, ctx, value)
        return converted if handled else super().process_value(ctx, value)


class PlainArgument(TyperArgument):
    """A ``TyperArgument`` whose plain values are converted without pydantic."""

    convert_plain: Convert

    def process_value(self, ctx: Any, value: Any) -> Any:
        handled, converted = _process(self, ctx, value)
        return converted if handled else super().process_value(ctx, value)


_PLAIN: dict[type, type[PlainOption | PlainArgument]] = {
    TyperOption: PlainOption,
    TyperArgument: PlainArgument,
}


def plain(params: Iterable[Any], callback: Callable[..., Any] | None) -> None:
    """Move each typer option and argument whose declaration in ``callback`` is plain to its
    pydantic-free subclass; the others keep typer's coercion."""
    if callback is None:
        return
    declared = inspect.signature(callback, eval_str=True).parameters
    for param in params:
        subclass = _PLAIN.get(type(param))
        convert = _declared(declared[param.name]) if param.name in declared else None
        if subclass is not None and convert is not None:
            param.__class__ = subclass
            param.convert_plain = convert
