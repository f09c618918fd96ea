"""The verify plan cache: reused only for the same manifest bytes, path and --dir; never trusted blindly."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from hubrelease.fsutil import STATE_DIR
from hubrelease.verify import plan_cache
from hubrelease.verify.plan_cache import CACHE_NAME
from tests.factories.cli import invoke, run_program, verify_json
from tests.factories.releases import write_release


def test_warm_verify_loads_no_pydantic_and_no_yaml(tmp_path: Path) -> None:
    """Nor hashlib, the thread pool or tempfile: nothing is hashed or written."""
    manifest = write_release(tmp_path)
    assert verify_json(manifest)[0] == 0
    heavy = ("pydantic", "yaml", "ruamel", "rich", "hashlib", "concurrent.futures", "tempfile")
    probe = (
        "import sys\n"
        "from hubrelease.cli.app import app\n"
        f"try:\n    app(['verify', {str(manifest)!r}])\nexcept SystemExit as exit:\n    code = exit.code\n"
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    done = run_program([sys.executable, "-c", probe], check=True)
    assert done.stdout.strip().splitlines()[-1] == "0 []"


def test_an_edited_manifest_is_validated_again(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    assert verify_json(manifest)[0] == 0
    text = manifest.read_text()
    digest = hashlib.sha256(b'{"architectures": ["DFlashDraftModel"]}\n').hexdigest()
    manifest.write_text(text.replace(digest, "a" * 64))
    code, report = verify_json(manifest)
    assert code == 1
    assert [f["kind"] for f in report["findings"]] == ["digest_mismatch"]
    manifest.write_text(text.replace("sha256: " + digest, "sha256: nope"))
    result = invoke(["verify", str(manifest)])
    assert result.exit_code == 2
    assert "sha256" in result.stderr


def test_an_edit_replaces_the_plan_of_that_manifest(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    text = manifest.read_text()
    cache = tmp_path / STATE_DIR / CACHE_NAME
    for note in ("one", "two", "three"):
        manifest.write_text(f"{text}# {note}\n")
        assert verify_json(manifest)[0] == 0
    plans = json.loads(cache.read_text())["plans"]
    assert [plan["manifest"] for plan in plans.values()] == [f"{text}# three\n"]


def test_other_code_replaces_the_plan_and_never_reuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest = write_release(tmp_path)
    assert verify_json(manifest)[0] == 0
    cache = tmp_path / STATE_DIR / CACHE_NAME
    stored = json.loads(cache.read_text())
    for plan in stored["plans"].values():
        plan["expected"] = [["config.json", 1, "0" * 64, True]]  # a lie the old code's plan now tells
    cache.write_text(json.dumps(stored))
    monkeypatch.setattr(plan_cache, "__version__", "99.0")  # an upgrade
    assert verify_json(manifest)[0] == 0
    plans = json.loads(cache.read_text())["plans"]
    assert [plan["code"][0] for plan in plans.values()] == ["99.0"]


def test_plans_are_keyed_on_the_release_folder_given(tmp_path: Path) -> None:
    manifest = write_release(tmp_path / "a")
    copy = tmp_path / "b"
    copy.mkdir()
    assert verify_json(manifest)[0] == 0
    code, report = verify_json(manifest, "--dir", str(copy))  # an empty folder: everything missing
    assert code == 1
    assert {f["kind"] for f in report["findings"]} == {"missing"}
    assert verify_json(manifest)[0] == 0


def test_a_corrupt_or_foreign_cache_is_ignored(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    assert verify_json(manifest)[0] == 0
    cache = tmp_path / STATE_DIR / CACHE_NAME
    stored = json.loads(cache.read_text())
    for plan in stored["plans"].values():
        plan["expected"] = [["config.json", 1, "0" * 64, True]]  # a lie: would fail if trusted... and
    stored["format"] = "someone-else-1"  # ...it is not ours, so it is never read
    cache.write_text(json.dumps(stored))
    assert verify_json(manifest)[0] == 0
    cache.write_text("{not json")
    assert verify_json(manifest)[0] == 0


def test_no_cache_neither_reads_nor_writes_plans(tmp_path: Path) -> None:
    manifest = write_release(tmp_path)
    assert verify_json(manifest, "--no-cache")[0] == 0
    assert not (tmp_path / STATE_DIR / CACHE_NAME).exists()
