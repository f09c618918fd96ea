"""``redaction.redact``: tokens, credentials and URL userinfo out of every printed line."""

from __future__ import annotations

import pytest

from hubrelease import redaction


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("token hf_abcdefghijklmnopqrstuvwxyz0123 used", "token *** used"),
        ("Authorization: Bearer abc.def-123456", "Authorization: Bearer ***"),
        ('{"authorization": "Bearer opaque-value-42"}', '{"authorization": "Bearer ***"}'),
        (
            "http://user:pass@127.0.0.1:8/x and https://tok@host/y",
            "http://***@127.0.0.1:8/x and https://***@host/y",
        ),
        ("api_org_ABCDEFGHIJKLMNOPQRSTUV", "***"),
        (
            "bearer abcdefgh then https://u:p@h/x then hf_abcdefghijklmnopqrstuvwxyz0123",
            "bearer *** then https://***@h/x then ***",
        ),
        # Not credentials: identifiers, prose, digests.
        ("hf_hub_download and hf_xet", "hf_hub_download and hf_xet"),
        ("the write token (token expired)", "the write token (token expired)"),
        ("basic multipart transfers", "basic multipart transfers"),
        ("sha256 " + "ab" * 32, "sha256 " + "ab" * 32),
    ],
)
def test_redact(text: str, expected: str) -> None:
    assert redaction.redact(text) == expected


def test_configured_token_values_of_any_shape_are_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "plain-env-secret")
    redaction.remember("cli-given-secret")
    assert redaction.redact("a plain-env-secret b cli-given-secret c") == "a *** b *** c"
