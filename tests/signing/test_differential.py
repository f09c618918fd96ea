"""`hubrelease verify --signature` against the real `model_signing verify key` (its click main, in
process) over a corpus of signed folders: wherever model-signing accepts or refuses, hubrelease does
the same, and never with exit 3.

Each case starts from the example release signed by `hubrelease sign` and laid out as `hf download`
leaves it (the signed files and `model.sig`), then changes one thing: a byte of each file, an added,
removed or renamed file, another key, a damaged bundle, files under paths the manifest or the
signature ignores, a statement with hostile `ignore_paths`, a folder signed by `model_signing sign`.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner as ClickRunner
from model_signing._cli import main as model_signing_cli

from hubrelease.fsutil import STATE_DIR
from hubrelease.lint.target import TARGETS_CACHE
from hubrelease.release_files import SIGNATURE_NAME
from tests.factories.cli import run_cli
from tests.factories.signing import (
    SignedDownload,
    flip_one_byte,
    resign_ignoring,
    sign_raw_statement,
    signed_download,
)

TARGET_HEADER = "ab" * 32
PLANTED = {f"header:{TARGET_HEADER}": {"depth": 2, "hidden": 8, "vocab": 10, "source": "planted"}}
"""Facts of a target with 2 layers and 10 tokens, for the pin the signed manifest holds: 5 lint errors."""


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> SignedDownload:
    return signed_download(tmp_path_factory.mktemp("differential"), TARGET_HEADER)


Change = Callable[[Path, SignedDownload], None]
PUBLISHED = (
    "README.md", "bench/autoregressive.jsonl", "bench/dflash2.jsonl", "bench/eval-spec.yaml",
    "bench/prompts.jsonl", "config.json", "evaluation.json", "hubrelease.yaml", "model.safetensors",
    "tiny-dflash2-q8_0.gguf",
)  # fmt: skip


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _adds(name: str, data: bytes = b"{}\n") -> Change:
    return lambda folder, s: _write(folder / name, data)


def _then(*changes: Change) -> Change:
    def apply(folder: Path, s: SignedDownload) -> None:
        for change in changes:
            change(folder, s)

    return apply


def _flip(name: str) -> Change:
    def apply(folder: Path, s: SignedDownload) -> None:
        flip_one_byte(folder / name)

    return apply


def _resign(paths: list[str]) -> Change:
    return lambda folder, s: resign_ignoring(folder, s.keys, paths)


def _model_signing_sign(folder: Path, s: SignedDownload) -> None:
    """The folder signed by `model_signing sign key` itself: its statement does not ignore the state folder."""
    (folder / SIGNATURE_NAME).unlink()
    args = ["sign", "key", str(folder), "--signature", str(folder / SIGNATURE_NAME)]
    result = ClickRunner().invoke(model_signing_cli, [*args, "--private_key", str(s.keys.private)])
    assert result.exit_code == 0, result.output


def _restated(change: Callable[[dict[str, Any]], None]) -> Change:
    """The statement changed by ``change`` and signed again with the signer's key (a hostile signer)."""

    def apply(folder: Path, s: SignedDownload) -> None:
        bundle = json.loads((folder / SIGNATURE_NAME).read_text(encoding="utf-8"))
        statement = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
        change(statement)
        sign_raw_statement(folder, s.keys, json.dumps(statement).encode())

    return apply


def _bundle(change: Callable[[bytes], bytes]) -> Change:
    return lambda folder, s: _write(folder / SIGNATURE_NAME, change((folder / SIGNATURE_NAME).read_bytes()))


CASES: dict[str, Change] = {
    "as signed": _then(),
    **{f"one byte of {name}": _flip(name) for name in PUBLISHED},
    "an added file": _adds("bench/extra.jsonl"),
    "a removed file": lambda folder, s: (folder / "config.json").unlink(),
    "a renamed file": lambda folder, s: os.replace(folder / "bench/prompts.jsonl", folder / "bench/p.jsonl"),
    "a truncated model.sig": _bundle(lambda data: data[:500]),
    "a model.sig that is not UTF-8": _bundle(lambda data: b"\xff\xfe" + data),
    "a model.sig that is not JSON": _bundle(lambda data: b"[1, 2"),
    "an added file under a path the manifest ignores": _adds("checkpoint/evil.py", b"import os\n"),
    "an added file under the state folder": _adds(f"{STATE_DIR}/evil.py", b"import os\n"),
    "a planted targets cache": _adds(TARGETS_CACHE.as_posix(), json.dumps(PLANTED).encode()),
    "an added file under .git": _adds(".git/config", b"[core]\n"),
    "an added file under .cache/huggingface": _adds(".cache/huggingface/x.metadata"),
    "a symlink beside the signed files": lambda folder, s: (folder / "link.json").symlink_to("config.json"),
    "a FIFO beside the signed files": lambda folder, s: os.mkfifo(folder / "pipe"),
    **{
        f"a statement ignoring {paths}{extra}": _then(
            _resign(paths), *([_adds("bench/extra.jsonl")] if extra else [])
        )
        for paths in ([""], ["/"], [".."], ["."], ["bench"], ["/", "..", "bench/.."])
        for extra in ("", ", and an added file")
    },
    "a statement whose hash_type is empty": _restated(
        lambda st: st["predicate"]["serialization"].update(hash_type="")
    ),
    "a statement whose method is shards": _restated(
        lambda st: st["predicate"]["serialization"].update(method="shards", shard_size=1 << 20)
    ),
    "a resource signed under another algorithm": _restated(
        lambda st: st["predicate"]["resources"][0].update(algorithm="blake2")
    ),
    "signed by model_signing": _model_signing_sign,
    "signed by model_signing, then a file added under the state folder": _then(
        _model_signing_sign, _adds(f"{STATE_DIR}/evil.py")
    ),
}


def _model_signing_verdict(folder: Path, public: Path) -> tuple[bool, str]:
    args = ["verify", "key", str(folder), "--signature", str(folder / SIGNATURE_NAME), "--public_key"]
    result = ClickRunner().invoke(model_signing_cli, [*args, str(public)])
    return result.exit_code == 0, result.output


def _hubrelease_verdict(folder: Path, public: Path) -> tuple[bool, str]:
    code, out, err = run_cli("verify", folder / "hubrelease.yaml", "--signature", "--public-key", public)
    assert code in (0, 1, 2) and "Traceback" not in err, (code, out, err)
    return code == 0, out + err


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("key", ["signer", "another key"])
def test_hubrelease_gives_model_signings_verdict(
    signed: SignedDownload, tmp_path: Path, name: str, key: str
) -> None:
    folder = tmp_path / "download"
    shutil.copytree(signed.folder, folder, symlinks=True)
    CASES[name](folder, signed)
    public = signed.keys.public if key == "signer" else signed.other.public
    reference, said = _model_signing_verdict(folder, public)
    verdict, shown = _hubrelease_verdict(folder, public)
    assert verdict == reference, f"model_signing: {said}\nhubrelease: {shown}"


def test_the_corpus_holds_both_verdicts(signed: SignedDownload, tmp_path: Path) -> None:
    """The corpus is not all refusals: the signed folder, and the changes model-signing ignores, pass."""
    accepted: list[bool] = []
    for name in ("as signed", "an added file under .git", "signed by model_signing"):
        folder = tmp_path / str(len(accepted))
        shutil.copytree(signed.folder, folder)
        CASES[name](folder, signed)
        accepted.append(_model_signing_verdict(folder, signed.keys.public)[0])
    assert accepted == [True, True, True]
