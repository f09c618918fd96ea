"""Hostile clients against a loopback Hub shared by tenants: no private byte, nor its existence, leaks.

Each test is one of a campaign's leaks, run as the attacker would with what a published manifest
tells (a private file's sha256 and size; a public prefix of its bytes), beside a client of the same
Hub that may read it (so the refusals are about access, not a broken route).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from huggingface_hub import CommitOperationAdd, HfApi, RepoFile, constants
from huggingface_hub.errors import EntryNotFoundError, HfHubHTTPError, RepositoryNotFoundError

from hubrelease_loopback import LoopbackHub, RepoKey
from hubrelease_loopback.auth import Grant
from hubrelease_loopback.xetformat import hash_hex
from tests.factories.hub import raw_request
from tests.factories.xet_shards import ShardRecorder, cas_auth, claim, commit_line

OWNER, READER, OTHER = "hf_owner_token", "hf_acme_reader", "hf_beta_writer"
TOKENS = {OWNER: Grant("write"), READER: Grant("read", ("acme/*",)), OTHER: Grant("write", ("beta/*",))}
SECRET = b"public header\n" * 4_000 + os.urandom(700_000)  # 756 KB, the last 700 KB secret


def _private_release(hub: LoopbackHub, tmp_path: Path) -> tuple[HfApi, str, str]:
    """The owner's private repo holding SECRET as w.safetensors; returns (owner api, sha256, repo)."""
    owner = HfApi(endpoint=hub.url, token=OWNER)
    owner.create_repo("acme/private", private=True)
    owner.create_commit("acme/private", [CommitOperationAdd("w.safetensors", SECRET)], commit_message="w")
    return owner, hashlib.sha256(SECRET).hexdigest(), "acme/private"


@pytest.mark.parametrize("transport", ["lfs", "xet"])
def test_a_commit_line_naming_a_private_object_lands_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", transport == "lfs")
    with LoopbackHub(tmp_path / "root", tokens=TOKENS, allow_anonymous=True) as hub:
        owner, sha, _ = _private_release(hub, tmp_path)
        anonymous = HfApi(endpoint=hub.url, token=False)
        anonymous.create_repo("mallory/public")
        for size in (len(SECRET), None):  # as pushed, and as a copy (no size)
            status, text = commit_line(hub, "mallory/public", sha, size)
            assert status == 422 and b"was not uploaded" in text, text
        assert anonymous.list_repo_files("mallory/public") == [".gitattributes"]
        # The batch tells the attacker nothing: upload actions, as for an object never seen.
        batch = {"operation": "upload", "objects": [{"oid": sha, "size": len(SECRET)}], "hash_algo": "sha256"}
        status, _, text = raw_request(
            f"{hub.url}/mallory/public.git/info/lfs/objects/batch",
            "POST",
            json.dumps(batch).encode(),
            {"Content-Type": "application/vnd.git-lfs+json"},
        )
        [answer] = json.loads(text)["objects"]
        assert status == 200 and "upload" in answer["actions"]
        status, _, _ = raw_request(
            answer["actions"]["verify"]["href"],
            "POST",
            json.dumps({"oid": sha, "size": len(SECRET)}).encode(),
        )
        assert status == 404
        # The owner copies it into another of its repos (CommitOperationCopy sends no size).
        owner.create_repo("acme/copy", private=True)
        assert commit_line(hub, "acme/copy", sha, None)[0] == 404  # anonymous: a private repo is not there
        status, _, _ = raw_request(
            f"{hub.url}/api/models/acme/copy/commit/main",
            "POST",
            _ndjson_copy(sha),
            {"Content-Type": "application/x-ndjson", "Authorization": f"Bearer {OWNER}"},
        )
        assert status == 200
        path = owner.hf_hub_download("acme/copy", "stolen.safetensors", cache_dir=tmp_path / "c")
        assert Path(path).read_bytes() == SECRET
        assert hub.server_errors == []


def _ndjson_copy(sha: str) -> bytes:
    lines = [
        {"key": "header", "value": {"summary": "copy"}},
        {"key": "lfsFile", "value": {"path": "stolen.safetensors", "algo": "sha256", "oid": sha}},
    ]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def test_xet_dedup_and_reconstructions_answer_only_for_repos_the_token_reads(tmp_path: Path) -> None:
    with LoopbackHub(tmp_path / "root", tokens=TOKENS, allow_anonymous=True) as hub:
        owner, _, repo = _private_release(hub, tmp_path)
        [info] = owner.get_paths_info(repo, ["w.safetensors"])
        assert isinstance(info, RepoFile)
        file_hash = info.xet_hash
        assert file_hash is not None  # it went through hf_xet
        # What an attacker holding the public prefix computes: the hash of the file's first chunk.
        record = hub.xet.file_record(file_hash)
        assert record is not None
        first_xorb = record["segments"][0][0]
        first_chunk = hash_hex(hub.xet.xorb_index(first_xorb)[0].hash)
        HfApi(endpoint=hub.url, token=False).create_repo("mallory/public")
        HfApi(endpoint=hub.url, token=OTHER).create_repo("beta/own")
        attackers = [cas_auth(hub, "mallory/public", None), cas_auth(hub, "beta/own", OTHER)]
        readers = [cas_auth(hub, repo, OWNER), cas_auth(hub, repo, READER)]
        for auth, answer in [(a, 404) for a in attackers] + [(r, 200) for r in readers]:
            dedup = raw_request(f"{hub.url}/__xet/v1/chunks/default/{first_chunk}", headers=auth)
            plan = raw_request(f"{hub.url}/__xet/v1/reconstructions/{file_hash}", headers=auth)
            assert (dedup[0], plan[0]) == (answer, answer)
            if answer == 404:  # exactly as for a file nobody stored
                missing = raw_request(f"{hub.url}/__xet/v1/reconstructions/{'0' * 64}", headers=auth)
                assert json.loads(plan[2])["error"].replace(file_hash, "X") == json.loads(missing[2])[
                    "error"
                ].replace("0" * 64, "X")
        assert hub.server_errors == []


@pytest.mark.parametrize("transport", ["lfs", "xet"])
def test_a_copy_of_a_file_uploaded_over_lfs_needs_the_source_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    """A plain LFS file's ``xetHash`` makes it copyable, to those who read its repo only: a stranger
    holding its sha256 and Xet hash (from a manifest) gets it neither through the private source nor
    through a duplicate route of its own repo, while the owner's copy of the same file works."""
    with LoopbackHub(tmp_path / "root", tokens=TOKENS, allow_anonymous=True) as hub:
        with monkeypatch.context() as patch:
            patch.setattr(constants, "HF_HUB_DISABLE_XET", True)
            owner, sha, repo = _private_release(hub, tmp_path)
        monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", transport == "lfs")
        [info] = owner.get_paths_info(repo, ["w.safetensors"])
        assert isinstance(info, RepoFile) and info.xet_hash is not None
        stranger = HfApi(endpoint=hub.url, token=OTHER)
        stranger.create_repo("beta/own")
        with pytest.raises(RepositoryNotFoundError):
            stranger.copy_files(f"hf://{repo}/w.safetensors", "hf://beta/own/w.safetensors")
        claim = {"sha256": sha, "xetHash": info.xet_hash, "filename": "w.safetensors"}
        for source in (repo, "beta/own"):
            status, _, text = raw_request(
                f"{hub.url}/api/models/{source}/lfs-files/duplicate",
                "POST",
                json.dumps({"target": {"type": "model", "name": "beta/own"}, "files": [claim]}).encode(),
                {"Content-Type": "application/json", "Authorization": f"Bearer {OTHER}"},
            )
            assert status == 404 if source == repo else json.loads(text)["failed"][0]["sha256"] == sha
        assert commit_line(hub, "beta/own", sha, None, OTHER)[0] == 422
        assert stranger.list_repo_files("beta/own") == [".gitattributes"]
        owner.create_repo("acme/copy", private=True)
        owner.copy_files(f"hf://{repo}/w.safetensors", "hf://acme/copy/w.safetensors")
        path = owner.hf_hub_download("acme/copy", "w.safetensors", cache_dir=tmp_path / "c")
        assert Path(path).read_bytes() == SECRET
        assert hub.server_errors == []


def test_token_roles_are_scoped_to_their_repos(tmp_path: Path) -> None:
    with LoopbackHub(tmp_path / "root", tokens=TOKENS, allow_anonymous=False) as hub:
        owner = HfApi(endpoint=hub.url, token=OWNER)
        owner.create_repo("acme/private", private=True)
        owner.create_repo("gamma/private", private=True)
        reader, other = HfApi(endpoint=hub.url, token=READER), HfApi(endpoint=hub.url, token=OTHER)
        assert reader.repo_info("acme/private").private is True  # inside its scope
        for api in (reader, other):
            with pytest.raises(RepositoryNotFoundError):  # outside: as if it did not exist
                api.repo_info("gamma/private")
        other.create_repo("beta/own", private=True)
        with pytest.raises(HfHubHTTPError) as caught:
            other.create_repo("acme/intruder")
        assert caught.value.response.status_code == 403
        owner.create_repo("acme/public")
        with pytest.raises(HfHubHTTPError) as caught:  # readable by all, writable only in scope
            other.create_commit("acme/public", [CommitOperationAdd("x.txt", b"x")], commit_message="x")
        assert caught.value.response.status_code == 403
        with pytest.raises(HfHubHTTPError) as caught:
            reader.create_commit("acme/private", [CommitOperationAdd("x.txt", b"x")], commit_message="x")
        assert caught.value.response.status_code == 403
        assert hub.server_errors == []


def test_a_repo_created_again_under_a_deleted_ones_name_reaches_none_of_its_objects(tmp_path: Path) -> None:
    with LoopbackHub(tmp_path / "root", tokens=TOKENS, allow_anonymous=True) as hub:
        owner, sha, repo = _private_release(hub, tmp_path)
        stale = hub.store.tenant(RepoKey("model", repo))
        owner.delete_repo(repo)
        HfApi(endpoint=hub.url, token=False).create_repo(repo)  # public now, anyone's
        assert hub.store.tenant(RepoKey("model", repo)) != stale
        assert commit_line(hub, repo, sha, len(SECRET))[0] == 422
        assert hub.server_errors == []


@pytest.mark.parametrize("victim", ["xet", "lfs"])
def test_a_shard_claiming_another_tenants_sha256_reaches_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, victim: str
) -> None:
    # The victim's private file arrives through hf_xet or plain LFS; the attacker, who may write only
    # its own namespace, registers a file of its own through hf_xet, then sends that file's shard
    # again claiming the victim's sha256 (the rest of the shard, terms and Xet hash, stays true).
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", victim == "lfs")
    with LoopbackHub(tmp_path / "root", tokens=TOKENS, allow_anonymous=False) as hub:
        _, sha, repo = _private_release(hub, tmp_path)
        monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)
        recorder = ShardRecorder(hub.xet, monkeypatch)
        mallory = HfApi(endpoint=hub.url, token=OTHER)
        mallory.create_repo("beta/own", private=True)
        mine = os.urandom(300_000)
        mallory.create_commit("beta/own", [CommitOperationAdd("mine.safetensors", mine)], commit_message="m")
        [shard] = recorder.shards
        forged = claim(shard, hashlib.sha256(mine).hexdigest(), sha)
        auth = cas_auth(hub, "beta/own", OTHER, write=True)
        v1 = raw_request(f"{hub.url}/__xet/v1/shards", "POST", forged, auth)
        v2 = raw_request(f"{hub.url}/__xet/v2/shards", "POST", forged, auth)
        commits = [commit_line(hub, "beta/own", sha, size, OTHER)[0] for size in (len(SECRET), None)]
        stolen = []
        for transport in ("xet", "lfs"):  # the attacker's download, whichever way it asks
            monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", transport == "lfs")
            with contextlib.suppress(EntryNotFoundError):
                path = mallory.hf_hub_download(
                    "beta/own", "stolen.safetensors", cache_dir=tmp_path / transport
                )
                stolen.append(Path(path).read_bytes())
        xet_hash = hub.xet.xet_hash_for(sha)  # the victim's Xet file, asked for by its hash
        plans = [
            raw_request(
                f"{hub.url}/__xet/v1/reconstructions/{xet_hash}", headers=cas_auth(hub, "beta/own", OTHER)
            )[0]
            for _ in [xet_hash]
            if xet_hash
        ]
        assert stolen == [] and set(plans) <= {404}
        assert v1[0] == 400 and b"claims another sha256 or size" in v1[2], v1
        assert v2[0] == 200 and json.loads(v2[2].splitlines()[-1])["type"] == "error"
        assert commits == [422, 422]
        owner = HfApi(endpoint=hub.url, token=OWNER)  # the victim still reads its own file
        assert (
            Path(owner.hf_hub_download(repo, "w.safetensors", cache_dir=tmp_path / "v")).read_bytes()
            == SECRET
        )
        assert hub.server_errors == []


def test_creating_or_moving_onto_a_hidden_name_answers_as_for_a_free_one(tmp_path: Path) -> None:
    with LoopbackHub(tmp_path / "root", tokens=TOKENS, allow_anonymous=True) as hub:
        _private_release(hub, tmp_path)  # acme/private
        anonymous = HfApi(endpoint=hub.url, token=False)
        anonymous.create_repo("mallory/public")
        outsiders = [{}, {"Authorization": f"Bearer {OTHER}"}]  # anonymous, a token scoped elsewhere
        answers = []
        for headers in outsiders:
            for name in ("private", "free"):
                create = json.dumps({"name": name, "organization": "acme"}).encode()
                move = json.dumps({"fromRepo": "mallory/public", "toRepo": f"acme/{name}"}).encode()
                for route, body in (("create", create), ("move", move)):
                    status, _, text = raw_request(f"{hub.url}/api/repos/{route}", "POST", body, headers)
                    answers.append((route, status, text))
        assert {status for _, status, _ in answers} == {403}
        assert len({(route, text) for route, _, text in answers}) == 2  # one answer per route, byte for byte
        with pytest.raises(HfHubHTTPError) as caught:  # exist_ok: the client asks repo_info, 404 either way
            anonymous.create_repo("acme/private", exist_ok=True)
        assert caught.value.response.status_code == 403
        assert [m.id for m in anonymous.list_models(author="acme")] == []
        anonymous.create_repo("mallory/free")  # a namespace holding no private repo stays open
        assert hub.server_errors == []


def test_another_tenants_objects_are_refused_by_the_lookup_that_refuses_unknown_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No timing is asserted: both answers must come from the same calls, so they cost the same.
    with LoopbackHub(tmp_path / "root", tokens=TOKENS, allow_anonymous=True) as hub:
        _, sha, _ = _private_release(hub, tmp_path)
        record = hub.xet.file_record(str(hub.xet.xet_hash_for(sha)))
        assert record is not None
        chunk = hash_hex(hub.xet.xorb_index(record["segments"][0][0])[0].hash)  # the file's first chunk
        HfApi(endpoint=hub.url, token=OTHER).create_repo("beta/own", private=True)
        cas = cas_auth(hub, "beta/own", OTHER)
        read: list[str] = []

        def counted(owner: object, name: str) -> None:
            original = getattr(owner, name)

            def call(*args: Any) -> Any:
                read.append(name if name != "_path" else f"xet {args[0]}")
                return original(*args)

            monkeypatch.setattr(owner, name, call)

        for name in ("object_size", "holds", "refs"):
            counted(hub.store, name)
        counted(hub.xet, "_path")
        unknown = hashlib.sha256(b"nobody stored this").hexdigest()
        answers: dict[tuple[str, bool], tuple[int, bytes, list[str]]] = {}
        for digest in (sha, unknown):
            read.clear()
            status, text = commit_line(hub, "beta/own", digest, len(SECRET), OTHER)
            answers["commit", digest == sha] = (status, text.replace(digest.encode(), b"X"), sorted(read))
        for digest in (chunk, unknown):
            read.clear()
            status, _, text = raw_request(f"{hub.url}/__xet/v1/chunks/default/{digest}", headers=cas)
            answers["dedup", digest == chunk] = (status, text.replace(digest.encode(), b"X"), sorted(read))
        assert answers["commit", True] == answers["commit", False]
        assert answers["commit", True][0] == 422 and "object_size" not in answers["commit", True][2]
        assert answers["dedup", True] == answers["dedup", False]
        assert answers["dedup", True][0] == 404 and "xet shards" not in answers["dedup", True][2]
        assert hub.server_errors == []


def test_a_fetch_url_serves_only_the_bytes_its_reconstruction_named(tmp_path: Path) -> None:
    # The owner publishes the first half of a private file: hf_xet deduplicates it against the
    # private file's xorb, so the public file's reconstruction names that xorb, which also holds the
    # private half. A reader of the public file gets a URL for the chunks it names, not the xorb.
    with LoopbackHub(tmp_path / "root", tokens=TOKENS, allow_anonymous=True) as hub:
        owner = HfApi(endpoint=hub.url, token=OWNER)
        private, public = os.urandom(1_200_000), slice(0, 600_000)
        for name, data, hidden in (("acme/private", private, True), ("acme/public", private[public], False)):
            owner.create_repo(name, private=hidden)
            owner.create_commit(name, [CommitOperationAdd("w.safetensors", data)], commit_message="w")
        hashes = {}
        for name in ("acme/private", "acme/public"):
            [info] = owner.get_paths_info(name, ["w.safetensors"])
            assert isinstance(info, RepoFile) and info.xet_hash is not None
            hashes[name] = info.xet_hash
        record = hub.xet.file_record(hashes["acme/private"])
        assert record is not None
        [mixed] = {xorb for xorb, *_ in record["segments"]}
        status, _, body = raw_request(
            f"{hub.url}/__xet/v1/reconstructions/{hashes['acme/public']}",
            headers=cas_auth(hub, "acme/public", None),
        )
        assert status == 200
        [entry, *_] = json.loads(body)["fetch_info"][mixed]  # the precondition: the public file uses it
        named = entry["url_range"]
        assert (
            raw_request(entry["url"], headers={"Range": f"bytes={named['start']}-{named['end']}"})[0] == 206
        )
        whole = hub.xet.xorb_path(mixed).stat().st_size
        for asked in (f"bytes=0-{whole - 1}", f"bytes={named['end'] + 1}-{whole - 1}", "bytes=-100"):
            assert raw_request(entry["url"], headers={"Range": asked})[0] == 403, asked
        assert hub.server_errors == []
