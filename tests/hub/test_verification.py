"""``verify`` as one library call: the Hub is asked for only where the check reads it."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import HfApi

from hubrelease.errors import InputError
from hubrelease.hub.verification import Trust, VerifyRequest, verify_release
from tests.factories.releases import write_release
from tests.factories.signing import ec_key_pair


def _no_hub() -> HfApi:
    raise AssertionError("a local check asked for the Hub")


def test_a_local_verify_opens_no_hub_session(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    report = verify_release(VerifyRequest(manifest), _no_hub)
    assert report.mode == "local" and not report.has_drift
    (tmp_path / "config.json").write_text("[]\n")
    assert [f.kind for f in verify_release(VerifyRequest(manifest), _no_hub).errors] == ["size_mismatch"]


def test_a_sums_file_is_not_checked_against_a_signature(tmp_path: Path) -> None:
    sums = tmp_path / "SHA256SUMS"
    sums.write_text(f"{'0' * 64}  model.bin\n")
    keys = ec_key_pair(tmp_path / "keys")
    with pytest.raises(InputError, match="--signature checks a release against its manifest"):
        verify_release(VerifyRequest(sums, trust=Trust(public_key=keys.public)), _no_hub)
    assert [f.kind for f in verify_release(VerifyRequest(sums), _no_hub).errors] == ["missing"]


def test_trust_options_are_checked_against_each_other_before_any_file(tmp_path: Path) -> None:
    trust = Trust(public_key=tmp_path / "pub.pem", manifest="acme/x@" + "a" * 40)
    with pytest.raises(
        InputError, match="--trust-manifest takes the signer from that manifest: drop --public-key"
    ):
        verify_release(VerifyRequest(tmp_path / "absent.yaml", trust=trust), _no_hub)
