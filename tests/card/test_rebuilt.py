"""The card's Reproducibility section names every file rebuild re-makes and counts the figures it compares."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hubrelease.card import render_card
from tests.factories.cards import write_card_release
from tests.factories.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "manifests" / "example"


def test_the_example_card_lists_what_rebuild_checks_and_the_same_figure_count() -> None:
    card = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    section = card.split("## Reproducibility\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| ([\w-]+) \| .* \| (.+) \|$", section, flags=re.M)
    code, out, err = run_cli(
        "rebuild", EXAMPLE / "hubrelease.yaml", "--json", "--inputs", EXAMPLE.parent / "example-target"
    )
    assert code == 0, err
    report = json.loads(out)
    expected = [
        (r["path"], r["builder"], f"{r['figures']['compared']} figures" if "figures" in r else "bytes")
        for r in report["results"]
    ]
    assert rows == expected
    assert "gguf 0.19.0" in section  # the recipes' tool versions


def test_a_release_without_recipes_has_no_section(tmp_path: Path) -> None:
    card = render_card(write_card_release(tmp_path))
    assert "## Reproducibility" not in card
