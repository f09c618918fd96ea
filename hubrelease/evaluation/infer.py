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

from hubrelease.errors import BuildError, InputError
from hubrelease.evaluation.ingest_llama_server import Request
from hubrelease.evaluation.ingest_sglang import ServerInfo, infer_configuration, run_name
from hubrelease.evaluation.models import (
    Arm,
    Configuration,
    Design,
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


@dataclass(frozen=True)
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


def _first_server(serving: Sequence[tuple[str | None, Record]]) -> ServerInfo | None:
    return next((info for _, record in serving if (info := ServerInfo.of(record)) is not None), None)


def complete_run(
    spec: EvaluationSpec,
    options: SpecOptions,
    serving: Sequence[tuple[str | None, Record]],
    requests: Sequence[Request],
) -> Run:
    """The spec's ``run`` with every missing part filled in from options and the runs."""
    given = spec.run
    hardware = given.hardware or (
        Hardware(id=_slug(options.hardware), name=options.hardware) if options.hardware else None
    )
    if hardware is None:
        raise BuildError("no hardware: pass --hardware NAME (or run.hardware in a --spec file)")
    server = _first_server(serving)
    target = given.target or (_target(options.target) if options.target else None)
    if target is None and server is not None and server.model:
        target = Target(repo_id=server.model)
    if target is None:
        raise BuildError("no target: pass --target REPO[@COMMIT] (or run.target in a --spec file)")
    engine = given.engine
    if engine is None:
        engine = (
            Engine(name="sglang", version=server.version if server else None)
            if serving
            else Engine(name="llama-server")
        )
    prompt_set = given.prompt_set
    if prompt_set is None:
        if serving:
            record = serving[0][1]
            lens = record.data.get("output_lens")
            total = len(lens) if isinstance(lens, list) and lens else record.integer("completed", minimum=1)
            prompt_set = PromptSet(
                name=f"bench_serving {record.data.get('dataset_name') or 'prompts'}", total=total
            )
        else:
            prompt_set = PromptSet(name="prompts", total=max(1, len({run.prompt for run in requests})))
    return Run(
        hardware=hardware,
        engine=engine,
        target=target,
        drafter=given.drafter,
        serving=given.serving,
        prompt_set=prompt_set,
        date=given.date,
    )


def complete_configurations(
    spec: EvaluationSpec, serving: Sequence[tuple[str | None, Record]]
) -> list[Configuration]:
    """The spec's configurations, else one per run name in order of appearance, described by its server_info."""
    if spec.configurations:
        return list(spec.configurations)
    configurations: dict[str, Configuration] = {}
    for override, record in serving:
        name = run_name(override, record)
        if name not in configurations:
            configurations[name] = infer_configuration(name, ServerInfo.of(record))
    return list(configurations.values())


def complete_analysis(
    spec: EvaluationSpec, options: SpecOptions, requests: Sequence[Request]
) -> tuple[list[ComparisonSpec], list[SweepSpec]]:
    """The spec's comparisons and sweeps, else: an A/B of --baseline/--treatment (or of the only two arms),
    and a sweep of every other arm measured at several n_max values."""
    primary = parse_primary(options.primary)
    fit_range = parse_fit_range(options.fit_range)
    arms = list(dict.fromkeys(run.arm for run in requests))
    comparisons = list(spec.comparisons)
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


def _comparison(
    pair: tuple[str, str], requests: Sequence[Request], primary: tuple[str, Setting] | None
) -> ComparisonSpec:
    baseline, treatment = pair
    boots = {arm: sorted({run.boot for run in requests if run.arm == arm}) for arm in pair}
    order = sorted((boot, arm) for arm in pair for boot in boots[arm])
    disjoint = len({boot for boot, _ in order}) == len(order)
    mine = [run for run in requests if run.arm in pair]
    return ComparisonSpec(
        id=f"{treatment}-vs-{baseline}",
        title=f"{treatment} against {baseline}",
        baseline=baseline,
        treatment=treatment,
        arms=[Arm(id=arm, label=arm, boots=boots[arm]) for arm in pair],
        primary_setting=primary[1] if primary else None,
        design=Design(
            boot_order=[arm for _, arm in order] if disjoint else [],
            prompts=len({run.prompt for run in mine}),
            repetitions=max(run.repetition for run in mine),
        ),
    )
