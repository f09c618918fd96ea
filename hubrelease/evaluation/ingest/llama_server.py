"""llama-server per-request rows (CSV/JSONL, or raw ``/completion`` responses) -> validated ``MeasuredRequest`` rows.

A row is one request: prompt_id, arm, boot, repetition, n_max, and the server's ``timings``
(predicted_n, predicted_ms, draft_n, draft_n_accepted). llama-server omits the draft fields when
nothing was drafted, so they default to 0. Decode tok/s is 1000 * predicted_n / predicted_ms; a verify
round produces predicted_n - draft_n_accepted rounds' worth of target tokens, so tokens per round is
predicted_n / (predicted_n - accepted), pooled over runs as the ratio of sums. The analyses of the
rows (paired comparisons, sweeps, step-time fit) are ``hubrelease.evaluation.analysis``'s.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from hubrelease.errors import FormatError, InputError
from hubrelease.evaluation.ingest.interface import Source
from hubrelease.evaluation.records import Record

# Canonical field -> the names published layouts use for it (seed 001's bench.py writes boot_index,
# drafter, drafter_sha16, server_sha16). The first one present in a row is read.
ALIASES: dict[str, tuple[str, ...]] = {
    "prompt_id": ("prompt_id", "prompt_index", "prompt_idx", "prompt_name"),
    "arm": ("arm", "arm_id", "config"),
    "boot": ("boot", "boot_index", "boot_idx", "boot_id"),
    "repetition": ("repetition", "rep", "repeat", "rep_index"),
    "n_max": ("n_max", "speculative.n_max", "nmax", "k"),
    "predicted_n": ("predicted_n",),
    "predicted_ms": ("predicted_ms",),
    "draft_n": ("draft_n",),
    "draft_n_accepted": ("draft_n_accepted",),
    "drafter": ("drafter", "drafter_file", "drafter_filename", "model_draft"),
    "drafter_sha": ("drafter_sha256", "drafter_sha16", "drafter_sha"),
    "server_sha": ("server_sha256", "server_sha16", "server_sha", "binary_sha16", "binary_sha256"),
    "category": ("category", "prompt_category", "task_category"),
}
_DIGEST = re.compile(r"^[0-9a-f]{8,64}$")


@dataclass(frozen=True)
class Columns:
    """Which column of a row holds each canonical field: the aliases, overridden by ``--columns``."""

    mapping: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str | None) -> Columns:
        """``FIELD=COLUMN,FIELD=COLUMN`` (e.g. ``prompt_id=task,boot=server_boot``)."""
        mapping: dict[str, str] = {}
        for part in filter(None, (text or "").split(",")):
            name, sep, column = part.partition("=")
            name, column = name.strip(), column.strip()
            if not sep or not column or name not in ALIASES:
                raise InputError(
                    f"--columns: expected FIELD=COLUMN with FIELD one of {', '.join(ALIASES)}, got {part!r}"
                )
            mapping[name] = column
        return cls(mapping)

    def key(self, record: Record, name: str) -> str:
        """The column holding ``name`` in ``record`` (the canonical name when none is present)."""
        if name in self.mapping:
            return self.mapping[name]
        return next((alias for alias in ALIASES[name] if _present(record.data.get(alias))), name)


def _present(value: Any) -> bool:
    return value is not None and value != ""


def flatten(record: Record) -> Record:
    """A raw llama-server ``/completion`` response (``timings`` nested, n_max under generation_settings)
    as a flat row; flat rows pass unchanged."""
    timings = record.data.get("timings")
    if not isinstance(timings, dict):
        return record
    data: dict[str, Any] = {key: value for key, value in record.data.items() if key != "timings"}
    for key, value in timings.items():
        data.setdefault(key, value)
    settings = record.data.get("generation_settings")
    if isinstance(settings, dict) and "speculative.n_max" in settings:
        data.setdefault("n_max", settings["speculative.n_max"])
    return Record(record.path, record.line, data)


@dataclass(frozen=True)
class MeasuredRequest:
    """One llama-server request (one row)."""

    record: Record
    prompt: str
    arm: str
    boot: int
    repetition: int
    n_max: int
    predicted_n: int
    predicted_ms: float
    draft_n: int
    accepted: int
    drafter: str | None = None
    drafter_sha: str | None = None
    server_sha: str | None = None
    sha_columns: tuple[str, str] = ("drafter_sha", "server_sha")
    """The row's own names of the drafter and server digest columns, for errors."""
    numbered: bool = False
    """The row has no repetition column: :func:`number_repetitions` gives it one."""
    category: str | None = None
    """The prompt's category (language, think mode, task), from the row or the spec's map."""

    @property
    def tok_s(self) -> float:
        return 1000.0 * self.predicted_n / self.predicted_ms


@dataclass(frozen=True)
class RowDefaults:
    """What a file of raw responses leaves out: its arm (CONFIG=PATH or file stem) and boot (its order)."""

    arm: str | None = None
    boot: int | None = None


def _digest(record: Record, key: str) -> str | None:
    value = record.data.get(key)
    if not _present(value):
        return None
    text = str(value).strip().lower()
    if not _DIGEST.match(text):
        raise record.error(
            f"expected a hex sha256 or a prefix of one (8 to 64 characters), got {value!r}", key
        )
    return text


def parse_run(
    record: Record, columns: Columns = Columns(), defaults: RowDefaults = RowDefaults()
) -> MeasuredRequest:
    """Validate one row (a flat row or a raw ``/completion`` response)."""
    record = flatten(record)
    key = functools.partial(columns.key, record)

    def fallback(name: str, value: str | int | None) -> str | int | None:
        return value if value is not None and not _present(record.data.get(key(name))) else None

    # A raw response has the prompt text, not an id: pair by its digest.
    prompt_text = record.data.get("prompt")
    prompt_default = None
    if isinstance(prompt_text, str) and not _present(record.data.get(key("prompt_id"))):
        prompt_default = "sha256:" + hashlib.sha256(prompt_text.encode()).hexdigest()[:12]
    arm_default = fallback("arm", defaults.arm)
    boot_default = fallback("boot", defaults.boot)
    drafter = record.data.get(key("drafter"))
    category = record.data.get(key("category"))
    run = MeasuredRequest(
        record=record,
        prompt=prompt_default or record.text(key("prompt_id")),
        arm=str(arm_default) if arm_default is not None else record.text(key("arm")),
        boot=int(boot_default) if boot_default is not None else record.integer(key("boot")),
        repetition=record.integer(key("repetition")) if _present(record.data.get(key("repetition"))) else 0,
        n_max=record.integer(key("n_max")),
        predicted_n=record.integer(key("predicted_n")),
        predicted_ms=record.number(key("predicted_ms")),
        draft_n=record.integer(key("draft_n"), default=0),
        accepted=record.integer(key("draft_n_accepted"), default=0),
        drafter=str(drafter) if _present(drafter) else None,
        drafter_sha=_digest(record, key("drafter_sha")),
        server_sha=_digest(record, key("server_sha")),
        sha_columns=(key("drafter_sha"), key("server_sha")),
        numbered=not _present(record.data.get(key("repetition"))),
        category=str(category) if _present(category) else None,
    )
    if run.predicted_ms <= 0:
        raise record.error(f"zero-duration run ({run.predicted_ms:g} ms)", key("predicted_ms"))
    if run.predicted_n < 1:
        raise record.error("no tokens predicted", key("predicted_n"))
    if not math.isfinite(run.tok_s):
        raise record.error(
            f"{run.predicted_n} tokens in {run.predicted_ms:g} ms is not a finite speed", key("predicted_ms")
        )
    reported = record.data.get("predicted_per_second")
    # llama-server's own figure, 1e3 / t_token_generation * n_decoded (tools/server/server-task.cpp,
    # result_timings): ours must be the same number, up to the rounding of a CSV cell.
    if _present(reported) and not math.isclose(
        record.number("predicted_per_second"), run.tok_s, rel_tol=1e-3
    ):
        raise record.error(
            f"{reported} tok/s disagrees with predicted_n / predicted_ms = {run.tok_s:.6g} tok/s",
            "predicted_per_second",
        )
    if not 0 <= run.accepted <= min(run.draft_n, run.predicted_n - 1):
        raise record.error(
            f"draft_n_accepted {run.accepted} is outside 0..min(draft_n, predicted_n - 1)",
            key("draft_n_accepted"),
        )
    return run


def number_repetitions(runs: Sequence[MeasuredRequest]) -> list[MeasuredRequest]:
    """Rows without a repetition column are numbered 1, 2, ... per prompt, arm, boot and n_max, in file order."""
    counts: dict[tuple[str, str, int, int], int] = defaultdict(int)
    numbered = []
    for run in runs:
        if run.numbered:
            group = (run.prompt, run.arm, run.boot, run.n_max)
            counts[group] += 1
            run = dataclasses.replace(run, repetition=counts[group])
        numbered.append(run)
    return numbered


def check_unique(runs: Sequence[MeasuredRequest]) -> None:
    """Refuse a request measured twice (same prompt, arm, boot, repetition, n_max), e.g. a file given twice."""
    first: dict[tuple[str, str, int, int, int], MeasuredRequest] = {}
    for run in runs:
        key = (run.prompt, run.arm, run.boot, run.repetition, run.n_max)
        earlier = first.setdefault(key, run)
        if earlier is not run:
            raise run.record.error(
                f"repeats prompt {run.prompt!r}, arm {run.arm!r}, boot {run.boot}, repetition {run.repetition},"
                f" n_max {run.n_max} (first at {earlier.record.path}:{earlier.record.line})",
                "repetition",
            )


def missing_cells(runs: Sequence[MeasuredRequest]) -> list[str]:
    """Per arm, the runs of the full grid boots x n_max x prompts x repetitions that are absent."""
    missing: list[str] = []
    for arm in dict.fromkeys(run.arm for run in runs):
        mine = [run for run in runs if run.arm == arm]
        have = {(run.boot, run.n_max, run.prompt, run.repetition) for run in mine}
        axes = [
            sorted({getattr(run, name) for run in mine}) for name in ("boot", "n_max", "prompt", "repetition")
        ]
        missing.extend(
            f"arm {arm} boot {boot} n_max {n_max} prompt {prompt} repetition {repetition}"
            for boot, n_max, prompt, repetition in itertools.product(*axes)
            if (boot, n_max, prompt, repetition) not in have
        )
    return missing


def check_grid(runs: Sequence[MeasuredRequest], allow_incomplete: bool) -> list[str]:
    """Refuse a grid with missing runs (a missing cell moves a mean silently) unless allowed; then warn."""
    missing = missing_cells(runs)
    if not missing:
        return []
    shown = "; ".join(missing[:5]) + ("; ..." if len(missing) > 5 else "")
    message = f"incomplete grid: {len(missing)} run{'s' if len(missing) > 1 else ''} missing ({shown})"
    if not allow_incomplete:
        raise FormatError(f"{message}; pass --allow-incomplete to build from what is there")
    return [message]


def check_digests(
    runs: Sequence[MeasuredRequest], artifacts: Mapping[str, str | None], binaries: Sequence[str]
) -> None:
    """Every row's drafter and server digests (or 16-character prefixes) must be the release's.

    Within an arm all rows must name one drafter digest (a boot with the wrong drafter is refused even
    without a manifest); with one, the digest must be an artifact's (the one named by the ``drafter``
    column when it names an artifact) and the server digest one of the engine binaries'.
    """
    first: dict[str, MeasuredRequest] = {}
    for run in runs:
        if run.drafter_sha is None:
            continue
        earlier = first.setdefault(run.arm, run)
        assert earlier.drafter_sha is not None
        if not (
            earlier.drafter_sha.startswith(run.drafter_sha) or run.drafter_sha.startswith(earlier.drafter_sha)
        ):
            raise run.record.error(
                f"arm {run.arm!r} ran drafter {run.drafter_sha}, but {earlier.drafter_sha} at "
                f"{earlier.record.path}:{earlier.record.line}",
                run.sha_columns[0],
            )
    if not artifacts and not binaries:
        return
    for run in runs:
        if run.drafter_sha is not None:
            named = _artifact_digest(artifacts, run.drafter)
            candidates = [named] if named else [d for d in artifacts.values() if d]
            if not any(d.startswith(run.drafter_sha) for d in candidates):
                what = (
                    f"the manifest's digest of {run.drafter}"
                    if named
                    else "any artifact digest in the manifest"
                )
                raise run.record.error(f"drafter digest {run.drafter_sha} is not {what}", run.sha_columns[0])
        if run.server_sha is not None and not any(d.startswith(run.server_sha) for d in binaries):
            raise run.record.error(
                f"server digest {run.server_sha} is not one of the manifest's engine binaries",
                run.sha_columns[1],
            )


@dataclass(frozen=True)
class LlamaOptions:
    """How to read llama-server rows: column names, completeness, and the release digests to check against."""

    columns: Columns = Columns()
    allow_incomplete: bool = False
    artifacts: Mapping[str, str | None] = field(default_factory=dict)
    """Artifact path -> sha256, from ``--manifest``."""
    binaries: Sequence[str] = ()
    """Engine binary sha256s, from ``--manifest``."""
    release_names: Sequence[str] = ()
    """The release's repo id and title, from ``--manifest``: what a drafter may be named without a digest."""


def _artifact_digest(artifacts: Mapping[str, str | None], drafter: str | None) -> str | None:
    if drafter is None:
        return None
    for path, digest in artifacts.items():
        if path == drafter or PurePosixPath(path).name == PurePosixPath(drafter).name:
            return digest
    return None


class LlamaServerRows(Source):
    """llama-server requests, one row each (seed 001's bench.py CSV, JSONL, raw /completion responses)."""

    tool = "llama-server rows"
    engine = "llama-server"

    def served_by(self, record: Record) -> tuple[str, str] | None:
        """``timings`` (predicted_n, draft_n_accepted...) is llama-server's own per-request account."""
        return "llama-server", "its rows carry llama-server's timings"

    def recognises(self, record: Record) -> bool:
        """A row or raw response with ``predicted_n``, flat or under ``timings``."""
        timings = record.data.get("timings")
        return "predicted_n" in record.data or (isinstance(timings, dict) and "predicted_n" in timings)
