"""Signature statements only a hostile signer writes, with a signature that checks out: any value in
any field of the in-toto statement (resources, digests, serialization, ``ignore_paths``, subject),
payloads that are not JSON, and bundles that are not UTF-8 or not JSON. ``verify --signature``
meets the contract (tests/fuzz/harness.py) and, on every case, gives the verdict
``model_signing verify key`` gives (its click main, in process).
"""

from __future__ import annotations

import base64
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner as ClickRunner
from hypothesis import given
from hypothesis import strategies as st
from model_signing._cli import main as model_signing_cli

from tests.factories.signing import SignedDownload, sign_raw_statement, signed_download
from tests.fuzz.harness import fuzz, run_case
from tests.fuzz.values import set_path, values

FIELDS = (
    ("_type",),
    ("subject",),
    ("subject", 0, "digest", "sha256"),
    ("predicateType",),
    ("predicate",),
    ("predicate", "serialization", "ignore_paths"),
    ("predicate", "serialization", "ignore_paths", 0),
    ("predicate", "serialization", "method"),
    ("predicate", "serialization", "hash_type"),
    ("predicate", "serialization", "allow_symlinks"),
    ("predicate", "resources"),
    ("predicate", "resources", 0, "name"),
    ("predicate", "resources", 0, "digest"),
    ("predicate", "resources", 0, "algorithm"),
)
PATHS = st.sampled_from(
    ["", "/", "..", ".", "../x", "bench", "bench/..", "config.json", "a//b", "\x00", "\ud800"]
)


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> SignedDownload:
    return signed_download(tmp_path_factory.mktemp("fuzz-signing"), "ab" * 32)


def _statement(folder: Path) -> dict[str, Any]:
    bundle = json.loads((folder / "model.sig").read_text(encoding="utf-8"))
    return dict(json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"])))


def _agree(folder: Path, signed: SignedDownload) -> None:
    """model_signing first, on the folder as it came: hubrelease then adds its own state folder."""
    args = ["verify", "key", str(folder), "--signature", str(folder / "model.sig")]
    reference = ClickRunner().invoke(model_signing_cli, [*args, "--public_key", str(signed.keys.public)])
    manifest = folder / "hubrelease.yaml"
    result = run_case(["verify", manifest, "--signature", "--public-key", signed.keys.public], folder)
    assert (result.exit_code == 0) == (reference.exit_code == 0), (result.stdout, reference.output)


@fuzz(30)
@given(field=st.sampled_from(FIELDS), value=st.one_of(values, PATHS, PATHS.map(lambda p: [p])))
def test_any_statement_value(signed: SignedDownload, field: tuple[str | int, ...], value: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "download"
        shutil.copytree(signed.folder, folder)
        data = _statement(folder)
        set_path(data, field, value)
        text = json.dumps(data, allow_nan=True, ensure_ascii=False)
        sign_raw_statement(folder, signed.keys, text.encode("utf-8", errors="surrogatepass"))
        _agree(folder, signed)


@fuzz(10)
@given(payload=st.one_of(st.binary(max_size=64), st.sampled_from([b"", b"null", b"[]", b"{}", b"\xff\xfe{"])))
def test_any_payload_bytes(signed: SignedDownload, payload: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "download"
        shutil.copytree(signed.folder, folder)
        sign_raw_statement(folder, signed.keys, payload)
        _agree(folder, signed)


@fuzz(10)
@given(cut=st.integers(0, 4000), prefix=st.sampled_from([b"", b"\xff", b"\xef\xbb\xbf", b"\x00"]))
def test_any_damaged_bundle(signed: SignedDownload, cut: int, prefix: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "download"
        shutil.copytree(signed.folder, folder)
        bundle = folder / "model.sig"
        bundle.write_bytes(prefix + bundle.read_bytes()[:cut])
        _agree(folder, signed)
