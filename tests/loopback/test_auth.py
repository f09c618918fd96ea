"""Tokens on the loopback Hub: read and write roles, anonymous access, private repos."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

from hubrelease_loopback import LoopbackHub, RepoKey
from hubrelease_loopback.auth import Grant, TokenFileError, read_token_file
from tests.factories.hub import raw_request

WRITER, READER = "hf_test_writer_token", "hf_test_reader_token"
WEIGHTS = bytes(range(256)) * 2_000


def test_tokens_required_read_role_reads_write_role_writes(tmp_path: Path) -> None:
    with LoopbackHub(
        tmp_path / "root",
        tokens={WRITER: "write", READER: "read"},
        allow_anonymous=False,
        anonymous_reads=False,
    ) as hub:
        writer = HfApi(endpoint=hub.url, token=WRITER)
        reader = HfApi(endpoint=hub.url, token=READER)
        writer.create_repo("acme/secured")
        writer.create_commit(
            "acme/secured", [CommitOperationAdd("w.safetensors", WEIGHTS)], commit_message="w"
        )  # through Xet: the write token also fetches the Xet write token
        path = reader.hf_hub_download("acme/secured", "w.safetensors", cache_dir=tmp_path / "cache")
        assert Path(path).read_bytes() == WEIGHTS
        with pytest.raises(HfHubHTTPError) as caught:
            reader.create_commit("acme/secured", [CommitOperationAdd("x.txt", b"x")], commit_message="x")
        assert caught.value.response.status_code == 403
        assert raw_request(f"{hub.url}/api/models/acme/secured")[0] == 401
        status, _, body = raw_request(
            f"{hub.url}/api/models/acme/secured", headers={"Authorization": "Bearer hf_wrong"}
        )
        assert status == 401 and b"hf_wrong" not in body
        assert (
            raw_request(
                f"{hub.url}/api/models/acme/secured/xet-write-token/main",
                headers={"Authorization": f"Bearer {READER}"},
            )[0]
            == 403
        )
        assert hub.server_errors == []


def test_private_repos_need_a_token_even_when_anonymous_is_allowed(tmp_path: Path) -> None:
    with LoopbackHub(tmp_path / "root", tokens={WRITER: "write", READER: "read"}) as hub:
        HfApi(endpoint=hub.url, token=WRITER).create_repo("acme/hidden", private=True)
        anonymous = HfApi(endpoint=hub.url, token=False)
        anonymous.create_repo("mallory/open")  # a namespace holding no private repo (test_tenancy)
        assert anonymous.repo_info("mallory/open").private is False
        with pytest.raises(RepositoryNotFoundError):
            anonymous.repo_info("acme/hidden")
        assert HfApi(endpoint=hub.url, token=READER).repo_info("acme/hidden").private is True
        with pytest.raises(HfHubHTTPError) as caught:
            anonymous.create_repo("acme/mine", private=True)
        assert caught.value.response.status_code == 401


def test_token_file(tmp_path: Path) -> None:
    good = tmp_path / "tokens"
    good.write_text(
        "# tokens\nhf_a\nhf_b read\n\nhf_c write  # ci\nhf_d read acme/* beta/x\n"
        "hf_e write datasets/acme/x models/beta/* spaces/gamma/y\n"
    )
    assert read_token_file(good) == {
        "hf_a": Grant("write"),
        "hf_b": Grant("read"),
        "hf_c": Grant("write"),
        "hf_d": Grant("read", ("acme/*", "beta/x")),
        "hf_e": Grant("write", ("datasets/acme/x", "models/beta/*", "spaces/gamma/y")),
    }
    for line in (
        "hf_a admin",
        "hf_a read ../x",
        "hf_a read acme",
        "hf_a read buckets/acme/x",
        "hf_a read a/b/c/d",
    ):
        bad = tmp_path / "bad"
        bad.write_text(line + "\n")
        with pytest.raises(
            TokenFileError, match=r"bad:1: expected 'TOKEN \[read\|write\] \[\[TYPE/\]ns/name"
        ):
            read_token_file(bad)


@pytest.mark.parametrize(
    ("scope", "covered"),
    [
        ("acme/x", {"model"}),  # a bare repo id names a model
        ("acme/*", {"model", "dataset", "space"}),  # a namespace holds every type
        ("models/acme/x", {"model"}),
        ("models/acme/*", {"model"}),
        ("datasets/acme/x", {"dataset"}),
        ("spaces/acme/*", {"space"}),
        ("datasets/acme/y", set()),
        ("datasets/beta/*", set()),
    ],
)
def test_a_scope_covers_the_repo_types_it_names(scope: str, covered: set[str]) -> None:
    grant = Grant("write", (scope,))
    assert {t for t in ("model", "dataset", "space") if grant.covers(RepoKey(t, "acme/x"))} == covered


def test_a_model_token_neither_creates_reads_nor_deletes_the_dataset_of_its_name(tmp_path: Path) -> None:
    model_token, data_token = "hf_model_only", "hf_datasets_only"
    tokens = {
        WRITER: Grant("write"),
        model_token: Grant("write", ("acme/x",)),
        data_token: Grant("write", ("datasets/acme/*",)),
    }
    with LoopbackHub(tmp_path / "root", tokens=tokens, allow_anonymous=False) as hub:
        owner, model = HfApi(endpoint=hub.url, token=WRITER), HfApi(endpoint=hub.url, token=model_token)
        data = HfApi(endpoint=hub.url, token=data_token)
        model.create_repo("acme/x", private=True)  # its own repo: created, read
        assert model.repo_info("acme/x").private is True
        with pytest.raises(HfHubHTTPError) as caught:
            model.create_repo("acme/x", repo_type="dataset", private=True)
        assert caught.value.response.status_code == 403
        owner.create_repo("acme/x", repo_type="dataset", private=True)
        with pytest.raises(RepositoryNotFoundError):
            model.repo_info("acme/x", repo_type="dataset")
        with pytest.raises(RepositoryNotFoundError):
            model.delete_repo("acme/x", repo_type="dataset")
        assert owner.repo_info("acme/x", repo_type="dataset").private is True  # still there
        assert data.repo_info("acme/x", repo_type="dataset").private is True  # the dataset token's
        with pytest.raises(RepositoryNotFoundError):
            data.repo_info("acme/x")  # but not the model of that name
        data.delete_repo("acme/x", repo_type="dataset")
        assert hub.server_errors == []


def test_open_test_server_takes_any_token_as_write(tmp_path: Path) -> None:
    with LoopbackHub(tmp_path / "root") as hub:  # no tokens, anonymous allowed: the test-suite server
        api = HfApi(endpoint=hub.url, token="hf_anything")
        api.create_repo("acme/private", private=True)
        assert api.repo_info("acme/private").private is True
        with pytest.raises(RepositoryNotFoundError):
            HfApi(endpoint=hub.url, token=False).repo_info("acme/private")
