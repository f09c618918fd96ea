"""What ``hubrelease build eval`` cannot read from raw benchmark output: run metadata and the analysis plan.

Raw bench_serving lines and llama-server rows carry numbers, not the hardware, engine commit,
target revision or which arms form the preregistered comparison. Options (``--hardware``,
``--target``, ``--baseline/--treatment/--primary``) cover the common case; a spec file (YAML or
JSON) states the rest once. The builder adds every number.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from hubrelease.errors import InputError
from hubrelease.evaluation.models import (
    Arm,
    Configuration,
    Design,
    Drafter,
    Engine,
    Hardware,
    PromptSet,
    ServingSettings,
    Setting,
    Target,
    _Strict,
    check_configuration_ids,
)
from hubrelease.evaluation.records import read_text
from hubrelease.manifest.load import screen_yaml
from hubrelease.validation import every_line


class ComparisonSpec(_Strict):
    """A paired A/B across arms, one result row per value of ``setting_name``."""

    id: str
    """Identifier of the comparison in the output."""
    title: str
    """Display title."""
    baseline: str
    """Arm id (the rows' ``arm`` value) of the baseline."""
    treatment: str
    """Arm id of the treatment."""
    arms: list[Arm] = Field(min_length=2)
    """Labels and drafters of the arms; ids must match the rows' ``arm`` values."""
    setting_name: str = "n_max"
    """Setting that varies across rows."""
    primary_setting: Setting | None = None
    """Setting value of the preregistered primary endpoint."""
    design: Design | None = None
    """How the runs were laid out (boot order, prompts, repetitions)."""
    notes: list[str] = Field(default_factory=list)
    """Caveats copied into the output."""

    @model_validator(mode="after")
    def _check_arms(self) -> ComparisonSpec:
        ids = [arm.id for arm in self.arms]
        if len(set(ids)) != len(ids):
            raise ValueError(f"arm ids repeat: {ids}")
        for which in (self.baseline, self.treatment):
            if which not in ids:
                raise ValueError(f"arm {which!r} is not one of {ids}")
        if self.baseline == self.treatment:
            raise ValueError(f"baseline and treatment are the same arm {self.baseline!r}")
        return self


class SettingPairSpec(_Strict):
    """A paired comparison between two values of the swept setting, within one arm and boot."""

    id: str
    """Identifier of the comparison in the output."""
    title: str
    """Display title."""
    baseline: Setting
    """Baseline setting value (e.g. n_max 0: speculation off)."""
    treatment: Setting
    """Treatment setting value."""
    notes: list[str] = Field(default_factory=list)
    """Caveats copied into the output."""

    @model_validator(mode="after")
    def _check_settings(self) -> SettingPairSpec:
        if self.baseline == self.treatment:
            raise ValueError(f"baseline and treatment are the same setting {self.baseline!r}")
        return self


class SweepSpec(_Strict):
    """Throughput of one arm across values of ``setting_name``."""

    id: str
    """Identifier of the sweep in the output."""
    title: str
    """Display title."""
    arm: str
    """Arm id of the rows that form the sweep."""
    setting_name: str = "n_max"
    """The swept setting."""
    drafter: Drafter | None = None
    """Drafter measured."""
    pairs: list[SettingPairSpec] = Field(default_factory=list)
    """Paired comparisons between settings of the sweep (e.g. on vs off)."""
    fit_range: tuple[float, float] | None = None
    """[min, max] settings of the step-time fit (default: every setting that speculated)."""
    notes: list[str] = Field(default_factory=list)
    """Caveats copied into the output."""


class RunSpec(_Strict):
    """``run`` of a spec: every part optional, since ``build eval`` infers or takes from options what is left out."""

    hardware: Hardware | None = None
    """Machine (or ``--hardware NAME``)."""
    engine: Engine | None = None
    """Serving engine (default: sglang with server_info's version for bench_serving, else llama-server)."""
    target: Target | None = None
    """Target model (or ``--target REPO[@REVISION]``; bench_serving: server_info's model_path)."""
    drafter: Drafter | None = None
    """The drafter this evaluation is about."""
    serving: ServingSettings = Field(default_factory=ServingSettings)
    """Server and request settings."""
    prompt_set: PromptSet | None = None
    """Prompts sent (default: named after bench_serving's dataset_name, or the rows' prompt ids, and counted)."""
    date: str | None = None
    """Measurement date (ISO 8601)."""


class EvaluationSpec(_Strict):
    """Input to ``hubrelease build eval`` besides the raw runs, all optional: it adds what the runs cannot
    say. Configurations default to the runs' names (CONFIG=PATH, ``tag``, file stem) with method and
    drafter from ``server_info``; comparisons and sweeps default to what the options and the rows give."""

    schema_version: Literal[1] = 1
    """Schema version; always 1."""
    title: str | None = None
    """Display title (or ``--title``)."""
    run: RunSpec = Field(default_factory=RunSpec)
    """Hardware, engine, target, drafter, settings and prompts."""
    configurations: list[Configuration] = Field(default_factory=list)
    """Serving configurations of the matrix, in table order (default: inferred)."""
    notes: list[str] = Field(default_factory=list)
    """Caveats that apply to every number in the file."""
    comparisons: list[ComparisonSpec] = Field(default_factory=list)
    """Paired A/B comparisons to compute from llama-server rows (or ``--baseline/--treatment``)."""
    sweeps: list[SweepSpec] = Field(default_factory=list)
    """Sweeps to compute from llama-server rows (default: every arm measured at several settings)."""
    prompt_categories: dict[str, str] = Field(default_factory=dict)
    """Prompt -> category (language, think mode, task): keys are llama-server prompt ids,
    llama-spec-bench task names, or bench_serving request indices from 0 (its per-request arrays are
    in the order the requests were sent). A row's own category column wins; the two may not differ."""

    @model_validator(mode="after")
    def _check_configurations(self) -> EvaluationSpec:
        check_configuration_ids(self.configurations)
        return self


class SpecError(InputError):
    """Every problem of a spec file at once, one ``FILE:LINE: field: message`` line each."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.problems = lines

    def lines(self) -> list[str]:
        return self.problems


def _ruamel_tree(text: str, file: Path) -> Any:
    """ruamel's tree of a spec libyaml leaves to it, or one line: invalid YAML, or not a mapping."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        tree = YAML(typ="rt").load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError("invalid YAML/JSON", path=file, line=mark.line + 1 if mark else None) from None
    if not isinstance(tree, dict):
        raise InputError("a spec must be a YAML mapping", path=file, line=1)
    return tree


def load_spec(path: str | Path) -> EvaluationSpec:
    """Read a spec file (YAML or JSON); all validation errors are reported together, with their lines."""
    file = Path(path)
    text = read_text(file, "a spec file (YAML or JSON)")
    if not text.strip():
        return EvaluationSpec()
    data, line_for = screen_yaml(text, file, lambda slow: _ruamel_tree(slow, file))
    try:
        return EvaluationSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(every_line(exc, file, "hubrelease schema --eval-spec", line_for)) from None
