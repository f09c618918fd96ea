"""The fidelity table of the rehearsal-Hub guide is what running every probe against a loopback Hub gives
(``scripts/fidelity_table.py`` writes it), and no operation the Hub has is missing here."""

from __future__ import annotations

from pathlib import Path

from tests.factories.fidelity import BEGIN, END, markdown, run


def test_the_guide_table_is_what_a_run_gives(tmp_path: Path, repo_root: Path) -> None:
    rows = run(tmp_path)
    assert [name for name, result in rows if result.startswith("missing")] == []
    page = (repo_root / "docs" / "how-to" / "rehearsal-hub.md").read_text(encoding="utf-8")
    assert page[page.index(BEGIN) : page.index(END) + len(END)] == markdown(rows)
