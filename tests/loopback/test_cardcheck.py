"""validate-yaml's checks of a card on hostile front matter: one message, never an exception."""

from __future__ import annotations

import pytest

from hubrelease.hub_licenses import is_hub_license
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


def test_cards_are_checked_against_the_hubs_licence_ids_not_the_clients_list() -> None:
    """``llama4`` is one of the Hub's documented ids that the client's own list lacks: the rehearsal
    Hub accepts it as the Hub does, and an id the Hub does not know is still refused."""
    assert not is_hub_license("llama4")
    assert metadata_errors("---\nlicense: llama4\n---\n# Card\n", "model") == []
    assert metadata_errors("---\nlicense: not-a-licence\n---\n# Card\n", "model") == [
        '"license": \'not-a-licence\' is not one of the Hub\'s licence ids (or "other")'
    ]


@pytest.mark.parametrize(("relation", "errors"), [("merge", 0), ("quantized", 0), ("distilled", 1)])
def test_a_base_model_relation_is_one_of_the_four_the_hub_documents(relation: str, errors: int) -> None:
    card = f"---\nbase_model: acme/base\nbase_model_relation: {relation}\n---\n# Card\n"
    assert len(metadata_errors(card, "model")) == errors
