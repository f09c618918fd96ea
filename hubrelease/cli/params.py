"""Parameter coercion without pydantic for the plain types our commands take.

typer 0.29 coerces every parameter value through a pydantic ``TypeAdapter`` it builds on first
use, and it builds one even for an absent group-level ``--help`` flag: that imports pydantic
(~0.1-0.25 s here, more than ``import typer`` itself) in every process, before any command code
runs (bench/startup_bench.py). Our parameters are plain (bool, str, int with bounds, Path,
Literal choices, lists of those), so they get the same conversions and messages from typer's own
pydantic-free helpers instead. Any other annotation keeps typer's adapter.
``tests/cli/test_help.py`` checks both the messages and that parsing leaves pydantic unloaded.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

from typer import _click as click
from typer._click.exceptions import BadParameter
from typer._coercion import RuntimeParam
from typer._param_types import choice_coercion_annotation, coerce_cli_choice, coerce_cli_path
from typer.core import _TyperParameter
from typer.models import ParameterInfo

Convert = Callable[[Any, _TyperParameter, click.Context], Any]
_INT = re.compile(r"^\s*[-+]?[0-9]+\s*$")


@dataclass(frozen=True)
class _PlainParam(RuntimeParam):
    convert: Convert

    def _coerce_value(self, value: Any, param: _TyperParameter, ctx: click.Context) -> Any:
        try:
            return self.convert(value, param, ctx)
        except ValueError as exc:  # typer's own validators (choices, paths) raise these
            raise BadParameter(str(exc), ctx=ctx, param=param) from None


def _bool(value: Any, param: _TyperParameter, ctx: click.Context) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("", "0", "false", "f", "no", "n", "off"):
        return False
    if text in ("1", "true", "t", "yes", "y", "on"):
        return True
    raise BadParameter("Input should be a valid boolean, unable to interpret input", ctx=ctx, param=param)


def _str(value: Any, param: _TyperParameter, ctx: click.Context) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _int(info: ParameterInfo) -> Convert:
    def convert(value: Any, param: _TyperParameter, ctx: click.Context) -> int:
        if isinstance(value, bool) or not (isinstance(value, int) or _INT.match(str(value))):
            message = "Input should be a valid integer, unable to parse string as an integer"
            raise BadParameter(message, ctx=ctx, param=param)
        number = int(value)
        if info.min is not None and number < info.min:
            raise BadParameter(f"Input should be greater than or equal to {info.min}", ctx=ctx, param=param)
        if info.max is not None and number > info.max:
            raise BadParameter(f"Input should be less than or equal to {info.max}", ctx=ctx, param=param)
        return number

    return convert


def _path(info: ParameterInfo, path_type: type[Path]) -> Convert:
    def convert(value: Any, param: _TyperParameter, ctx: click.Context) -> Any:
        value = value if isinstance(value, Path) else path_type(value)
        return coerce_cli_path(value, info, path_type=path_type, param=param, ctx=ctx)

    return convert


def _choice(choices: tuple[Any, ...], case_sensitive: bool) -> Convert:
    def convert(value: Any, param: _TyperParameter, ctx: click.Context) -> Any:
        return coerce_cli_choice(value, choices=choices, case_sensitive=case_sensitive, ctx=ctx)

    return convert


def _leaf(annotation: Any, info: ParameterInfo) -> Convert | None:
    if info.parser is not None or info.clamp:
        return None
    choice = choice_coercion_annotation(annotation, info)
    if choice is not None:
        return _choice(*choice)
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


def install(params: Iterable[click.Parameter]) -> None:
    """Give each typer parameter with a plain annotation a pydantic-free coercion."""
    for param in params:
        if not isinstance(param, _TyperParameter) or param.type_descriptor.file_annotation is not None:
            continue
        descriptor = param.type_descriptor
        convert = _converter(descriptor.annotation, descriptor.parameter_info)
        if convert is not None:
            param._runtime_param = _PlainParam(descriptor.parameter_info, descriptor.annotation, convert)
