"""A claim's sentence carries the conditions and unit of the row it quotes."""

from __future__ import annotations

from pathlib import Path

from hubrelease.card.claims import compute_claims
from hubrelease.card.locator import Locator
from hubrelease.card.render import render_card
from hubrelease.evaluation import Evaluation
from hubrelease.manifest import load_manifest
from tests.factories.cards import ab_evaluation, gguf_card, write_card_release


def test_a_comparison_claim_states_its_setting_unit_and_role(tmp_path: Path) -> None:
    card_section = {**gguf_card(), "usage": []}  # no command: the release has no recommended file
    manifest = write_card_release(tmp_path, card=card_section, evaluations={"eval/ab.json": ab_evaluation()})
    card = load_manifest(manifest).card
    assert card is not None
    (claim,) = compute_claims(
        card, {"eval/ab.json": Evaluation.model_validate(ab_evaluation())}, Locator(manifest)
    ).values()
    assert (claim.setting, claim.unit) == ("n_max=3", "output tok/s")
    text = render_card(manifest)
    assert (
        "On Test GPU at n_max=3, retrained measured 22.95 output tok/s against 21.63 output tok/s for upstream, "
        "a 6.1% increase (paired difference +1.315 output tok/s, 95% CI [0.360, 2.270]"
    ) in text
    # Four boots: the interval is conditional on them. No preregistration named: "primary", not "preregistered".
    assert "n = 8, across 4 boots and conditional on them, the primary endpoint)." in text
    assert "preregistered" not in text


def test_only_a_named_preregistration_makes_the_primary_preregistered(tmp_path: Path) -> None:
    evaluation = ab_evaluation()
    evaluation["comparisons"][0]["design"]["preregistration"] = "bench/PREREGISTRATION.md"
    card_section = {**gguf_card(), "usage": []}
    manifest = write_card_release(tmp_path, card=card_section, evaluations={"eval/ab.json": evaluation})
    assert "across 4 boots and conditional on them, the preregistered primary endpoint)." in render_card(
        manifest
    )


def test_a_comparison_of_settings_names_the_one_drafter_file_it_ran(tmp_path: Path) -> None:
    """Both arms ran one file (speculation on against off): the claim says which file it measured."""
    evaluation = ab_evaluation()
    upstream, retrained = evaluation["comparisons"][0]["arms"]
    retrained["drafter"] = dict(upstream["drafter"])
    card_section = {**gguf_card(), "usage": []}
    manifest = write_card_release(tmp_path, card=card_section, evaluations={"eval/ab.json": evaluation})
    assert "On Test GPU at n_max=3 with `a.gguf`, retrained measured" in render_card(manifest)
