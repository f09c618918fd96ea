"""``REPO[@REV]``: parsed strictly, resolved once, and a repo without a published manifest refused."""

from __future__ import annotations

import pytest

from hubrelease.errors import InputError
from hubrelease.pull.resolve import Ref, parse_ref
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import invoke
from tests.factories.hub import api_for, unique_repo, upload_files


def test_refs_parse_and_bad_ones_are_refused() -> None:
    assert parse_ref("acme/drafter") == Ref("acme/drafter", None)
    assert parse_ref("acme/drafter@v1.0") == Ref("acme/drafter", "v1.0")
    for bad in ("drafter", "acme/drafter@", "acme/drafter@a@b", "acme/../x", "/etc/passwd"):
        with pytest.raises(InputError, match="is not REPO"):
            parse_ref(bad)


def test_a_repo_without_a_published_manifest_is_exit_2_naming_the_commit(hub: LoopbackHub) -> None:
    repo = unique_repo()
    commit = upload_files(api_for(hub), repo, {"model.safetensors": b"\0" * 64})
    result = invoke(["pull", repo, "--endpoint", hub.url])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {repo}@{commit[:12]}: no hubrelease.yaml: not a hubrelease release (nothing pins its files)\n"
    )
