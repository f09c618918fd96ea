"""Completing a ``build eval`` spec from the runs themselves and a few options, so the common case needs none.

bench_serving lines name their configuration (CONFIG=PATH, ``tag`` or file stem) and carry the
server's resolved arguments (``server_info``: speculative algorithm, draft model, model path,
version); llama-server rows name their arms, boots, prompts and settings. What neither can say (the
machine, the target's revision, which arm is the baseline, the primary setting) comes from options
or a spec; a spec value always wins over an inferred one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from hubrelease.errors import BuildError, InputError
from hubrelease.evaluation.ingest.interface import ServerInfo, ServingSource, Source
from hubrelease.evaluation.ingest.llama_server import LlamaServerRows, MeasuredRequest
from hubrelease.evaluation.ingest.serving import infer_configuration, run_name
from hubrelease.evaluation.models import (
    Arm,
    Configuration,
    Drafter,
    Engine,
    Hardware,
    PromptSet,
    Run,
    Setting,
    Target,
)
from hubrelease.evaluation.records import Record
from hubrelease.evaluation.spec import ComparisonSpec, EvaluationSpec, SettingPairSpec, SweepSpec
from hubrelease.revisions import is_commit


@dataclass(frozen=True, kw_only=True)
class SpecOptions:
    """``build eval`` options standing in for a spec: see its ``--help``."""

    hardware: str | None = None
    target: str | None = None
    title: str | None = None
    baseline: str | None = None
    treatment: str | None = None
    primary: str | None = None
    fit_range: str | None = None


def parse_primary(text: str | None) -> tuple[str, Setting] | None:
    """``n_max=3`` -> ("n_max", 3)."""
    if text is None:
        return None
    name, sep, value = text.partition("=")
    if not sep or name.strip() != "n_max" or not value.strip():
        raise InputError(f"--primary: expected n_max=VALUE, got {text!r}")
    return "n_max", _setting(value.strip(), "--primary")


def parse_fit_range(text: str | None) -> tuple[float, float] | None:
    """``1:12`` -> (1.0, 12.0)."""
    if text is None:
        return None
    low, sep, high = text.partition(":")
    try:
        bounds = (float(low), float(high))
    except ValueError:
        bounds = None
    if not sep or bounds is None or bounds[0] >= bounds[1]:
        raise InputError(f"--fit-range: expected MIN:MAX with MIN < MAX, got {text!r}")
    return bounds


def _setting(text: str, option: str) -> Setting:
    try:
        number = float(text)
    except ValueError:
        raise InputError(f"{option}: expected a number, got {text!r}") from None
    return int(number) if number == int(number) else number


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "hardware"


def _target(text: str) -> Target:
    repo_id, _, revision = text.partition("@")
    if not repo_id or (revision and not is_commit(revision)):
        raise InputError(f"--target: expected REPO or REPO@COMMIT (40 hex), got {text!r}")
    return Target(repo_id=repo_id, revision=revision or None)


_LLAMA_ROWS = LlamaServerRows()
Serving = Sequence[tuple[ServingSource, str | None, Record]]
"""Serving runs as ``build eval`` collects them: the source that reads each, its CONFIG= name, the record."""


def _first_server(serving: Serving) -> ServerInfo | None:
    return next((info for source, _, record in serving if (info := source.server(record)) is not None), None)


def _engine(serving: Serving, requests: Sequence[MeasuredRequest]) -> Engine:
    """The first serving source's engine (with server_info's version), else llama-server; every server
    digest the rows carry becomes ``binaries``, which provenance binding checks against the pins."""
    if serving:
        server = _first_server(serving)
        return Engine(name=serving[0][0].engine, version=server.version if server else None)
    digests = sorted({run.server_sha for run in requests if run.server_sha})
    return Engine(name="llama-server", binaries=digests)


def _prompt_set(serving: Serving, requests: Sequence[MeasuredRequest]) -> PromptSet:
    """Named after bench_serving's dataset (or the rows' prompts) and counted where the runs say how
    many were sent; bench_serving without --output-details does not, so the count stays unknown."""
    if not serving:
        return PromptSet(name="prompts", total=max(1, len({run.prompt for run in requests})))
    source, _, record = serving[0]
    name = record.data.get("dataset_name") or record.data.get("label") or "prompts"
    return PromptSet(name=f"{source.tool} {name}", total=source.sent(record))


# Engine names by the server family whose output they can be; a name in no family (a fork) is not checked.
_ENGINE_FAMILIES = {
    "sglang": {"sglang"},
    "vllm": {"vllm"},
    "llama-server": {"llama-server", "llama.cpp", "ik_llama.cpp"},
}


def _family_of(name: str) -> str | None:
    return next((family for family, names in _ENGINE_FAMILIES.items() if name.lower() in names), None)


def check_engine(engine: Engine, serving: Serving, requests: Sequence[MeasuredRequest]) -> None:
    """Refuse a stated engine that the runs' own content contradicts (vLLM's metrics under ``sglang``)."""
    stated = _family_of(engine.name)
    if stated is None:
        return
    records: list[tuple[Source, Record]] = [(source, record) for source, _, record in serving]
    records += [(_LLAMA_ROWS, run.record) for run in requests[:1]]
    for source, record in records:
        proof = source.served_by(record)
        if proof is not None and proof[0] != stated:
            raise record.error(
                f"run.engine.name is {engine.name!r}, but this {source.tool} output was served by {proof[0]} "
                f"({proof[1]}): set run.engine.name to {proof[0]!r} in the spec, or leave run.engine out "
                "to take it from the runs",
                "engine",
            )


def complete_run(
    spec: EvaluationSpec,
    options: SpecOptions,
    serving: Serving,
    requests: Sequence[MeasuredRequest],
) -> Run:
    """The spec's ``run`` with every missing part filled in from options and the runs."""
    given = spec.run
    hardware = given.hardware or (
        Hardware(id=_slug(options.hardware), name=options.hardware) if options.hardware else None
    )
    if hardware is None:
        raise BuildError("no hardware: pass --hardware NAME (or run.hardware in a --spec file)")
    target = given.target or (_target(options.target) if options.target else None)
    served = next((model for source, _, record in serving if (model := source.model(record))), None)
    if target is None and served:
        target = Target(repo_id=served)
    if target is None:
        raise BuildError("no target: pass --target REPO[@COMMIT] (or run.target in a --spec file)")
    engine = given.engine or _engine(serving, requests)
    check_engine(engine, serving, requests)
    prompt_set = given.prompt_set or _prompt_set(serving, requests)
    return Run(
        hardware=hardware,
        engine=engine,
        target=target,
        drafter=given.drafter,
        serving=given.serving,
        prompt_set=prompt_set,
        date=given.date,
    )


def complete_configurations(spec: EvaluationSpec, serving: Serving) -> list[Configuration]:
    """The spec's configurations, else one per run name in order of appearance, described by its server_info."""
    if spec.configurations:
        return list(spec.configurations)
    configurations: dict[str, Configuration] = {}
    for source, override, record in serving:
        name = run_name(source, override, record)
        if name not in configurations:
            configurations[name] = infer_configuration(name, source.server(record), source.speculated(record))
    return list(configurations.values())


def complete_analysis(
    spec: EvaluationSpec, options: SpecOptions, requests: Sequence[MeasuredRequest]
) -> tuple[list[ComparisonSpec], list[SweepSpec]]:
    """The spec's comparisons and sweeps, else: an A/B of --baseline/--treatment (or of the only two arms),
    and a sweep of every other arm measured at several n_max values."""
    primary = parse_primary(options.primary)
    fit_range = parse_fit_range(options.fit_range)
    arms = list(dict.fromkeys(run.arm for run in requests))
    comparisons = [complete_arms(c, requests) for c in spec.comparisons]
    if not comparisons and (pair := _ab_pair(options, arms)) is not None:
        comparisons.append(_comparison(pair, requests, primary))
    sweeps = [
        s if s.fit_range is not None or fit_range is None else s.model_copy(update={"fit_range": fit_range})
        for s in spec.sweeps
    ]
    if spec.comparisons or spec.sweeps:
        return comparisons, sweeps
    compared = {arm for c in comparisons for arm in (c.baseline, c.treatment)}
    for arm in arms:
        settings = sorted({run.n_max for run in requests if run.arm == arm})
        if arm in compared or len(settings) < 2:
            continue
        pairs = []
        if primary is not None and primary[1] != 0 and {0, primary[1]} <= set(settings):
            pairs.append(
                SettingPairSpec(
                    id=f"{arm}-on-off",
                    title=f"{arm}: n_max {primary[1]} against speculation off",
                    baseline=0,
                    treatment=primary[1],
                )
            )
        sweeps.append(
            SweepSpec(
                id=f"{arm}-sweep", title=f"{arm} across n_max", arm=arm, pairs=pairs, fit_range=fit_range
            )
        )
    return comparisons, sweeps


def _ab_pair(options: SpecOptions, arms: Sequence[str]) -> tuple[str, str] | None:
    if options.baseline or options.treatment:
        if not (options.baseline and options.treatment):
            raise InputError("--baseline and --treatment go together")
        for arm in (options.baseline, options.treatment):
            if arm not in arms:
                raise BuildError(f"no llama-server rows for arm {arm!r} (arms: {', '.join(arms) or 'none'})")
        return options.baseline, options.treatment
    if len(arms) == 2:
        first, second = sorted(arms)
        return first, second
    return None


def _row_drafter(arm: str, requests: Sequence[MeasuredRequest]) -> Drafter | None:
    """The drafter file and digest (or prefix) the arm's rows name, so an inferred arm keeps them."""
    run = next((r for r in requests if r.arm == arm and (r.drafter or r.drafter_sha)), None)
    if run is None:
        return None
    digest = run.drafter_sha
    full = digest if digest is not None and len(digest) == 64 else None
    return Drafter(
        name=run.drafter or arm,
        file=run.drafter,
        sha256=full,
        sha256_prefix=digest if full is None else None,
    )


def _conflict(stated: Drafter, carried: Drafter) -> str | None:
    """How the drafter the rows carry is not the stated one (file name or digest), else None."""
    if stated.file and carried.file and PurePosixPath(stated.file).name != PurePosixPath(carried.file).name:
        return f"file {carried.file} (stated: {stated.file})"
    mine, theirs = stated.sha256 or stated.sha256_prefix, carried.sha256 or carried.sha256_prefix
    if mine and theirs and not (mine.startswith(theirs) or theirs.startswith(mine)):
        return f"sha256 {theirs} (stated: {mine})"
    return None


def _merged(stated: Drafter | None, carried: Drafter | None) -> Drafter | None:
    """The stated drafter with the file and digest the rows carry where it states none."""
    if stated is None or carried is None:
        return stated or carried
    update: dict[str, str | None] = {"file": stated.file or carried.file}
    if not (stated.sha256 or stated.sha256_prefix):
        update |= {"sha256": carried.sha256, "sha256_prefix": carried.sha256_prefix}
    return stated.model_copy(update=update)


def complete_arms(comparison: ComparisonSpec, requests: Sequence[MeasuredRequest]) -> ComparisonSpec:
    """A spec comparison's arms with the drafter file, digest and boots their rows carry filled in.

    An arm whose stated drafter or boots contradict its rows is refused, naming the arm whose rows do
    match: labels swapped between boots would otherwise flip the sign of every difference.
    """
    carried = {arm.id: _row_drafter(arm.id, requests) for arm in comparison.arms}
    booted = {arm.id: sorted({r.boot for r in requests if r.arm == arm.id}) for arm in comparison.arms}
    arms = []
    for arm in comparison.arms:
        rows = [r for r in requests if r.arm == arm.id]
        mine = carried[arm.id]
        problem = _conflict(arm.drafter, mine) if arm.drafter is not None and mine is not None else None
        if problem is None and arm.boots and booted[arm.id] and arm.boots != booted[arm.id]:
            problem = f"boots {booted[arm.id]} (stated: {arm.boots})"
        if problem is not None:
            match = [
                other
                for other in comparison.arms
                if other.id != arm.id
                and (
                    arm.drafter is None
                    or (d := carried[other.id]) is None
                    or _conflict(arm.drafter, d) is None
                )
                and (not arm.boots or booted[other.id] == arm.boots)
            ]
            swapped = (
                f"; the rows of arm {match[0].id!r} match it, so the arm labels look swapped" if match else ""
            )
            raise rows[0].record.error(
                f"comparison {comparison.id!r}: the rows of arm {arm.id!r} ran {problem}{swapped}; "
                "fix the rows' arm column or the spec's arms",
                rows[0].sha_columns[0] if "sha256" in problem else "arm",
            )
        arms.append(
            arm.model_copy(
                update={"drafter": _merged(arm.drafter, mine), "boots": arm.boots or booted[arm.id]}
            )
        )
    return comparison.model_copy(update={"arms": arms})


def _comparison(
    pair: tuple[str, str], requests: Sequence[MeasuredRequest], primary: tuple[str, Setting] | None
) -> ComparisonSpec:
    """The A/B of two arms; its design (prompts, repetitions, boot order) is counted from the rows by
    ``analysis.derive_design``."""
    baseline, treatment = pair
    boots = {arm: sorted({run.boot for run in requests if run.arm == arm}) for arm in pair}
    return ComparisonSpec(
        id=f"{treatment}-vs-{baseline}",
        title=f"{treatment} against {baseline}",
        baseline=baseline,
        treatment=treatment,
        arms=[Arm(id=arm, label=arm, boots=boots[arm], drafter=_row_drafter(arm, requests)) for arm in pair],
        primary_setting=primary[1] if primary else None,
    )
