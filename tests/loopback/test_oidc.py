"""Trusted publishing against the loopback Hub, through huggingface_hub's own OIDC exchange."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from huggingface_hub import HfApi, get_token
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.utils import _auth

from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.oidc import EXCHANGE_GRANT, ID_TOKEN_TYPE, Publisher, TrustFileError, read_trust_file
from tests.factories.hub import raw_request, unique_repo

TAG_RUN = {
    "repository": "acme/release-repo",
    "ref": "refs/tags/v1.0",
    "workflow_ref": "acme/release-repo/.github/workflows/release.yml@refs/tags/v1.0",
    "environment": "hub",
}


def _exchange(
    hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch, resource: str, claims: dict[str, str]
) -> str:
    monkeypatch.setattr("huggingface_hub.constants.ENDPOINT", hub.url)  # the audience asked for
    monkeypatch.setattr(_auth, "_OIDC_TOKEN_CACHE", None)
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("HF_OIDC_RESOURCE", resource)
    for name, value in hub.oidc.ci_job(claims, hub.url).items():
        monkeypatch.setenv(name, value)
    token = get_token()
    assert token is not None
    return token


def test_a_matching_publisher_gets_a_token_that_writes_to_that_repo_only(
    hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, other = unique_repo(), unique_repo()
    HfApi(endpoint=hub.url, token=hub.owner_token).create_repo(other, private=True)  # out of scope: unseen
    hub.oidc.trust(repo, Publisher("acme/release-repo", workflow="release.yml"))
    api = HfApi(endpoint=hub.url, token=_exchange(hub, monkeypatch, repo, TAG_RUN))
    api.create_repo(repo)
    api.upload_file(path_or_fileobj=b"hi\n", path_in_repo="notes.md", repo_id=repo)
    with pytest.raises(HfHubHTTPError):
        api.upload_file(path_or_fileobj=b"x\n", path_in_repo="x.md", repo_id=other)


def test_a_dataset_publisher_gets_a_token_for_that_dataset_not_the_model_of_its_name(
    hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The exchanged token's scope keeps the resource's type (``datasets/ns/name``)."""
    repo = unique_repo()
    HfApi(endpoint=hub.url, token=hub.owner_token).create_repo(repo, private=True)  # the model of that name
    hub.oidc.trust(f"datasets/{repo}", Publisher("acme/release-repo", workflow="release.yml"))
    api = HfApi(endpoint=hub.url, token=_exchange(hub, monkeypatch, f"datasets/{repo}", TAG_RUN))
    api.create_repo(repo, repo_type="dataset", private=True)
    api.upload_file(path_or_fileobj=b"hi\n", path_in_repo="notes.md", repo_id=repo, repo_type="dataset")
    with pytest.raises(HfHubHTTPError):
        api.upload_file(path_or_fileobj=b"x\n", path_in_repo="x.md", repo_id=repo)


@pytest.mark.parametrize(
    "publisher",
    [
        Publisher("acme/other-repo", workflow="release.yml"),
        Publisher("acme/release-repo", workflow="publish.yml"),
        Publisher("acme/release-repo", branch="main", workflow="release.yml"),  # a tag run has no branch
        Publisher("acme/release-repo", workflow="release.yml", environment="staging"),
        Publisher("acme/release-repo", workflow="release.yml", ref="refs/tags/v2*"),
        Publisher("acme/release-repo", workflow="release.yml", ref="refs/heads/*"),
    ],
    ids=["repository", "workflow", "branch", "environment", "ref", "ref-kind"],
)
def test_claims_are_matched_exactly(
    hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch, publisher: Publisher
) -> None:
    repo = unique_repo()
    hub.oidc.trust(repo, publisher)
    with pytest.raises(HfHubHTTPError) as refused:
        _exchange(hub, monkeypatch, repo, TAG_RUN)
    assert refused.value.response is not None and refused.value.response.status_code == 400


def test_environment_and_ref_glob_pin_a_publisher_to_tag_runs_of_one_environment(
    hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = unique_repo()
    hub.oidc.trust(
        repo, Publisher("acme/release-repo", workflow="release.yml", environment="hub", ref="refs/tags/v*")
    )
    HfApi(endpoint=hub.url, token=_exchange(hub, monkeypatch, repo, TAG_RUN)).create_repo(repo)
    without_environment = {k: v for k, v in TAG_RUN.items() if k != "environment"}
    with pytest.raises(HfHubHTTPError):
        _exchange(hub, monkeypatch, repo, without_environment)


def _id_token(hub: LoopbackHub, claims: dict[str, str]) -> str:
    """What huggingface_hub asks GitHub for: the job's id token, audience the Hub."""
    job = hub.oidc.ci_job(claims, hub.url)
    status, _, body = raw_request(
        f"{job['ACTIONS_ID_TOKEN_REQUEST_URL']}?audience={hub.url}",
        headers={"Authorization": f"Bearer {job['ACTIONS_ID_TOKEN_REQUEST_TOKEN']}"},
    )
    assert status == 200
    return str(json.loads(body)["value"])


def _post_exchange(hub: LoopbackHub, id_token: str, resource: str) -> tuple[int, dict[str, object]]:
    form = {
        "grant_type": EXCHANGE_GRANT,
        "subject_token_type": ID_TOKEN_TYPE,
        "subject_token": id_token,
        "resource": resource,
    }
    status, _, body = raw_request(
        f"{hub.url}/oauth/token", "POST", json.dumps(form).encode(), {"Content-Type": "application/json"}
    )
    return status, dict(json.loads(body))


def test_an_id_token_is_exchanged_once(hub: LoopbackHub) -> None:
    repo = unique_repo()
    hub.oidc.trust(repo, Publisher("acme/release-repo", workflow="release.yml"))
    id_token = _id_token(hub, TAG_RUN)
    first, answer = _post_exchange(hub, id_token, repo)
    assert first == 200 and answer["token_type"] == "bearer"
    replayed, refusal = _post_exchange(hub, id_token, repo)  # e.g. lifted from a job's log
    assert replayed == 400 and refusal["error"] == "invalid_grant"


def test_an_exchanged_token_stops_writing_after_expires_in(
    hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = unique_repo()
    hub.oidc.trust(repo, Publisher("acme/release-repo", workflow="release.yml"))
    status, answer = _post_exchange(hub, _id_token(hub, TAG_RUN), repo)
    assert status == 200 and answer["expires_in"] == 3600
    api = HfApi(endpoint=hub.url, token=str(answer["access_token"]))
    api.create_repo(repo)
    start = hub.access.clock()
    monkeypatch.setattr(hub.access, "clock", lambda: start + 3599)
    api.upload_file(path_or_fileobj=b"in time\n", path_in_repo="a.md", repo_id=repo)
    monkeypatch.setattr(hub.access, "clock", lambda: start + 3601)
    with pytest.raises(HfHubHTTPError) as refused:  # the test Hub takes unknown tokens; not this one
        api.upload_file(path_or_fileobj=b"late\n", path_in_repo="b.md", repo_id=repo)
    assert refused.value.response is not None and refused.value.response.status_code == 401


def test_trust_file(tmp_path: Path) -> None:
    good = tmp_path / "trust"
    good.write_text(
        "# publishers\n"
        "publisher acme/drafter repository=acme/rel workflow=release.yml environment=hub ref=refs/tags/v*\n"
        "publisher datasets/acme/data repository=acme/rel  # any workflow\n"
        "job s3cret repository=acme/rel ref=refs/tags/v1 environment=hub\n"
    )
    trusted = read_trust_file(good)
    assert trusted.publishers == {
        "acme/drafter": [
            Publisher("acme/rel", workflow="release.yml", environment="hub", ref="refs/tags/v*")
        ],
        "datasets/acme/data": [Publisher("acme/rel")],
    }
    assert trusted.mint_id_token("s3cret", "http://hub") is not None
    assert trusted.mint_id_token("other", "http://hub") is None
    for line in (
        "publisher acme/drafter workflow=release.yml",  # no repository
        "publisher acme/drafter repository=acme/rel color=red",  # no such claim
        "publisher acme/drafter repository=",
        "job s3cret repository=acme/rel branch=main",  # a job carries claims, not a publisher's keys
        "trust acme/drafter repository=acme/rel",
        "publisher acme/drafter",
    ):
        bad = tmp_path / "bad"
        bad.write_text(line + "\n")
        with pytest.raises(TrustFileError, match=r"bad:1: expected 'publisher RESOURCE repository="):
            read_trust_file(bad)
