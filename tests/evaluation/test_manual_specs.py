"""The measured-data manual's commented example specs are valid specs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hubrelease.evaluation.spec import load_spec

PAGE = Path(__file__).resolve().parents[2] / "docs" / "manual" / "measured-data.md"
SECTION = PAGE.read_text(encoding="utf-8").split("## `hubrelease build eval`", 1)[1].split("\n## ", 1)[0]
BLOCKS = re.findall(r"```yaml\n(.*?)```", SECTION, flags=re.S)


def test_the_section_has_an_example_for_each_source() -> None:
    assert [block.splitlines()[0].split()[1] for block in BLOCKS] == ["eval-spec.yaml", "ab-spec.yaml"]


@pytest.mark.parametrize("block", BLOCKS, ids=["bench_serving", "llama-server"])
def test_example_spec_loads(block: str, tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(block, encoding="utf-8")
    spec = load_spec(path)
    assert spec.run.hardware is not None and spec.run.engine is not None
