"""validate-yaml's checks of a card on hostile front matter: one message, never an exception."""

from __future__ import annotations

import pytest

from hubrelease_loopback.cardcheck import metadata_errors
from tests.factories.cards import HOSTILE_FRONT_MATTER, alias_bomb


def test_an_alias_bomb_is_refused_before_huggingface_hub_expands_it() -> None:
    assert metadata_errors(alias_bomb(width=2, levels=21), "model") == [
        "invalid YAML in the front matter: YAML aliases expand to more than 1,000,000 values (an alias bomb?)"
    ]


@pytest.mark.parametrize(
    "card", ["eval_results_false", "model_index_scalar", "model_index_string", "deep_flow", "deep_block"]
)
def test_front_matter_of_the_wrong_shape_is_one_message(card: str) -> None:
    [message] = metadata_errors(HOSTILE_FRONT_MATTER[card], "model")  # main: TypeError, RecursionError
    assert message.startswith(("invalid front matter: ", "invalid YAML in the front matter: "))
