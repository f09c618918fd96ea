"""Trusted publishing against the loopback Hub, through huggingface_hub's own OIDC exchange."""

from __future__ import annotations

import pytest
from huggingface_hub import HfApi, get_token
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.utils import _auth

from hubrelease.loopback import LoopbackHub
from hubrelease.loopback.oidc import Publisher
from tests.factories.hub import unique_repo

TAG_RUN = {
    "repository": "acme/release-repo",
    "ref": "refs/tags/v1.0",
    "workflow_ref": "acme/release-repo/.github/workflows/release.yml@refs/tags/v1.0",
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


@pytest.mark.parametrize(
    "publisher",
    [
        Publisher("acme/other-repo", workflow="release.yml"),
        Publisher("acme/release-repo", workflow="publish.yml"),
        Publisher("acme/release-repo", branch="main", workflow="release.yml"),  # a tag run has no branch
    ],
    ids=["repository", "workflow", "branch"],
)
def test_claims_are_matched_exactly(
    hub: LoopbackHub, monkeypatch: pytest.MonkeyPatch, publisher: Publisher
) -> None:
    repo = unique_repo()
    hub.oidc.trust(repo, publisher)
    with pytest.raises(HfHubHTTPError) as refused:
        _exchange(hub, monkeypatch, repo, TAG_RUN)
    assert refused.value.response is not None and refused.value.response.status_code == 400
