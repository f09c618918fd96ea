"""Verify covers every file push publishes: the card, the manifest, evaluations and artifacts.

On the loopback Hub with the real huggingface_hub client (tampering as anyone with write access
would: a new commit), and on an ``hf download --local-dir`` folder of the release.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.faults import FILE_ROUTES
from tests.factories.cards import matrix_evaluation, release_pins, write_card_release
from tests.factories.cli import run_cli, run_program
from tests.factories.hub import api_for, hf_env, unique_repo, upload_files

HEADLINE = ("115.2 tok/s", "215.2 tok/s")  # the card's claim (tests/factories/cards.py: 80 -> 115.2)


def _published(hub: LoopbackHub, folder: Path) -> tuple[str, Path]:
    """A card release (pinned evaluation, rendered card, a target that exists) pushed to ``hub``."""
    target = unique_repo("target")
    commit = upload_files(api_for(hub), target, {"config.json": b'{"hidden_size": 8}\n'})
    repo = unique_repo()
    pins = {
        "targets": [{"repo_id": target, "revision": commit, "license": "mit", "quantization": "NVFP4"}],
        "engines": release_pins()["engines"],
        "hardware": release_pins()["hardware"],
    }
    evaluation = matrix_evaluation()  # measured against that target at that commit (provenance binding)
    evaluation["run"]["target"].update(repo_id=target, revision=commit)
    manifest = write_card_release(
        folder, release={"repo_id": repo}, evaluations={"eval/matrix.json": evaluation}, extra={"pins": pins}
    )
    for args in (("add", manifest, folder / "eval" / "matrix.json"), ("render-card", manifest)):
        code, _, err = run_cli(*args)
        assert code == 0, err
    assert HEADLINE[0] in (folder / "README.md").read_text(encoding="utf-8")
    code, _, err = run_cli("push", manifest, "--endpoint", hub.url)
    assert code == 0, err
    return repo, manifest


def _edit(path: str, old: str, new: str) -> Callable[[HfApi, str, Path], None]:
    """Re-upload ``path`` with ``old`` replaced by ``new``, as a new commit through the client."""

    def tamper(api: HfApi, repo: str, folder: Path) -> None:
        text = (folder / path).read_text(encoding="utf-8")
        assert old in text
        api.create_commit(
            repo, [CommitOperationAdd(path, text.replace(old, new, 1).encode())], commit_message="edit"
        )

    return tamper


def _delete(api: HfApi, repo: str, folder: Path) -> None:
    api.create_commit(repo, [CommitOperationDelete("README.md")], commit_message="delete")


def _add(api: HfApi, repo: str, folder: Path) -> None:
    api.create_commit(repo, [CommitOperationAdd("extra.md", b"not released\n")], commit_message="add")


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        (_edit("README.md", *HEADLINE), ("changed", "README.md")),
        (_edit("README.md", "+44.0%", "+170.1%"), ("changed", "README.md")),
        (_edit("hubrelease.yaml", "license: apache-2.0", "license: mit"), ("changed", "hubrelease.yaml")),
        (_edit("eval/matrix.json", "115.2", "215.2"), ("changed", "eval/matrix.json")),
        (_delete, ("missing", "README.md")),
        (_add, ("unlisted", "extra.md")),
    ],
    ids=["card-headline", "card-speedup", "manifest-licence", "evaluation", "card-deleted", "extra-file"],
)
def test_every_published_file_changed_on_the_hub_fails_verify_remote(
    hub: LoopbackHub, tmp_path: Path, tamper: Callable[[HfApi, str, Path], None], expected: tuple[str, str]
) -> None:
    repo, manifest = _published(hub, tmp_path / "release")
    code, out, err = run_cli("verify", manifest, "--remote", "--endpoint", hub.url, "--json")
    assert code == 0, out + err
    assert {f["path"] for f in json.loads(out)["files"]} == {
        "model.safetensors",
        "config.json",
        "eval/matrix.json",
        "README.md",
        "hubrelease.yaml",
    }
    tamper(api_for(hub), repo, manifest.parent)
    hub.requests.clear()
    code, out, _ = run_cli("verify", manifest, "--remote", "--endpoint", hub.url, "--json")
    assert code == 1
    assert _errors_of(out) == [expected]
    assert hub.requests.bytes_out(FILE_ROUTES) == 0  # nothing downloaded: sizes, LFS sha256 and git blob ids


def test_card_finding_says_what_it_must_equal(hub: LoopbackHub, tmp_path: Path) -> None:
    repo, manifest = _published(hub, tmp_path / "release")
    _edit("README.md", *HEADLINE)(api_for(hub), repo, manifest.parent)
    code, out, _ = run_cli("verify", manifest, "--remote", "--endpoint", hub.url)
    assert code == 1
    row = next(line for line in out.splitlines() if "README.md" in line)
    assert "differs on the Hub from a re-render of the manifest and evaluation files: git blob" in row


def _errors_of(report: str) -> list[tuple[str, str]]:
    """(kind, path) of each error; a size or digest mismatch is ``changed``."""
    findings = json.loads(report)["findings"]
    changed = ("size_mismatch", "digest_mismatch")
    return [
        ("changed" if f["kind"] in changed else f["kind"], f["path"])
        for f in findings
        if f["severity"] == "error"
    ]


def _download(hub: LoopbackHub, repo: str, tmp_path: Path) -> Path:
    folder = tmp_path / "download"
    done = run_program(
        ["hf", "download", repo, "--local-dir", str(folder), "--quiet"],
        env=hf_env(hub, tmp_path / "hf"),
    )
    assert done.returncode == 0, done.stderr
    assert (folder / ".cache" / "huggingface").is_dir()  # hf's own metadata: never published, ignored
    return folder


def _errors(*args: str | Path) -> tuple[int, list[tuple[str, str]]]:
    code, out, err = run_cli("verify", *args, "--json")
    assert code in (0, 1), err
    return code, _errors_of(out)


def test_an_hf_download_verifies_against_its_own_and_the_local_manifest(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    repo, manifest = _published(hub, tmp_path / "release")
    download = _download(hub, repo, tmp_path)
    downloaded = download / "hubrelease.yaml"
    assert _errors(downloaded) == (0, [])
    assert _errors(manifest, "--dir", download) == (0, [])  # the published manifest is the local one

    card = download / "README.md"
    original = card.read_bytes()
    card.write_bytes(original.replace(HEADLINE[0].encode(), HEADLINE[1].encode()))
    assert _errors(downloaded) == (1, [("changed", "README.md")])
    assert _errors(manifest, "--dir", download) == (1, [("changed", "README.md")])
    card.write_bytes(original)

    published = downloaded.read_bytes()
    downloaded.write_bytes(published.replace(b"license: apache-2.0", b"license: mit", 1))
    # Against the local manifest the copy differs; on its own it no longer renders the card it came with.
    assert _errors(manifest, "--dir", download) == (1, [("changed", "hubrelease.yaml")])
    assert _errors(downloaded) == (1, [("changed", "README.md")])
    downloaded.write_bytes(published)

    (download / "eval" / "matrix.json").unlink()
    (download / "extra.md").write_text("not released\n", encoding="utf-8")
    code, errors = _errors(manifest, "--dir", download)
    assert code == 1
    assert ("missing", "eval/matrix.json") in errors and ("unlisted", "extra.md") in errors
