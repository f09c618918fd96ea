"""Local verify checks the card and the manifest too: a rendered card against a fresh render, a copy
of the manifest against the manifest, through the same size-then-digest path and stat cache as artifacts."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from hubrelease.fsutil import STATE_DIR
from hubrelease.verify.plan_cache import CACHE_NAME
from tests.factories.cards import write_card_release
from tests.factories.cli import run_cli, run_program
from tests.factories.releases import write_release


def _verify(*args: str | Path) -> tuple[int, list[tuple[str, str]], dict[str, Any]]:
    code, out, err = run_cli("verify", *args, "--json")
    assert code in (0, 1), err
    report = json.loads(out)
    return code, [(f["kind"], f["path"]) for f in report["findings"] if f["severity"] == "error"], report


def _card_release(folder: Path) -> Path:
    """A rendered card over a pinned evaluation (what `add` + `render-card` leave)."""
    manifest = write_card_release(folder)
    for args in (("add", manifest, folder / "eval" / "matrix.json"), ("render-card", manifest)):
        code, _, err = run_cli(*args)
        assert code == 0, err
    return manifest


def test_a_hand_edited_card_is_drift(tmp_path: Path) -> None:
    manifest = _card_release(tmp_path)
    code, errors, report = _verify(manifest)
    assert (code, errors) == (0, [])
    assert "README.md" in [f["path"] for f in report["files"]]
    card = tmp_path / "README.md"
    card.write_text(card.read_text(encoding="utf-8").replace("115.2 tok/s", "215.2 tok/s"), encoding="utf-8")
    code, errors, report = _verify(manifest)
    assert (code, errors) == (1, [("digest_mismatch", "README.md")])
    message = report["findings"][0]["message"]
    assert message.startswith("differs from a re-render of the manifest and evaluation files: sha256 ")


def test_a_card_section_without_its_card_is_a_missing_file(tmp_path: Path) -> None:
    manifest = write_card_release(tmp_path)
    assert _verify(manifest)[:2] == (1, [("missing", "README.md")])


def test_a_drifted_evaluation_is_the_finding_and_the_card_is_not_rendered_from_it(tmp_path: Path) -> None:
    """With or without the plan cache: a render of unpinned bytes would prove nothing."""
    manifest = _card_release(tmp_path)
    evaluation = tmp_path / "eval" / "matrix.json"
    evaluation.write_text(evaluation.read_text(encoding="utf-8").replace("115.2", "215.2"), encoding="utf-8")
    for args in ((), ("--no-cache",)):
        code, errors, report = _verify(manifest, *args)
        assert (code, errors) == (1, [("digest_mismatch", "eval/matrix.json")])
    card = next(f for f in report["findings"] if f["path"] == "README.md")
    assert (card["kind"], card["message"]) == (
        "not_checked",
        "not re-rendered: eval/matrix.json is not as pinned",
    )
    evaluation.unlink()
    assert _verify(manifest, "--no-cache")[:2] == (1, [("missing", "eval/matrix.json")])


def test_a_card_that_does_not_render_is_an_error(tmp_path: Path) -> None:
    template = tmp_path / "card.md.j2"  # the release's own template (never cached: it may change)
    template.write_text("A static card.\n", encoding="utf-8")
    manifest = write_card_release(tmp_path, card={"template": "card.md.j2"}, extra={"ignore": ["card.md.j2"]})
    assert run_cli("render-card", manifest)[0] == 0
    assert _verify(manifest)[:2] == (0, [])
    template.write_text("{{ no_such_value }}\n", encoding="utf-8")
    code, errors, report = _verify(manifest)
    assert (code, errors) == (1, [("unreadable", "README.md")])
    assert report["findings"][0]["message"].startswith("cannot re-render the card to check it: ")


def test_without_a_card_section_a_hand_written_readme_must_be_pinned(tmp_path: Path) -> None:
    manifest = write_release(tmp_path, {"a.bin": b"a"})
    assert _verify(manifest)[:2] == (0, [])
    (tmp_path / "README.md").write_text("# my card\n", encoding="utf-8")
    code, errors, report = _verify(manifest)  # the cached plan expected no card: it plans again
    assert (code, errors) == (1, [("unpinned", "README.md")])
    assert "`card: {template: none}`" in report["findings"][0]["message"]
    assert run_cli("render-card", manifest, "--force")[0] == 0  # now it is render-card's: checked as such
    assert _verify(manifest)[:2] == (0, [])


def test_a_copy_of_the_manifest_in_the_release_folder_must_be_the_manifest(tmp_path: Path) -> None:
    folder = tmp_path / "release"
    manifest = write_release(
        folder, {"a.bin": b"a"}, extra_manifest={"root": "release"}, manifest_name="x.yaml"
    )
    manifest = manifest.rename(tmp_path / "x.yaml")
    assert _verify(manifest)[:2] == (0, [])  # no copy in the folder: nothing to compare (push writes it)
    published = manifest.read_text(encoding="utf-8").replace("root: release\n", "")
    (folder / "x.yaml").write_text(published, encoding="utf-8")
    assert _verify(manifest)[:2] == (0, [])  # the copy is the manifest, root: aside
    (folder / "x.yaml").write_text(published.replace("apache-2.0", "apache-3.0"), encoding="utf-8")
    code, errors, report = _verify(manifest)
    assert (code, errors) == (1, [("digest_mismatch", "x.yaml")])
    assert "differs from the manifest x.yaml (its root: aside)" in report["findings"][0]["message"]


def test_a_rendered_card_over_pinned_evaluations_is_not_rendered_again(tmp_path: Path) -> None:
    """The card's expected digest is in the cached plan: a warm verify renders nothing, loads no jinja2
    (the manifest is loaded for the evaluations' provenance check)."""
    manifest = _card_release(tmp_path)
    assert _verify(manifest)[:2] == (0, [])
    assert (tmp_path / STATE_DIR / CACHE_NAME).is_file()
    probe = (
        "import sys\n"
        "from hubrelease.cli.app import app\n"
        f"try:\n    app(['verify', {str(manifest)!r}])\nexcept SystemExit as exit:\n    code = exit.code\n"
        "print(code, sorted(m for m in ('jinja2', 'hubrelease.card.render') if m in sys.modules))\n"
    )
    done = run_program([sys.executable, "-c", probe], check=True)
    assert done.stdout.strip().splitlines()[-1] == "0 []"
    card = tmp_path / "README.md"
    card.write_bytes(card.read_bytes().replace(b"115.2 tok/s", b"215.2 tok/s"))
    assert _verify(manifest)[:2] == (1, [("digest_mismatch", "README.md")])  # hashed: the stat changed


def test_a_card_over_a_bare_evaluation_path_is_rendered_every_time(tmp_path: Path) -> None:
    manifest = write_card_release(tmp_path)  # eval/matrix.json listed without size and sha256
    assert run_cli("render-card", manifest)[0] == 0
    code, errors, _ = _verify(manifest)
    assert (code, errors) == (0, [])
    assert not (tmp_path / STATE_DIR / CACHE_NAME).exists()  # its render may change under the same text
    evaluation = tmp_path / "eval" / "matrix.json"
    evaluation.write_text(evaluation.read_text(encoding="utf-8").replace("115.2", "215.2"), encoding="utf-8")
    assert _verify(manifest)[:2] == (1, [("size_mismatch", "README.md")])  # +169.0%: a longer card
