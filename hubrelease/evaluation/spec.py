"""What ``hubrelease build eval`` cannot read from raw benchmark output: run metadata and the analysis plan.

Raw bench_serving lines and llama-server rows carry numbers, not the hardware, engine commit,
target revision or which arms form the preregistered comparison. The spec file (YAML or JSON)
states those once; the builder adds every number.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, model_validator
from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from hubrelease.errors import InputError
from hubrelease.evaluation.load import validate_model
from hubrelease.evaluation.models import Arm, Design, Drafter, EvaluationHeader, Setting, _Strict
from hubrelease.evaluation.records import read_text


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


class EvaluationSpec(EvaluationHeader):
    """Input to ``hubrelease build eval`` besides the raw runs; bench_serving runs name their
    configuration by ``tag`` or CONFIG=PATH."""

    comparisons: list[ComparisonSpec] = Field(default_factory=list)
    """Paired A/B comparisons to compute from llama-server rows."""
    sweeps: list[SweepSpec] = Field(default_factory=list)
    """Sweeps to compute from llama-server rows."""


def load_spec(path: str | Path) -> EvaluationSpec:
    """Read a spec file (YAML or JSON)."""
    file = Path(path)
    text = read_text(file, "a spec file (YAML or JSON)")
    try:
        data = YAML(typ="safe").load(text)
    except YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError("invalid YAML/JSON", path=file, line=mark.line + 1 if mark else None) from None
    return validate_model(EvaluationSpec, data, file)
