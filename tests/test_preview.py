"""`hubrelease preview`: the release committed as push commits it, to an embedded loopback Hub
that serves its page; the page's problems reported; nothing served once it is closed."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from hubrelease.errors import CheckFailed
from hubrelease.preview import open_preview
from tests.factories.cli import run_cli
from tests.factories.hub import raw_request
from tests.factories.releases import write_hand_written_release


def test_the_example_previews_as_pushed_with_no_problem(repo_root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "example"
    shutil.copytree(repo_root / "manifests" / "example", folder)
    with open_preview(folder / "hubrelease.yaml") as shown:
        assert shown.problems == []
        assert shown.url == f"{shown.hub.url}/hubrelease-example/tiny-dflash-drafter"
        status, headers, body = raw_request(shown.url)
        page = body.decode()
        assert status == 200 and headers["x-repo-commit"] == shown.commit
        assert "<td>Tiny DFlash2</td>" in page and "244.5" in page  # the card's table, from evaluation.json
        published = {f.path for f in shown.plan.files}
        assert published >= {"README.md", "hubrelease.yaml", "model.safetensors", "evaluation.json"}
        assert all(f'data-path="{path}"' in page for path in published)
        port = urlsplit(shown.hub.url).port
        assert port is not None
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass  # closed: nothing is served any more


def test_problems_are_listed_and_the_card_is_still_shown(tmp_path: Path) -> None:
    card = (
        "---\nlicense: apache-2.0\nbase_model: not a repo id\n---\n# Drafter\n\n"
        "![speed](charts/speed.svg) ![gone](charts/missing.svg) [eval](evaluation.json) [top](#drafter)\n"
    )
    manifest = write_hand_written_release(tmp_path / "release", card)
    code, out, err = run_cli("preview", manifest, "--check", "--json")
    assert code == 1, err
    payload = json.loads(out)
    assert payload["command"] == "preview" and payload["repo_id"] == "acme/tiny-drafter"
    assert [(p["kind"], p["message"]) for p in payload["problems"]] == [
        ("metadata", "\"base_model\": 'not a repo id' is not a valid model id (namespace/name)"),
        ("image", "image charts/missing.svg: no file charts/missing.svg in the repo"),
        ("link", "link evaluation.json: no file evaluation.json in the repo"),
    ]
    code, _, err = run_cli("preview", manifest, "--check")
    assert code == 1 and "warning: image: image charts/missing.svg: no file" in err and "3 problem(s)" in err


def test_a_release_push_would_refuse_is_not_previewed(tmp_path: Path) -> None:
    manifest = write_hand_written_release(tmp_path / "release", "# Card\n")
    (tmp_path / "release" / "README.md").write_text("# Card, edited after it was pinned\n")
    with pytest.raises(CheckFailed, match="local verify found"):
        open_preview(manifest)
    code, _, err = run_cli("preview", manifest, "--check")
    assert code == CheckFailed.exit_code and err.startswith("error: ")


def test_a_port_in_use_is_a_usage_error(tmp_path: Path) -> None:
    manifest = write_hand_written_release(tmp_path / "release", "# Card\n")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, err = run_cli("preview", manifest, "--check", "--port", str(port))
    assert code == 2 and err == f"error: --port: cannot serve on 127.0.0.1:{port}: Address already in use\n"
