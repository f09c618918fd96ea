"""A manifest's card template is untrusted; card.output cannot overwrite release files."""

from __future__ import annotations

from pathlib import Path

import pytest

from hubrelease.card import render_card
from hubrelease.errors import HubReleaseError
from tests.factories.cli import invoke
from tests.factories.releases import write_release


def _release(tmp_path: Path, card: dict[str, object], template: str | None = None) -> Path:
    folder = tmp_path / "rel"
    manifest = write_release(folder, {"model.safetensors": b"w"}, extra_manifest={"card": card})
    if template is not None:
        (folder / "card.md.j2").write_text(template)
    return manifest


def test_template_outside_the_release_folder_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "token.j2"
    secret.write_text("hf_secret_token")
    manifest = _release(tmp_path, {"template": "../token.j2"})
    with pytest.raises(HubReleaseError, match="resolves outside the release folder"):
        render_card(manifest)
    manifest = _release(tmp_path, {"template": str(secret)})
    with pytest.raises(HubReleaseError, match="outside the release folder"):
        render_card(manifest)


@pytest.mark.parametrize(
    "template",
    [
        "{{ self.__init__.__globals__.__builtins__ }}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ cycler.__init__.__globals__.os.popen('echo pwned').read() }}",
        "{% include '/etc/passwd' %}",
        "{% include '../../token.j2' %}",
    ],
)
def test_sandbox_reaches_neither_os_nor_files_outside(tmp_path: Path, template: str) -> None:
    (tmp_path / "token.j2").write_text("hf_secret_token")
    manifest = _release(tmp_path, {"template": "card.md.j2"}, template)
    with pytest.raises(HubReleaseError) as caught:
        render_card(manifest)
    assert "hf_secret_token" not in str(caught.value) and "pwned" not in str(caught.value)


def test_symlink_in_the_template_folder_cannot_leave_it(tmp_path: Path) -> None:
    (tmp_path / "token.txt").write_text("hf_secret_token")
    manifest = _release(tmp_path, {"template": "card.md.j2"}, "{% include 'link.txt' %}")
    (manifest.parent / "link.txt").symlink_to(tmp_path / "token.txt")
    with pytest.raises(HubReleaseError, match="not found"):
        render_card(manifest)


@pytest.mark.parametrize("output", ["model.safetensors", "eval.json", "hubrelease.yaml"])
def test_card_output_may_not_replace_release_files(tmp_path: Path, output: str) -> None:
    manifest = _release(tmp_path, {"output": output})
    if output == "eval.json":
        text = manifest.read_text().replace("artifacts:", "evaluations: [eval.json]\nartifacts:")
        manifest.write_text(text)

    result = invoke(["render-card", str(manifest)])
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert (manifest.parent / "model.safetensors").read_bytes() == b"w"
