"""Tokens on the loopback Hub: read and write roles, anonymous access, private repos."""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import CommitOperationAdd, HfApi
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

from hubrelease.loopback import LoopbackHub
from hubrelease.loopback.auth import Grant, TokenFileError, read_token_file
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
        anonymous.create_repo("acme/open")
        assert anonymous.repo_info("acme/open").private is False
        with pytest.raises(RepositoryNotFoundError):
            anonymous.repo_info("acme/hidden")
        assert HfApi(endpoint=hub.url, token=READER).repo_info("acme/hidden").private is True
        with pytest.raises(HfHubHTTPError) as caught:
            anonymous.create_repo("acme/mine", private=True)
        assert caught.value.response.status_code == 401


def test_token_file(tmp_path: Path) -> None:
    good = tmp_path / "tokens"
    good.write_text("# tokens\nhf_a\nhf_b read\n\nhf_c write  # ci\nhf_d read acme/* beta/x\n")
    assert read_token_file(good) == {
        "hf_a": Grant("write"),
        "hf_b": Grant("read"),
        "hf_c": Grant("write"),
        "hf_d": Grant("read", ("acme/*", "beta/x")),
    }
    for line in ("hf_a admin", "hf_a read ../x", "hf_a read acme"):
        bad = tmp_path / "bad"
        bad.write_text(line + "\n")
        with pytest.raises(
            TokenFileError, match=r"bad:1: expected 'TOKEN \[read\|write\] \[ns/name\|ns/\* ...\]'"
        ):
            read_token_file(bad)


def test_open_test_server_takes_any_token_as_write(tmp_path: Path) -> None:
    with LoopbackHub(tmp_path / "root") as hub:  # no tokens, anonymous allowed: the test-suite server
        api = HfApi(endpoint=hub.url, token="hf_anything")
        api.create_repo("acme/private", private=True)
        assert api.repo_info("acme/private").private is True
        with pytest.raises(RepositoryNotFoundError):
            HfApi(endpoint=hub.url, token=False).repo_info("acme/private")
