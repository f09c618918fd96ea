"""Repo routes of the loopback Hub on hostile cards: the front matter is screened and parsed once."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from hubrelease.loopback import LoopbackHub
from hubrelease.screen import parse_yaml
from tests.factories.cards import alias_bomb
from tests.factories.hub import api_for, ndjson_commit, raw_request, unique_repo


def _with_readme(hub: LoopbackHub, readme: str) -> str:
    """A repo whose card is ``readme``, committed without the client's validate-yaml check."""
    api, repo = api_for(hub), unique_repo("card")
    api.create_repo(repo)
    body = ndjson_commit({"README.md": readme.encode()})
    headers = {"Authorization": f"Bearer {hub.owner_token}"}
    assert raw_request(f"{hub.url}/api/models/{repo}/commit/main", "POST", body, headers)[0] == 200
    return repo


def _info(hub: LoopbackHub, repo: str) -> tuple[int, bytes]:
    status, _, text = raw_request(f"{hub.url}/api/models/{repo}")
    return status, text


def test_a_card_is_parsed_once_however_often_repo_info_is_asked(
    hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[str] = []
    original = parse_yaml

    def counting(text: str | bytes) -> Any:
        parsed.append(str(text))
        return original(text)

    monkeypatch.setattr("hubrelease.loopback.routes.parse_yaml", counting)
    repo = _with_readme(hub, f"---\nlicense: mit\ntags: [{uuid.uuid4().hex}]\n---\n# card\n")
    answers = [_info(hub, repo) for _ in range(3)]
    assert all(status == 200 for status, _ in answers)
    assert [json.loads(text)["cardData"]["license"] for _, text in answers] == ["mit"] * 3
    assert len(parsed) == 1


def test_an_alias_bomb_is_refused_by_the_screen_not_expanded_into_repo_info(hub: LoopbackHub) -> None:
    readme = alias_bomb(width=2, levels=21)  # 2 ** 21 values once expanded, from under 500 bytes
    assert len(readme) < 500
    status, text = _info(hub, _with_readme(hub, readme))
    assert status == 200 and "cardData" not in json.loads(text)  # a broken card: none, as on the Hub
    assert len(text) < 4096  # main answered every repo_info with the 2,097,152 values (~15 MB)


def test_a_card_with_a_date_has_card_data(hub: LoopbackHub) -> None:
    status, text = _info(hub, _with_readme(hub, "---\nlicense: mit\ndate: 2024-01-02\n---\n"))
    assert status == 200  # main: 500, a YAML date is no JSON value
    assert json.loads(text)["cardData"] == {"license": "mit", "date": "2024-01-02"}
