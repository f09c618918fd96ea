"""Evaluation files: models, loading with field-accurate errors, JSON Schema, statistics, claims."""

from hubrelease.evaluation.claims import RelativeGain, cell_gain, comparison_gain
from hubrelease.evaluation.load import load_evaluation
from hubrelease.evaluation.models import SCHEMA_VERSION, Cell, Comparison, Evaluation, Sweep
from hubrelease.evaluation.schema import evaluation_json_schema

__all__ = [
    "SCHEMA_VERSION",
    "Cell",
    "Comparison",
    "Evaluation",
    "RelativeGain",
    "Sweep",
    "cell_gain",
    "comparison_gain",
    "evaluation_json_schema",
    "load_evaluation",
]
