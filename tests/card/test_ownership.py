"""Card ownership: the marker, --force, and a hand-written card kept as the card (template: none)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from hubrelease.card.marker import MARKER
from tests.factories.cli import invoke
from tests.factories.releases import write_release


def test_render_card_replaces_only_its_own_card(tmp_path: Path) -> None:
    manifest = write_release(tmp_path, {"model.safetensors": b"w"}, extra_manifest={"card": {}})
    readme = tmp_path / "README.md"
    readme.write_text("# mine\n")
    result = invoke(["render-card", str(manifest)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"error: {readme}: was not written by render-card; pass --force to replace it, or keep it as "
        "the card with card.template: none"
    )
    assert readme.read_text() == "# mine\n"
    assert invoke(["render-card", str(manifest), "--force"]).exit_code == 0
    assert MARKER in readme.read_text()
    assert invoke(["render-card", str(manifest), "--check"]).exit_code == 0


def test_a_hand_written_card_is_checked_by_digest_and_never_rendered(tmp_path: Path) -> None:
    text = b"# mine, by hand\n"
    card = {"template": "none", "size": len(text), "sha256": hashlib.sha256(text).hexdigest()}
    manifest = write_release(tmp_path, {"model.safetensors": b"w"}, extra_manifest={"card": card})
    (tmp_path / "README.md").write_bytes(text)
    assert invoke(["render-card", str(manifest), "--check"]).exit_code == 0
    assert invoke(["verify", str(manifest)]).exit_code == 0
    written = invoke(["render-card", str(manifest)])
    assert written.exit_code == 2 and "hand-written and pinned, never rendered" in written.stderr
    (tmp_path / "README.md").write_bytes(b"# edited\n")
    assert invoke(["render-card", str(manifest), "--check"]).exit_code == 1
    assert invoke(["verify", str(manifest)]).exit_code == 1
