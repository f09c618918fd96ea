"""The verify plan cache: reused only for the same manifest bytes, path and --dir; never trusted blindly."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from hubrelease.fsutil import STATE_DIR, TARGETS_CACHE
from hubrelease.safe_parse import parse_json
from hubrelease.verify import plan_cache
from hubrelease.verify.plan_cache import CACHE_NAME
from tests.factories.cli import invoke, run_cli, run_program, verify_json
from tests.factories.releases import example_release, pin_target_header, write_release

TARGET_HEADER = "ab" * 32
PLANTED = {f"header:{TARGET_HEADER}": {"depth": 2, "hidden": 8, "vocab": 10, "source": "planted"}}
"""Remembered facts of a target with 2 layers and 10 tokens, for TARGET_HEADER: lint errors."""


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


def _probe(*args: str) -> str:
    """Run ``hubrelease ARGS`` in a fresh interpreter: its exit code and which of the manifest's
    readers (pydantic, the models, YAML) and lint's format readers it loaded."""
    heavy = ("pydantic", "yaml", "ruamel", "hubrelease.manifest.models", "hubrelease.formats.gguf_header")
    probe = (
        "import sys\n"
        "from hubrelease.cli.app import app\n"
        f"try:\n    app({list(args)!r})\nexcept SystemExit as exit:\n    code = exit.code\n"
        f"print(code, sorted(m for m in {heavy!r} if m in sys.modules))\n"
    )
    return run_program([sys.executable, "-c", probe], check=True).stdout.strip().splitlines()[-1]


def _header_pinned(work: Path) -> Path:
    """The example, its target pinned by a GGUF header (lint reads the facts remembered for it)."""
    manifest = example_release(work, "acme/warm")
    pin_target_header(manifest, TARGET_HEADER)
    assert run_cli("render-card", manifest, "--force")[0] == 0
    (manifest.parent / STATE_DIR).mkdir(exist_ok=True)
    return manifest


def test_a_warm_verify_recalls_lint_and_provenance_without_the_manifest(tmp_path: Path) -> None:
    """The example lints its GGUF and checks its evaluation's provenance: both read the manifest,
    so a warm verify loaded it every time; their findings are now recalled for the same inputs."""
    manifest = _header_pinned(tmp_path)
    (manifest.parent / TARGETS_CACHE).write_text(json.dumps(PLANTED), encoding="utf-8")
    code, cold = verify_json(manifest)
    assert code == 1
    assert {f["kind"] for f in cold["findings"]} == {"lint"}
    assert _probe("verify", str(manifest)) == "1 []"
    code, warm = verify_json(manifest)
    assert (code, warm["findings"]) == (1, cold["findings"])


def test_changed_target_facts_lint_again(tmp_path: Path) -> None:
    """Lint compares the drafter with the target facts remembered in the folder: new facts are a new
    input, not a recalled answer."""
    manifest = _header_pinned(tmp_path)
    assert verify_json(manifest)[0] == 0
    assert verify_json(manifest)[0] == 0  # recalled
    (manifest.parent / TARGETS_CACHE).write_text(json.dumps(PLANTED), encoding="utf-8")
    code, report = verify_json(manifest)
    assert code == 1
    assert {f["kind"] for f in report["findings"] if f["severity"] == "error"} == {"lint"}
    (manifest.parent / TARGETS_CACHE).unlink()
    assert verify_json(manifest)[0] == 0


def test_lint_reading_an_unlisted_config_is_never_recalled(tmp_path: Path) -> None:
    """A lint_config the manifest does not list is bytes no key covers: lint runs every time."""
    manifest = example_release(tmp_path, "acme/warm")
    text = manifest.read_text(encoding="utf-8")
    (manifest.parent / "lint-config.json").write_bytes((manifest.parent / "config.json").read_bytes())
    manifest.write_text(
        text.replace("lint_config: config.json", "lint_config: lint-config.json").replace(
            "ignore:\n", "ignore:\n  - lint-config.json\n"
        ),
        encoding="utf-8",
    )
    assert run_cli("render-card", manifest, "--force")[0] == 0
    assert verify_json(manifest)[0] == 0
    assert _probe("verify", str(manifest)).startswith("0 [") and "pydantic" in _probe("verify", str(manifest))
    plans = json.loads((manifest.parent / STATE_DIR / CACHE_NAME).read_text())["plans"]
    assert [plan["checks"] for plan in plans.values()] == [[]]


def test_the_cache_file_is_parsed_once_per_process_until_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``verify --signature`` asks for the plan, the published files and the recalled checks: one
    screened parse of the file, until it is replaced (a new inode, or its size, mtime or ctime)."""
    manifest = write_release(tmp_path)
    assert verify_json(manifest)[0] == 0
    text = manifest.read_text()
    parsed: list[int] = []

    def counted(data: bytes) -> object:
        parsed.append(len(data))
        return parse_json(data)

    monkeypatch.setattr(plan_cache, "parse_json", counted)
    first = plan_cache.load_plan(manifest, text, None)
    assert first is not None and plan_cache.load_plan(manifest, text, None) is first
    assert len(parsed) == 1
    manifest.write_text(f"{text}# edited\n")
    assert verify_json(manifest)[0] == 0  # stores the new text's plan: the file is replaced
    assert plan_cache.load_plan(manifest, f"{text}# edited\n", None) is not None
    assert plan_cache.load_plan(manifest, text, None) is None  # the old text's plan is gone
    assert len(parsed) >= 2
