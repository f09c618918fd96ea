"""Evaluation files: models, loading with field-accurate errors, JSON Schema, statistics, claims.

Exports load lazily (``hubrelease.lazy``): a module that needs the models does not load the readers.
"""

from typing import TYPE_CHECKING

from hubrelease.lazy import exports

if TYPE_CHECKING:
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

__getattr__ = exports(
    __name__,
    {
        "SCHEMA_VERSION": "models",
        "Cell": "models",
        "Comparison": "models",
        "Evaluation": "models",
        "RelativeGain": "claims",
        "Sweep": "models",
        "cell_gain": "claims",
        "comparison_gain": "claims",
        "evaluation_json_schema": "schema",
        "load_evaluation": "load",
    },
)
