"""A hostile release's recipes: ``rebuild`` writes only inside its temporary folder and reads only
regular files, no larger than recorded, inside the release or a folder given with ``--inputs``."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.factories.built_releases import keep_only
from tests.factories.cli import run_cli
from tests.factories.drafters import write_checkpoint

Edit = Callable[[dict[str, Any]], None]


@pytest.fixture
def release(built_releases: Path, tmp_path: Path) -> Path:
    """A copy of the built release (its recipes' paths are relative, so they hold in the copy)."""
    shutil.copytree(built_releases / "release", tmp_path / "release")
    shutil.copy(built_releases / "target.gguf", tmp_path / "target.gguf")
    return tmp_path / "release"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder rebuild's temporary folders are made in, so a test knows where ``../`` leads."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _evaluation(manifest: Path, edit: Edit) -> None:
    keep_only(manifest, "evaluations", "serving-evaluation.json", edit)


def _refused(manifest: Path, *words: str, extra: tuple[str | Path, ...] = ()) -> str:
    code, out, err = run_cli("rebuild", manifest, "--check", *extra)
    assert code == 2, (code, out, err)
    assert err.startswith("error: recipe of ") and err.count("\n") == 1, err
    assert all(word in err for word in words), err
    return err


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir())


def test_an_out_through_dotdot_writes_nothing_outside_the_rebuild_folder(release: Path, work: Path) -> None:
    manifest = release / "hubrelease.yaml"
    # work/hubrelease-rebuild-XXX/0/../../../escaped is a sibling of work.
    _evaluation(manifest, lambda r: r.update(out="../../../escaped/serving-evaluation.json"))
    _refused(manifest, "serving-evaluation.json", "out", "'../../../escaped/serving-evaluation.json'")
    assert not (work.parent / "escaped").exists()
    assert _files(work) == []


def test_an_absolute_out_is_refused(release: Path, work: Path) -> None:
    manifest = release / "hubrelease.yaml"
    outside = work.parent / "abs" / "serving-evaluation.json"
    _evaluation(manifest, lambda r: r.update(out=str(outside)))
    code, _, err = run_cli("rebuild", manifest, "--check")
    assert code == 2 and "evaluations[0]" in err and err.count("\n") == 1, err
    assert not outside.parent.exists()


def test_an_out_through_a_symlink_in_the_rebuild_folder_is_refused(
    release: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checked after resolution: a link on the way out of the rebuild folder is followed, then refused."""
    planted = work / "planted"
    (planted / "0").mkdir(parents=True)
    outside = work.parent / "linked"
    outside.mkdir()
    (planted / "0" / "link").symlink_to(outside)
    monkeypatch.setattr(tempfile, "mkdtemp", lambda **_: str(planted))
    manifest = release / "hubrelease.yaml"
    _evaluation(manifest, lambda r: r.update(out="link/serving-evaluation.json"))
    _refused(manifest, "out", "through a symlink")
    assert list(outside.iterdir()) == []


def test_a_device_source_is_refused_before_it_is_read(release: Path) -> None:
    """``/dev/zero`` through ``../`` (on main: hashed forever)."""
    manifest = release / "hubrelease.yaml"
    zero = "../" * len(release.resolve().parts) + "dev/zero"
    _evaluation(manifest, lambda r: r["options"].update(sources=[zero]))
    _refused(manifest, "options.sources[0]", "outside the release folder")
    _refused(manifest, "options.sources[0]", "not a regular file", extra=("--inputs", "/dev"))


def test_a_fifo_source_is_refused_before_it_is_opened(release: Path) -> None:
    """A FIFO nobody writes to (on main: the open blocks forever)."""
    os.mkfifo(release / "bench" / "fifo.jsonl")
    manifest = release / "hubrelease.yaml"
    _evaluation(manifest, lambda r: r["options"].update(sources=["bench/fifo.jsonl"]))
    _refused(manifest, "options.sources[0]", "'bench/fifo.jsonl'", "not a regular file")


def test_a_fifo_in_a_drafter_folder_is_refused(release: Path) -> None:
    """The builder opens the files an index names before any input list exists: the folder is screened."""
    manifest = release / "hubrelease.yaml"
    os.mkfifo(release / "checkpoint" / "model.safetensors.index.json")
    keep_only(manifest, "artifacts", "model.safetensors", lambda r: None)
    _refused(manifest, "source", "'checkpoint/model.safetensors.index.json'", "not a regular file")


def test_a_source_larger_than_recorded_is_refused(release: Path) -> None:
    manifest = release / "hubrelease.yaml"
    with (release / "bench" / "ar.jsonl").open("ab") as handle:
        handle.write(b"\n" * 4096)
    _evaluation(manifest, lambda r: None)
    _refused(manifest, "options.sources[0]", "'bench/ar.jsonl'", "more than the 1726 recorded")


def test_a_symlink_out_of_the_release_is_an_input_outside_it(release: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.jsonl"
    secret.write_text("{}\n")
    (release / "bench" / "ar.jsonl").unlink()
    (release / "bench" / "ar.jsonl").symlink_to(secret)
    manifest = release / "hubrelease.yaml"
    _evaluation(manifest, lambda r: None)
    _refused(manifest, "options.sources[0]", "resolves outside the release folder")


def test_a_target_beside_the_release_is_read_only_when_its_folder_is_given(release: Path) -> None:
    manifest = release / "hubrelease.yaml"
    keep_only(manifest, "artifacts", "gguf/drafter-q8_0.gguf", lambda r: None)
    _refused(manifest, "options.tokenizer_from", "'../target.gguf'", "--inputs DIR")
    code, out, err = run_cli("rebuild", manifest, "--check", "--json", "--inputs", release.parent)
    assert code == 0, err
    assert [r["status"] for r in json.loads(out)["results"]] == ["identical"]


def test_a_sitecustomize_module_never_reaches_a_site_packages(release: Path, work: Path) -> None:
    """A drafter whose ``auto_map`` names ``sitecustomize``, built with ``out`` in a venv's
    site-packages, put the release's module where the next ``python`` imports it (on main). Its
    module is copied as text, never imported: a rebuild with its own ``out`` runs no line of it."""
    marker = work.parent / "ran"
    checkpoint = write_checkpoint(release / "evil")
    config = json.loads((checkpoint / "config.json").read_text())
    config["auto_map"] = {"AutoModel": "sitecustomize.DFlashDraftModel"}
    (checkpoint / "config.json").write_text(json.dumps(config))
    (checkpoint / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    code, _, err = run_cli(
        "build", "safetensors-drafter", checkpoint, "--out", release / "evil-out",
        "--manifest", release / "hubrelease.yaml",
    )  # fmt: skip
    assert code == 0, err
    manifest = release / "hubrelease.yaml"
    keep_only(manifest, "artifacts", "evil-out/model.safetensors", lambda r: None)
    code, out, err = run_cli("rebuild", manifest, "--check", "--json")
    assert code == 0, err
    assert [r["status"] for r in json.loads(out)["results"]] == ["identical"]
    assert not marker.exists()
    site = work.parent / "venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    keep_only(
        manifest,
        "artifacts",
        "evil-out/model.safetensors",
        lambda r: r.update(out="../../../venv/lib/python3.11/site-packages"),
    )
    _refused(manifest, "out", "rebuild folder")
    assert list(site.iterdir()) == []
    assert not marker.exists()
