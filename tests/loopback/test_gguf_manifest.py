"""``/v2/<repo>/manifests/<tag>``: the request llama.cpp's ``common_get_hf_file`` sends, the answer it reads."""

from __future__ import annotations

import json
from typing import Any

from huggingface_hub import CommitOperationAdd

from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.gguf_manifest import NO_TAG, NOT_GGUF, quant_label, resolve_tag
from tests.factories.hub import api_for, raw_request, unique_repo

# What common_get_hf_file sends (llama.cpp common/arg.cpp, b5xxx): Accept json, a llama-cpp User-Agent.
LLAMA_CPP = {"Accept": "application/json", "User-Agent": "llama-cpp"}


def _repo(hub: LoopbackHub, files: list[str]) -> str:
    repo = unique_repo("gguf")
    api = api_for(hub)
    api.create_repo(repo)
    ops = [CommitOperationAdd(p, f"GGUF {p}".encode()) for p in files]
    api.create_commit(repo, ops, commit_message="files")
    return repo


def _ask(hub: LoopbackHub, repo: str, tag: str) -> tuple[int, dict[str, Any]]:
    headers = {**LLAMA_CPP, "Authorization": f"Bearer {hub.owner_token}"}
    status, _, body = raw_request(f"{hub.url}/v2/{repo}/manifests/{tag}", headers=headers)
    return status, json.loads(body)


def test_tag_names_the_file_and_its_lfs_pins(hub: LoopbackHub) -> None:
    repo = _repo(hub, ["drafter-q8_0.gguf", "drafter-F16.gguf", "README.md", "mmproj-f16.gguf"])
    status, payload = _ask(hub, repo, "q8_0")
    assert status == 200
    gguf = payload["ggufFile"]
    assert isinstance(gguf, dict)
    assert gguf["rfilename"] == "drafter-q8_0.gguf"
    assert gguf["size"] == len(b"GGUF drafter-q8_0.gguf")
    mmproj = payload["mmprojFile"]
    assert isinstance(mmproj, dict) and mmproj["rfilename"] == "mmproj-f16.gguf"
    assert _ask(hub, repo, "F16")[1]["ggufFile"]["rfilename"] == "drafter-F16.gguf"


def test_latest_prefers_q4_k_m_then_any_and_unknown_tags_are_refused(hub: LoopbackHub) -> None:
    repo = _repo(hub, ["a-Q8_0.gguf", "b-Q4_K_M-00001-of-00002.gguf", "b-Q4_K_M-00002-of-00002.gguf"])
    assert _ask(hub, repo, "latest")[1]["ggufFile"]["rfilename"] == "b-Q4_K_M-00001-of-00002.gguf"
    only_q8 = _repo(hub, ["a-Q8_0.gguf"])
    assert _ask(hub, only_q8, "latest")[1]["ggufFile"]["rfilename"] == "a-Q8_0.gguf"
    assert _ask(hub, only_q8, "Q6_K") == (400, {"error": NO_TAG})
    assert _ask(hub, _repo(hub, ["model.safetensors"]), "latest") == (400, {"error": NOT_GGUF})


def test_quant_labels_follow_the_hubs_reading_of_names() -> None:
    assert quant_label("x/Ornith-DFLASH-q8_0.gguf") == "Q8_0"
    assert quant_label("tiny-qwen3-f16.gguf") == "F16"
    assert quant_label("m-Q4_K_M.gguf") == "Q4_K_M"
    # The Hub's list has no ik types: IQ2_KS reads as its longest known prefix.
    assert quant_label("Ornith-IQ2_KS-00001-of-00005.gguf") == "Q2_K"
    assert quant_label("Ornith-DFLASH-m1-q4.gguf") is None
    # Two files of one tag: one answer, the first in path order.
    assert resolve_tag(["b-q8_0.gguf", "a-Q8_0.gguf"], "Q8_0") == ("a-Q8_0.gguf", None)


def test_private_repo_is_invisible_without_a_token(hub: LoopbackHub) -> None:
    repo = unique_repo("gguf")
    api = api_for(hub)
    api.create_repo(repo, private=True)
    api.create_commit(repo, [CommitOperationAdd("d-q8_0.gguf", b"GGUF")], commit_message="f")
    status, _, _ = raw_request(f"{hub.url}/v2/{repo}/manifests/Q8_0", headers=LLAMA_CPP)
    assert status in (401, 404)
    assert _ask(hub, repo, "Q8_0")[0] == 200
