"""The statement built from known digests is the one model-signing builds by hashing the same folder."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from google.protobuf import json_format
from model_signing import hashing

from hubrelease.errors import CheckFailed, InputError
from hubrelease.signing.signers import SigningMethod, sign_statement
from hubrelease.signing.statement import (
    HF_LOCAL_DIR_CACHE,
    IGNORE_PATHS,
    check_signs,
    differences,
    download_problem,
    payload,
    read_unverified,
    signed_files,
)
from tests.factories.signing import ec_key_pair

# Names whose string order differs from model-signing's (path components compared one by one).
FILES = {
    "a-b": b"1",
    "a/b": b"22",
    "a.b/c": b"333",
    "z": b"",
    "README.md": b"# card\n",
    "w/x/y.safetensors": b"w" * 99,
}


def _digests(files: dict[str, bytes]) -> dict[str, str]:
    return {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}


def test_statement_from_digests_equals_model_signings_hash_of_the_folder(tmp_path: Path) -> None:
    for name, data in FILES.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    hashed = hashing.Config().set_ignored_paths(paths=list(IGNORE_PATHS)).hash(tmp_path)  # type: ignore[no-untyped-call]  # model-signing is unannotated
    ours = payload("acme/model", _digests(FILES))
    theirs = signed_files(hashed)
    statement = json_format.MessageToDict(ours.statement.pb)
    built = statement["predicate"]
    assert [r["name"] for r in built["resources"]] == list(theirs.digests)  # same order, not sorted strings
    assert list(theirs.digests) != sorted(theirs.digests)
    assert {r["name"]: r["digest"] for r in built["resources"]} == theirs.digests == _digests(FILES)
    assert statement["subject"] == [{"name": "acme/model", "digest": {"sha256": theirs.root_digest}}]
    assert statement["predicateType"] == "https://model_signing/signature/v1.0"
    assert built["serialization"] == {
        "method": "files",
        "hash_type": "sha256",
        "allow_symlinks": False,
        "ignore_paths": [
            ".git",
            ".gitattributes",
            ".github",
            ".gitignore",
            HF_LOCAL_DIR_CACHE,
            ".hubrelease",
            "model.sig",
        ],
    }


@pytest.mark.parametrize(
    "path", [".github/workflows/x.yml", ".gitattributes", ".cache/huggingface/a", "model.sig"]
)
def test_a_published_path_model_signing_skips_is_refused(path: str) -> None:
    with pytest.raises(InputError, match="`model_signing verify` skips"):
        payload("acme/model", {path: "0" * 64, "ok.json": "1" * 64})


def test_differences_name_each_way_a_folder_differs_from_the_statement(tmp_path: Path) -> None:
    keys = ec_key_pair(tmp_path)
    signature = tmp_path / "model.sig"
    signature.write_text(sign_statement(SigningMethod(key=keys.private), payload("m", _digests(FILES))))
    signed = read_unverified(signature)
    assert differences(signed, _digests(FILES)) == []
    observed: dict[str, str | None] = dict(_digests(FILES))
    observed["a-b"] = "f" * 64
    observed["new.txt"] = "e" * 64
    observed["z"] = None
    del observed["a/b"]
    assert differences(signed, observed) == [
        ("a-b", f"sha256 {'f' * 64} is not the signed {_digests(FILES)['a-b']}"),
        ("a/b", "signed but not published"),
        ("new.txt", "published but not signed"),
        ("z", "signed, but missing or unreadable"),
    ]
    with pytest.raises(
        CheckFailed, match=r"model.sig does not sign what this push publishes: a-b: .*\(and 3 more\)"
    ):
        check_signs(signature, observed)  # type: ignore[arg-type]


def test_a_statement_without_the_download_cache_ignored_is_reported(tmp_path: Path) -> None:
    """What plain `model_signing sign` writes: a download of the repo would fail on .cache/huggingface/."""
    keys = ec_key_pair(tmp_path)
    model = tmp_path / "model"
    model.mkdir()
    (model / "w.bin").write_bytes(b"w")
    from model_signing import signing

    signing.Config().use_elliptic_key_signer(private_key=keys.private).sign(model, model / "model.sig")  # type: ignore[no-untyped-call]  # model-signing is unannotated
    signed = read_unverified(model / "model.sig")
    assert differences(signed, _digests({"w.bin": b"w"})) == []  # the files are what it signs
    assert download_problem(signed) == (
        "does not ignore .cache/huggingface: `model_signing verify` of an `hf download --local-dir` fails on "
        "the files it keeps there; sign with `hubrelease sign`"
    )
    with pytest.raises(
        CheckFailed, match=r"model\.sig does not sign what this push publishes: model\.sig: does not ignore"
    ):
        check_signs(model / "model.sig", _digests({"w.bin": b"w"}))


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("not json", "not a Sigstore bundle"),
        ('{"dsseEnvelope": {"payloadType": "text/plain", "payload": ""}}', "not in-toto JSON"),
        (
            '{"dsseEnvelope": {"payloadType": "application/vnd.in-toto+json", "payload": "e30="}}',
            "not an OpenSSF",
        ),
    ],
)
def test_a_file_that_is_no_model_signature_is_one_line(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "model.sig"
    path.write_text(text)
    with pytest.raises(InputError, match=reason) as caught:
        read_unverified(path)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "payload", [b"[" * 100_000 + b"]" * 100_000, b'{"a": ' + b"9" * 5000 + b"}"], ids=["deep", "digits"]
)
def test_a_hostile_bundle_or_payload_is_one_input_error(tmp_path: Path, payload: bytes) -> None:
    """On main a 100,000-deep bundle was RecursionError (exit 3); the screen refuses both here."""
    envelope = {"payloadType": "application/vnd.in-toto+json", "payload": base64.b64encode(payload).decode()}
    for name, raw in (
        ("bundle.sig", payload),
        ("payload.sig", json.dumps({"dsseEnvelope": envelope}).encode()),
    ):
        (tmp_path / name).write_bytes(raw)
        with pytest.raises(InputError, match="not a Sigstore bundle with a DSSE envelope"):
            read_unverified(tmp_path / name)
