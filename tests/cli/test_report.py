"""One release counted by what each command covers: the files the manifest pins, the manifest, model.sig."""

from __future__ import annotations

import pytest

from hubrelease.cli.report import counted

PINNED = ["model.safetensors", "config.json", "README.md"]


@pytest.mark.parametrize(
    ("paths", "said"),
    [
        (PINNED, "3 files pinned by hubrelease.yaml"),  # verify
        ([*PINNED, "hubrelease.yaml"], "4 files: hubrelease.yaml and the 3 it pins"),  # sign, verify --remote
        (
            [*PINNED, "hubrelease.yaml", "model.sig"],
            "5 files: hubrelease.yaml, the 3 it pins and model.sig",
        ),  # push
        ([*PINNED, "model.sig"], "4 files: the 3 hubrelease.yaml pins and model.sig"),
    ],
)
def test_a_count_says_what_it_counts(paths: list[str], said: str) -> None:
    assert counted(paths, "some/folder/hubrelease.yaml") == said
