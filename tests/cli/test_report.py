"""One release, one count: verify, sign, push's plan and ``verify --remote`` say the same number."""

from __future__ import annotations

import pytest

from hubrelease.cli.report import counted

PINNED = ["model.safetensors", "config.json", "README.md"]


@pytest.mark.parametrize(
    ("paths", "said"),
    [
        (PINNED, "4 files: hubrelease.yaml and the 3 it pins"),  # verify: the manifest is the reference
        ([*PINNED, "hubrelease.yaml"], "4 files: hubrelease.yaml and the 3 it pins"),  # sign, verify --remote
        (
            [*PINNED, "hubrelease.yaml", "model.sig"],
            "4 files: hubrelease.yaml and the 3 it pins, plus model.sig",
        ),  # push's plan of a signed release
    ],
)
def test_a_count_is_the_release_s_whatever_part_a_command_compared(paths: list[str], said: str) -> None:
    assert counted(paths, "some/folder/hubrelease.yaml") == said
