"""A release folder as an author has it before any manifest: nested folders, real headers, odd files.

Used by the ``init`` / ``add`` / ``import`` tests: a safetensors drafter and an ik-mixed GGUF (real
headers, so composition is recorded), an evaluation JSON, a README with front matter, an empty
file, a 0-byte GGUF, a symlink and files that ``.gitignore`` leaves out.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import CommitOperationAdd, HfApi

from hubrelease.hashing import pool, sha256_file
from tests.factories.cards import matrix_evaluation
from tests.factories.drafters import write_checkpoint, write_ik_mixed_gguf
from tests.factories.hub import unique_repo, upload_files

README_TEXT = """---
license: apache-2.0
base_model: acme/target-8b
base_model_relation: finetune
pipeline_tag: text-generation
library_name: gguf
tags:
- dflash
- speculative-decoding
---
# Tiny drafter

Front matter above is what `init` and `import` read.
"""

GITIGNORE_TEXT = "*.log\nscratch/\n"


def write_author_folder(root: Path, *, symlink: bool = True) -> Path:
    """Populate ``root`` with a release as an author keeps it; returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text(README_TEXT, encoding="utf-8")
    (root / ".gitignore").write_text(GITIGNORE_TEXT, encoding="utf-8")
    write_checkpoint(root / "weights")
    (root / "gguf").mkdir()
    write_ik_mixed_gguf(root / "gguf" / "drafter-q4.gguf")
    (root / "gguf" / "broken-0.gguf").write_bytes(b"")
    (root / "docs" / "deep").mkdir(parents=True)
    (root / "docs" / "deep" / "notes.md").write_text("# Notes\n", encoding="utf-8")
    (root / "empty.txt").write_bytes(b"")
    (root / "results").mkdir()
    (root / "results" / "spark.json").write_text(json.dumps(matrix_evaluation(), indent=2), encoding="utf-8")
    (root / "train.log").write_text("step 1\n", encoding="utf-8")
    (root / "scratch").mkdir()
    (root / "scratch" / "tmp.bin").write_bytes(b"\0" * 16)
    if symlink:
        os.symlink("README.md", root / "LINK.md")
    return root


def publish_author_folder(api: HfApi, folder: Path, branch: str = "dev") -> tuple[str, Path, str]:
    """A repo whose ``branch`` (made from main) holds the author folder minus what it would not publish.

    Returns (repo id, ``folder`` holding exactly the branch's files, the branch's commit). Weights go
    to LFS, text files stay regular files, so both kinds of Hub metadata are exercised.
    """
    write_author_folder(folder, symlink=False)
    for name in (".gitignore", "train.log", "scratch/tmp.bin"):
        (folder / name).unlink()
    (folder / "scratch").rmdir()
    (folder / "LICENSE").write_text("Apache-2.0\n", encoding="utf-8")
    repo_id = unique_repo("import")
    upload_files(api, repo_id, {"LICENSE": b"Apache-2.0\n"})
    if branch != "main":
        api.create_branch(repo_id, branch=branch)
    ops = [
        CommitOperationAdd(p.relative_to(folder).as_posix(), p.read_bytes())
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    ]
    commit = api.create_commit(repo_id, ops, commit_message="release", revision=branch).oid
    return repo_id, folder, commit


def deny_reading(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """EACCES when the hashing pool opens a file called ``name``.

    CI runs as root, and root reads mode-000 files, so ``chmod`` cannot make a file unreadable.
    """

    def sha256(
        path: str | os.PathLike[str], on_bytes: Callable[[int], None] | None = None, **kwargs: Any
    ) -> str:
        if Path(path).name == name:
            raise PermissionError(13, "Permission denied", str(path))
        return sha256_file(os.fspath(path), on_bytes, **kwargs)

    monkeypatch.setattr(pool, "sha256_file", sha256)
