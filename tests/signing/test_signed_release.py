"""End to end: sign the example, push it, `hf download` it, and let the real consumer judge.

The consumer is model-signing 1.1.1's own CLI (``model_signing verify key``), run as a subprocess for
the first acceptance and in process (its click group, the same code) for the many refusals that
follow. hubrelease's ``verify --signature`` must agree with it in every case, on the download folder
and on the Hub (``--remote``, no weight bytes downloaded).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from click.testing import CliRunner as ClickRunner
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, snapshot_download
from model_signing._cli import main as model_signing_cli

from hubrelease.release_files import SIGNATURE_NAME
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import run_cli, run_program
from tests.factories.hub import VENV_BIN, api_for, hf_env, unique_repo
from tests.factories.releases import example_release
from tests.factories.signing import KeyPair, ec_key_pair, flip_one_byte, resign_ignoring

# Every file push publishes for the example (artifacts, evaluation, card, manifest): model.sig signs these.
PUBLISHED = (
    "README.md",
    "bench/autoregressive.jsonl",
    "bench/dflash2.jsonl",
    "bench/eval-spec.yaml",
    "bench/prompts.jsonl",
    "config.json",
    "evaluation.json",
    "hubrelease.yaml",
    "model.safetensors",
    "tiny-dflash2-q8_0.gguf",
)


class Signed(NamedTuple):
    repo: str
    commit: str
    keys: KeyPair
    download: Path
    hub: LoopbackHub
    env: dict[str, str]


def _ok(*args: str | Path) -> str:
    code, out, err = run_cli(*args)
    assert code == 0, (args, out, err)
    return out + err


def _model_signing(folder: Path, keys: KeyPair) -> tuple[int, str]:
    """`model_signing verify key FOLDER` in process: (exit code, output)."""
    args = [
        "verify",
        "key",
        str(folder),
        "--signature",
        str(folder / SIGNATURE_NAME),
        "--public_key",
        str(keys.public),
    ]
    result = ClickRunner().invoke(model_signing_cli, args)
    return result.exit_code, result.output


Found = set[tuple[str, str, str]]
"""(kind, path, message) of every error finding."""


def _findings(code: int, out: str, err: str) -> tuple[int, Found]:
    assert code in (0, 1), err
    report = json.loads(out)
    return code, {
        (f["kind"], f["path"], f["message"]) for f in report["findings"] if f["severity"] == "error"
    }


def _hubrelease_local(folder: Path, keys: KeyPair) -> tuple[int, Found]:
    return _findings(
        *run_cli("verify", folder / "hubrelease.yaml", "--signature", "--public-key", keys.public, "--json")
    )


def _hubrelease_remote(signed: Signed, revision: str, root: Path | None = None) -> tuple[int, Found]:
    where: list[str | Path] = ["--dir", root] if root is not None else []
    return _findings(
        *run_cli(
            "verify", signed.download / "hubrelease.yaml", *where, "--remote", "--revision", revision,
            "--endpoint", signed.hub.url, "--signature", "--public-key", signed.keys.public, "--json",
        )
    )  # fmt: skip


def _signature_paths(found: Found) -> dict[str, str]:
    return {path: message for kind, path, message in found if kind == "signature"}


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory, loopback_hub: LoopbackHub) -> Iterator[Signed]:
    """The example signed with an EC key, pushed as one commit, downloaded with the real `hf download`."""
    folder = tmp_path_factory.mktemp("signed")
    with pytest.MonkeyPatch.context() as env:  # as the per-test _isolated_env would (this fixture runs first)
        env.setenv("HF_HOME", str(folder / "hf-home"))
        env.setenv("HUBRELEASE_LOCAL_HUB", str(folder / "local-hub"))
        yield _sign_push_download(folder, loopback_hub)


def _sign_push_download(folder: Path, loopback_hub: LoopbackHub) -> Signed:
    repo = unique_repo("signed")
    manifest = example_release(folder, repo)
    keys = ec_key_pair(folder / "keys")
    _ok("push", folder / "example-target" / "hubrelease.yaml", "--endpoint", loopback_hub.url)
    _ok("render-card", manifest)  # the card names the repo
    # One release, one count in every step: the manifest and the 9 files it pins; model.sig apart.
    one_count = "10 files: hubrelease.yaml and the 9 it pins"
    assert f"OK (local): {one_count}, " in _ok("verify", manifest)
    assert f"signed {one_count} (" in _ok("sign", manifest, "--key", keys.private)
    pushed = _ok("push", manifest, "--endpoint", loopback_hub.url)
    assert "added   model.sig" in pushed
    assert f"plan: {one_count}, plus model.sig; " in pushed
    assert "OK (remote at " in pushed and f"): {one_count}, " in pushed
    api = api_for(loopback_hub)
    commits = api.list_repo_commits(repo)
    commit = commits[0].commit_id
    assert len(commits) == 2  # the repo's creation, then one commit with every file and the signature
    files = set(api.list_repo_files(repo, revision=commit))
    assert files == {*PUBLISHED, SIGNATURE_NAME, ".gitattributes"}
    env = hf_env(loopback_hub, folder / "hf-home")
    download = folder / "download"
    done = run_program(
        ["hf", "download", repo, "--revision", commit, "--local-dir", str(download), "--quiet"],
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert (download / ".cache" / "huggingface").is_dir()  # what --local-dir leaves, ignored by the signature
    return Signed(repo, commit, keys, download, loopback_hub, env)


def test_model_signing_cli_accepts_the_download_and_hubrelease_agrees(signed: Signed) -> None:
    done = run_program(
        [
            str(VENV_BIN / "model_signing"), "verify", "key", str(signed.download),
            "--signature", str(signed.download / SIGNATURE_NAME), "--public_key", str(signed.keys.public),
        ]
    )  # fmt: skip
    assert done.returncode == 0 and "Verification succeeded" in done.stdout, done.stdout + done.stderr
    assert _hubrelease_local(signed.download, signed.keys) == (0, set())
    assert _hubrelease_remote(signed, signed.commit) == (0, set())


@pytest.mark.parametrize("name", PUBLISHED)
def test_one_changed_byte_in_any_published_file_is_refused_by_both(signed: Signed, name: str) -> None:
    path = signed.download / name
    original = flip_one_byte(path)
    try:
        code, text = _model_signing(signed.download, signed.keys)
        assert code == 1 and "Hash mismatch for" in text and name in text, text
        code, found = _hubrelease_local(signed.download, signed.keys)
        assert code == 1 and _signature_paths(found)[name].startswith("sha256 "), found
    finally:
        path.write_bytes(original)
    assert _model_signing(signed.download, signed.keys)[0] == 0


def test_an_added_or_a_removed_file_is_refused_by_both(signed: Signed) -> None:
    extra = signed.download / "bench" / "extra.jsonl"
    extra.write_text("{}\n")
    try:
        code, text = _model_signing(signed.download, signed.keys)
        assert code == 1 and "Extra files found in model" in text and "bench/extra.jsonl" in text, text
        code, found = _hubrelease_local(signed.download, signed.keys)
        assert code == 1 and ("unlisted", "bench/extra.jsonl") in {(k, p) for k, p, _ in found}, found
    finally:
        extra.unlink()
    removed = signed.download / "config.json"
    original = removed.read_bytes()
    removed.unlink()
    try:
        code, text = _model_signing(signed.download, signed.keys)
        assert code == 1 and "Missing files in model" in text and "config.json" in text, text
        code, found = _hubrelease_local(signed.download, signed.keys)
        assert code == 1 and _signature_paths(found) == {
            "config.json": "signed, but missing or unreadable"
        }, found
    finally:
        removed.write_bytes(original)
    assert _model_signing(signed.download, signed.keys)[0] == 0


def test_another_key_is_refused_by_both(signed: Signed, tmp_path: Path) -> None:
    other = ec_key_pair(tmp_path, "other")
    code, text = _model_signing(signed.download, other)
    assert code == 1 and "Key mismatch" in text, text
    code, found = _hubrelease_local(signed.download, other)
    message = _signature_paths(found)[SIGNATURE_NAME]
    assert code == 1 and message.startswith("signature does not verify (key)") and "Key mismatch" in message


def _tampered(
    signed: Signed, branch: str, operations: list[CommitOperationAdd | CommitOperationDelete]
) -> str:
    """A branch from the signed commit with ``operations`` committed on it: its head."""
    api = api_for(signed.hub)
    api.create_branch(signed.repo, branch=branch, revision=signed.commit)
    return api.create_commit(signed.repo, operations, commit_message="tamper", revision=branch).oid


def _download(signed: Signed, revision: str, folder: Path) -> Path:
    snapshot_download(signed.repo, revision=revision, local_dir=folder, endpoint=signed.hub.url)
    return folder


@pytest.mark.parametrize("name", PUBLISHED)
def test_one_changed_byte_on_the_hub_is_refused_remotely_and_by_model_signing(
    signed: Signed, tmp_path: Path, name: str
) -> None:
    changed = tmp_path / "changed"
    changed.write_bytes((signed.download / name).read_bytes())
    flip_one_byte(changed)
    branch = f"t-{PUBLISHED.index(name)}"
    head = _tampered(signed, branch, [CommitOperationAdd(name, str(changed))])
    code, found = _hubrelease_remote(signed, head)
    assert code == 1 and _signature_paths(found)[name].startswith("sha256 "), found
    if name in ("model.safetensors", "config.json"):  # one LFS/Xet file, one regular file: download them
        code, text = _model_signing(_download(signed, head, tmp_path / "dl"), signed.keys)
        assert code == 1 and "Hash mismatch for" in text and name in text, text


def test_a_file_added_or_removed_on_the_hub_is_refused_remotely_and_by_model_signing(
    signed: Signed, tmp_path: Path
) -> None:
    added = _tampered(signed, "t-added", [CommitOperationAdd("bench/extra.jsonl", b"{}\n")])
    code, found = _hubrelease_remote(signed, added)
    assert code == 1 and _signature_paths(found) == {"bench/extra.jsonl": "published but not signed"}, found
    code, text = _model_signing(_download(signed, added, tmp_path / "added"), signed.keys)
    assert code == 1 and "Extra files found" in text, text
    removed = _tampered(signed, "t-removed", [CommitOperationDelete("bench/prompts.jsonl")])
    code, found = _hubrelease_remote(signed, removed)
    assert code == 1 and _signature_paths(found) == {"bench/prompts.jsonl": "signed but not published"}, found
    code, text = _model_signing(_download(signed, removed, tmp_path / "removed"), signed.keys)
    assert code == 1 and "Missing files" in text, text


def test_remote_signature_check_downloads_no_weight_bytes(signed: Signed) -> None:
    """LFS/Xet files compare by the Hub's sha256; regular files come from the local copies here."""
    signed.hub.requests.clear()
    code, out, err = run_cli(
        "verify", signed.download / "hubrelease.yaml", "--remote", "--revision", signed.commit,
        "--endpoint", signed.hub.url, "--signature", "--public-key", signed.keys.public, "--json",
    )  # fmt: skip
    assert code == 0, err
    report = json.loads(out)
    size = (signed.download / SIGNATURE_NAME).stat().st_size
    assert report["signature"] == {"path": SIGNATURE_NAME, "ok": True, "fetched_bytes": size}
    reads = [
        r.path for r in signed.hub.requests.records if "/resolve/" in r.path or r.route.startswith("xet")
    ]
    assert reads and all(path.endswith(f"/{SIGNATURE_NAME}") for path in reads), reads


def test_without_local_copies_regular_files_are_fetched_but_never_weights(
    signed: Signed, tmp_path: Path
) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    shutil.copy(signed.download / "hubrelease.yaml", bare / "hubrelease.yaml")
    signed.hub.requests.clear()
    assert _hubrelease_remote(signed, signed.commit, root=bare) == (0, set())
    fetched = {
        r.path.rsplit("/resolve/", 1)[1].split("/", 1)[1]
        for r in signed.hub.requests.records
        if "/resolve/" in r.path
    }
    assert fetched >= {SIGNATURE_NAME, "config.json", "README.md"}
    assert not fetched & {"model.safetensors", "tiny-dflash2-q8_0.gguf"}
    assert os.path.getsize(signed.download / "model.safetensors") > 100_000


@pytest.mark.parametrize("ignore_paths", [[""], ["."]])
def test_a_statement_ignoring_everything_is_refused_remotely_and_by_model_signing(
    signed: Signed, tmp_path: Path, ignore_paths: list[str]
) -> None:
    """``model_signing verify`` applies the statement's own ignore paths: ``""`` and ``"."`` name the
    folder itself, so nothing is hashed and every signed file is missing. The remote check used
    hubrelease's fixed list instead, and accepted it."""
    statement = tmp_path / "statement"
    statement.mkdir()
    shutil.copy(signed.download / SIGNATURE_NAME, statement / SIGNATURE_NAME)
    resign_ignoring(statement, signed.keys, ignore_paths)
    branch = f"t-ignore-{len(ignore_paths[0])}"
    head = _tampered(signed, branch, [CommitOperationAdd(SIGNATURE_NAME, str(statement / SIGNATURE_NAME))])
    code, found = _hubrelease_remote(signed, head)
    assert code == 1 and set(_signature_paths(found).values()) == {"signed but not published"}, found
    code, text = _model_signing(_download(signed, head, tmp_path / "dl"), signed.keys)
    assert code == 1 and "Missing files" in text, text
