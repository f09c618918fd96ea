"""Serving runs of any source -> the matrix: configurations named, servers checked, holes refused.

A run is named by CONFIG=PATH, else its ``tag``, else the file's stem. What names it and what its
server says must agree: a run whose name or configuration says autoregressive while its server ran a
speculative algorithm (or the reverse, or another method family, another drafter or draft-token
count) is refused, so swapped files or a wrong tag cannot put one method's numbers under another's
name. A run whose record carries no server account leaves the method unknown unless a spec states it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from hubrelease.errors import FormatError
from hubrelease.evaluation.ingest.interface import ServerInfo, ServingOptions, ServingRun, ServingSource
from hubrelease.evaluation.models import Cell, Configuration, Drafter, Run
from hubrelease.evaluation.records import Record

UNKNOWN = "unknown"
"""``Configuration.method`` of a run whose server did not say what it ran and no spec states it."""
SPECULATIVE = "speculative"
"""``Configuration.method`` of a run that proves it speculated (vLLM's acceptance counters) but not how."""

_HUB_ID = re.compile(r"^[\w.-]+/[\w.-]+$")
_AUTOREGRESSIVE = {"autoregressive", "ar", "baseline", "nospec", "target", "vanilla", "off"}
# Method families by the words that name them; SGLang runs DFlash2 drafters as DFLASH and NEXTN as EAGLE.
_FAMILIES = {
    "dflash": {"dflash", "dflash2"},
    "eagle": {"eagle", "eagle3", "nextn", "mtp"},
    "ngram": {"ngram", "lookahead"},
    "standalone": {"standalone"},
}


def same_model(path: str, repo_id: str) -> bool:
    """A served model path names ``repo_id``: a Hub id must be it; a local folder must end in it or its name."""
    path = path.rstrip("/")
    if _HUB_ID.match(path):
        return path == repo_id
    return path.endswith("/" + repo_id) or PurePosixPath(path).name == repo_id.split("/")[-1]


def named_method(name: str | None) -> str | None:
    """What a run's name says it is: ``autoregressive``, a method family (``dflash``...), or None."""
    words = set(re.split(r"[^a-z0-9]+", (name or "").lower()))
    if words & _AUTOREGRESSIVE:
        return "autoregressive"
    return next((family for family, names in _FAMILIES.items() if words & names), None)


def _family(algorithm: str) -> str | None:
    return named_method(algorithm) if named_method(algorithm) != "autoregressive" else None


def infer_configuration(name: str, info: ServerInfo | None, speculated: bool | None) -> Configuration:
    """A configuration named ``name``: method and drafter from the server's account, else unknown."""
    if info is None:
        return Configuration(id=name, label=name, method=SPECULATIVE if speculated else UNKNOWN)
    if info.algorithm is None:
        return Configuration(id=name, label=name, method="autoregressive")
    drafter = None
    if info.draft_model is not None:
        drafter = Drafter(
            name=PurePosixPath(info.draft_model).name or info.draft_model, repo_id=info.draft_model
        )
    return Configuration(
        id=name, label=name, method=info.algorithm.lower(), drafter=drafter, draft_tokens=info.draft_tokens
    )


def _server(serving: ServingRun) -> str:
    """What the server said it ran, for messages."""
    info = serving.info
    if info is None:
        return "the run reported speculative-decoding acceptance statistics"
    return f"server ran speculative_algorithm {info.algorithm or 'none'}"


def _describe(info: ServerInfo) -> str:
    parts: list[Any] = [info.algorithm or "autoregressive"]
    if info.draft_model:
        parts.append(info.draft_model)
    if info.model:
        parts.append(f"target {info.model}")
    return ", ".join(map(str, parts))


def check_server(
    record: Record, name: str, serving: ServingRun, configuration: Configuration, run: Run | None
) -> list[str]:
    """Refuse a run whose server contradicts its configuration's method, its name or its tag."""
    info = serving.info
    speculated = (info.algorithm is not None) if info is not None else serving.speculated
    if speculated is None:
        return []
    tag = record.data.get("tag")
    label = f"configuration {configuration.id!r}" + (
        f" (tag {tag!r})" if tag and tag != configuration.id else ""
    )
    family = _family(info.algorithm) if info is not None and info.algorithm else None
    if configuration.method not in (UNKNOWN, SPECULATIVE):
        autoregressive = configuration.method == "autoregressive"
        mine = None if autoregressive else _family(configuration.method)
        if autoregressive == speculated or (family and mine and family != mine):
            raise record.error(f"{_server(serving)}, but {label} is {configuration.method}", "server_info")
    for value in dict.fromkeys(str(n) for n in (name, tag, configuration.label) if n):
        said = named_method(value)
        if said is None:
            continue
        autoregressive = said == "autoregressive"
        if autoregressive == speculated or (not autoregressive and family and said != family):
            kind = "autoregressive" if autoregressive else f"{said} (speculative)"
            raise record.error(
                f"{_server(serving)}, but {label} is named {value!r}, which says {kind}", "server_info"
            )
    if info is None:
        return []
    drafter = configuration.drafter
    if (
        drafter is not None
        and drafter.repo_id
        and info.draft_model
        and not same_model(info.draft_model, drafter.repo_id)
    ):
        raise record.error(
            f"server's speculative_draft_model_path {info.draft_model!r} is not {label}'s drafter {drafter.repo_id!r}",
            "server_info",
        )
    expected = configuration.draft_tokens
    if expected is None and run is not None and speculated:
        expected = run.serving.draft_tokens
    if speculated and expected is not None and info.draft_tokens not in (None, expected):
        raise record.error(
            f"server's speculative_num_draft_tokens is {info.draft_tokens}, {label} states {expected}",
            "server_info",
        )
    return []


def _target_warning(source: ServingSource, record: Record, run: Run | None) -> list[str]:
    served = source.model(record)
    if run is None or not served or same_model(served, run.target.repo_id):
        return []
    key = "server_info.model_path" if source.server(record) is not None else "model_id"
    return [f"{record.path}:{record.line}: {key} {served!r} does not name the target {run.target.repo_id!r}"]


def run_name(source: ServingSource, override: str | None, record: Record) -> str:
    """A run's configuration: its CONFIG=PATH override, else its ``tag``, else the file's stem (the run
    name part of it when the stem is the tool's own default file name)."""
    if override or record.data.get("tag"):
        return override or str(record.data["tag"])
    default = source.default_name(record)
    return default[1] if default is not None and default[0] == record.path.stem else record.path.stem


def missing_cells(cells: Sequence[Cell], configurations: Sequence[Configuration]) -> list[str]:
    """Configuration x concurrency cells of the full matrix that no run measured."""
    levels = sorted({c.concurrency for c in cells})
    have = {(c.configuration, c.concurrency) for c in cells}
    return [
        f"{c.id} at concurrency {level}"
        for c in configurations
        for level in levels
        if (c.id, level) not in have
    ]


def serving_cells(
    runs: Sequence[tuple[ServingSource, str | None, Record]],
    configurations: Sequence[Configuration],
    run: Run | None = None,
    options: ServingOptions = ServingOptions(),
) -> tuple[list[Cell], list[str]]:
    """Cells of every run in table order, and warnings; a run's configuration is :func:`run_name`."""
    by_id = {c.id: c for c in configurations}
    first_seen: dict[tuple[str, int], Record] = {}
    servers: dict[str, tuple[ServerInfo, Record]] = {}
    cells, warnings, unchecked = [], [], 0
    for source, override, record in runs:
        name = run_name(source, override, record)
        if name not in by_id:
            raise record.error(
                f"configuration {name!r} is not in the spec ({', '.join(by_id)}); pass the file as CONFIG=PATH",
                "tag",
            )
        serving = source.read(record, name, options)
        warnings.extend(serving.warnings)
        warnings.extend(check_server(record, name, serving, by_id[name], run))
        warnings.extend(_target_warning(source, record, run))
        if serving.info is None:
            unchecked += 1
        else:
            earlier_info, earlier = servers.setdefault(name, (serving.info, record))
            if earlier_info.key != serving.info.key:
                raise record.error(
                    f"server differs from the one of {name!r} at {earlier.path}:{earlier.line} "
                    f"({_describe(serving.info)} vs {_describe(earlier_info)})",
                    "server_info",
                )
        key = (serving.cell.configuration, serving.cell.concurrency)
        if key in first_seen:
            earlier = first_seen[key]
            raise record.error(
                f"second run of {key[0]!r} at concurrency {key[1]} (first at {earlier.path}:{earlier.line})",
                "max_concurrency",
            )
        first_seen[key] = record
        cells.append(serving.cell)
    if unchecked:
        unknown = [c.id for c in configurations if c.method in (UNKNOWN, SPECULATIVE)]
        warnings.append(
            f"{unchecked} run{'s carry' if unchecked > 1 else ' carries'} no server_info (bench_serving could not read "
            "/server_info): their configuration is not checked against the server"
            + (f"; method unknown for {', '.join(unknown)} (state it in a --spec)" if unknown else "")
        )
    lifetime = sum(1 for c in cells if c.accepted_length_per_run is False)
    if lifetime:
        warnings.append(
            f"accept_length of {lifetime} run{'s' if lifetime > 1 else ''} is the server's lifetime average "
            "(warmup and earlier runs included) unless bench_serving ran with --flush-cache; "
            "pass --flushed-cache if it did"
        )
    holes = missing_cells(cells, configurations) if cells else []
    if holes:
        shown = "; ".join(holes[:5]) + ("; ..." if len(holes) > 5 else "")
        message = f"incomplete matrix: {len(holes)} cell{'s' if len(holes) > 1 else ''} missing ({shown})"
        if not options.allow_incomplete:
            raise FormatError(f"{message}; pass --allow-incomplete to build from what is there")
        warnings.append(message + " (built with --allow-incomplete)")
    order = list(by_id)
    # Table order: configurations as the spec lists them, then rising concurrency.
    return sorted(cells, key=lambda c: (order.index(c.configuration), c.concurrency)), warnings
