"""Conditions stated per measurement: a draft-token count is printed only for the rows it holds for."""

from __future__ import annotations

from typing import Any

from hubrelease.card.tables import DraftTokens, draft_tokens
from hubrelease.evaluation import Evaluation
from tests.factories.cards import ab_evaluation, matrix_evaluation


def _load(data: dict[str, Any]) -> Evaluation:
    return Evaluation.model_validate(data)


def test_rows_that_set_n_max_per_request_are_not_given_the_servers_count() -> None:
    # The run's serving.draft_tokens is 10; the A/B and sweep rows ran at n_max 0 and 3.
    assert draft_tokens(_load(ab_evaluation())) == DraftTokens(per_request=(0, 3))


def test_a_configuration_that_states_no_count_is_not_given_the_runs() -> None:
    data = matrix_evaluation()
    data["run"]["serving"]["draft_tokens"] = None
    data["configurations"].append({"id": "nextn", "label": "NEXTN", "method": "mtp"})
    data["configurations"][1]["draft_tokens"] = 10
    data["cells"] += [
        dict(c, configuration="nextn") for c in data["cells"] if c["configuration"] == "dflash2"
    ]
    assert draft_tokens(_load(data)).by_configuration == ((10, ("DFlash2",)), (None, ("NEXTN",)))
    data["run"]["serving"]["draft_tokens"] = 4  # stated once for the run: every configuration without its own
    assert draft_tokens(_load(data)).by_configuration == ((10, ("DFlash2",)), (4, ("NEXTN",)))
