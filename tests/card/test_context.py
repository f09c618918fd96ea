"""A prose section read from a pinned Markdown file of the release, placed where the manifest says."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from hubrelease.card import render_card
from hubrelease.errors import HubReleaseError
from tests.factories.cards import safetensors_card, write_card_release
from tests.factories.cli import run_cli

PROSE = "Boots ran in the order A, B, B, A, so drift over the session falls on both arms alike.\n"


def _release(tmp_path: Path, sections: list[dict[str, Any]], pin: bool = True) -> Path:
    card = {**safetensors_card(), "sections": sections}
    manifest = write_card_release(tmp_path, card=card)
    (tmp_path / "card").mkdir()
    (tmp_path / "card" / "design.md").write_text(PROSE)
    tree = yaml.safe_load(manifest.read_text())
    entry: dict[str, Any] = {"path": "card/design.md", "role": "doc"}
    if pin:
        entry |= {"size": len(PROSE), "sha256": hashlib.sha256(PROSE.encode()).hexdigest()}
    tree["artifacts"].append(entry)
    manifest.write_text(yaml.safe_dump(tree, sort_keys=False))
    return manifest


def test_a_pinned_section_is_placed_after_the_measurements(tmp_path: Path) -> None:
    manifest = _release(
        tmp_path,
        [
            {"title": "Counterbalancing", "path": "card/design.md", "place": "evaluation"},
            {"title": "Caveats", "body": "Typed in the manifest."},
        ],
    )
    card = render_card(manifest)
    design = card.index("### Counterbalancing\n\n" + PROSE.strip() + "\n")
    assert card.index("## Evaluation") < design < card.index("## Usage")
    assert card.index("## Caveats\n\nTyped in the manifest.") > card.index("## Checksums") > design
    assert run_cli("render-card", manifest)[0] == 0
    assert run_cli("verify", manifest)[0] == 0
    # Edited prose is another file: verify names its digest.
    (tmp_path / "card" / "design.md").write_text(PROSE + "Also the target was rebuilt.\n")
    code, out, _ = run_cli("verify", manifest)
    assert code == 1 and "card/design.md" in out


def test_a_section_file_must_be_a_pinned_artifact(tmp_path: Path) -> None:
    manifest = _release(tmp_path, [{"title": "Design", "path": "card/design.md"}], pin=False)
    with pytest.raises(HubReleaseError) as info:
        render_card(manifest)
    assert "card.sections[0].path: 'card/design.md' is not an artifact pinned by sha256" in str(info.value)


@pytest.mark.parametrize("section", [{"title": "T"}, {"title": "T", "body": "b", "path": "card/design.md"}])
def test_a_section_has_one_body(tmp_path: Path, section: dict[str, Any]) -> None:
    manifest = _release(tmp_path, [section])
    code, _, err = run_cli("render-card", manifest)
    assert code == 2 and "a section has a body or a path" in err and "Traceback" not in err
