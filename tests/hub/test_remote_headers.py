"""Header-only reads of Hub files over real HTTP: same results as the local readers, few requests, few bytes."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from huggingface_hub import HfApi

from hubrelease.errors import FormatError, HubUnavailable, InputError, NotFoundError
from hubrelease.hub.ranged import RangedFile
from hubrelease.hub.remote_headers import INITIAL_READ, RemoteRepo, read_gguf, summarize
from hubrelease_loopback import LoopbackHub
from hubrelease_loopback.faults import FILE_ROUTES
from tests.factories.cli import run_cli
from tests.factories.drafters import write_vocab_gguf
from tests.factories.hub import api_for, head, logged, unique_repo, upload_files
from tests.factories.split_models import write_ik_split_target, write_sharded_safetensors


def publish(hub: LoopbackHub, folder: Path) -> str:
    repo = unique_repo("target")
    files = {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }
    upload_files(api_for(hub), repo, files)
    return repo


@pytest.fixture(scope="module")
def split_set(loopback_hub: LoopbackHub, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("split") / "gguf"
    write_ik_split_target(folder)
    return folder, publish(loopback_hub, folder)


@pytest.fixture(scope="module")
def vocab(loopback_hub: LoopbackHub, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("vocab") / "v"
    folder.mkdir()
    write_vocab_gguf(folder / "target.gguf", 250_000, type_id=144)
    return folder, publish(loopback_hub, folder)


@pytest.fixture(scope="module")
def sharded(loopback_hub: LoopbackHub, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    folder = write_sharded_safetensors(tmp_path_factory.mktemp("st") / "drafter")
    return folder, publish(loopback_hub, folder)


def local_json(path: Path) -> dict[str, Any]:
    code, out, err = run_cli("inspect", str(path), "--json")
    assert code == 0, err
    return dict(json.loads(out))


def remote_json(hub: LoopbackHub, uri: str) -> dict[str, Any]:
    code, out, err = run_cli("inspect", uri, "--json", "--endpoint", hub.url)
    assert code == 0, err
    return dict(json.loads(out))


def same_but_paths(remote: dict[str, object], local: dict[str, object], repo: str) -> None:
    """Everything equal; remote file paths are the local names at the served commit."""
    remote = dict(remote)
    stats = remote.pop("requests"), remote.pop("fetched_bytes")
    assert all(isinstance(n, int) and n > 0 for n in stats)
    files = remote.pop("files")
    local = dict(local)
    local_files = local.pop("files")
    assert remote == local
    assert isinstance(files, list) and isinstance(local_files, list)
    for ours, theirs in zip(files, local_files, strict=True):
        assert ours["path"].startswith(f"hf://{repo}@") and ours["path"].endswith(
            "/" + Path(theirs["path"]).name
        )
        assert {**ours, "path": theirs["path"]} == theirs


def test_split_set_is_read_in_one_request_per_shard_under_one_percent(
    hub: LoopbackHub, split_set: tuple[Path, str]
) -> None:
    folder, repo = split_set
    shards = sorted(folder.glob("*.gguf"))
    remote = remote_json(hub, f"hf://{repo}/{shards[2].name}")
    same_but_paths(remote, local_json(shards[2]), repo)
    total = sum(p.stat().st_size for p in shards)
    records = logged(hub, "resolve", int(remote["requests"]))
    assert remote["requests"] == len(records) <= 2 * len(shards)
    assert remote["fetched_bytes"] == hub.requests.bytes_out(FILE_ROUTES) < total / 100  # across the 302
    assert remote["composition"] == {"F32": 11, "IQ2_KS": 10, "IQ3_KS": 10, "IQ4_KS": 10, "Q8_0": 1}


def test_text_output_matches_local_line_for_line(hub: LoopbackHub, split_set: tuple[Path, str]) -> None:
    folder, repo = split_set
    first = sorted(folder.glob("*.gguf"))[0]
    code, local, _ = run_cli("inspect", str(first))
    assert code == 0
    code, remote, err = run_cli("inspect", f"hf://{repo}@main/{first.name}", "--endpoint", hub.url)
    assert code == 0, err
    strip = [line for line in local.splitlines() if not line.startswith(str(folder))]
    assert [line for line in remote.splitlines() if not line.startswith("hf://")] == strip
    assert f"in {len(logged(hub, 'resolve', 1))} request(s)" in err


def test_a_250k_vocabulary_costs_two_requests(hub: LoopbackHub, vocab: tuple[Path, str]) -> None:
    folder, repo = vocab
    remote = remote_json(hub, f"hf://{repo}/target.gguf")
    same_but_paths(remote, local_json(folder / "target.gguf"), repo)
    assert remote["tokenizer_tokens"] == 250_000
    assert remote["requests"] == len(logged(hub, "resolve", 2)) == 2


@pytest.mark.parametrize("where", ["", "/model.safetensors.index.json", "/model-00002-of-00003.safetensors"])
def test_sharded_safetensors_folder_index_and_file(
    hub: LoopbackHub, sharded: tuple[Path, str], where: str
) -> None:
    folder, repo = sharded
    local = local_json(folder / where.lstrip("/") if where else folder)
    remote = remote_json(hub, f"hf://{repo}{where}")
    same_but_paths(remote, local, repo)
    shards = 1 if where.endswith(".safetensors") else 3
    jsons = 1 if where.endswith(".safetensors") else 2  # config.json (+ the index)
    assert hub.requests.count("repo_info") == 1 <= hub.requests.count("tree")  # tree pages of 4 here
    assert len(logged(hub, "resolve", remote["requests"] - 2)) == remote["requests"] - 2 <= jsons + 2 * shards


def test_reads_grow_from_where_the_parser_stopped(hub: LoopbackHub, vocab: tuple[Path, str]) -> None:
    _, repo = vocab
    model = read_gguf(
        RemoteRepo(api_for(hub), repo, None), "target.gguf", keep_key=lambda k: k.startswith("tok")
    )
    sizes = [r.bytes_out for r in logged(hub, "cdn", 2)]  # resolve redirects the LFS file's bytes there
    assert sizes[0] == INITIAL_READ and len(sizes) == 2
    tokens = model.value("tokenizer.ggml.tokens")
    assert isinstance(tokens, list) and tokens[-1] == "token_249999"


def test_missing_and_broken_files_are_one_line_errors(hub: LoopbackHub, split_set: tuple[Path, str]) -> None:
    folder, repo = split_set
    code, _, err = run_cli("inspect", f"hf://{repo}/nope.gguf", "--endpoint", hub.url)
    assert code == NotFoundError.exit_code
    assert err.strip().splitlines() == [f"error: {repo}@main: nope.gguf: file not found"]
    broken = unique_repo("broken")
    upload_files(
        api_for(hub),
        broken,
        {"b.gguf": (folder / sorted(p.name for p in folder.iterdir())[0]).read_bytes()[:5000]},
    )
    code, _, err = run_cli("inspect", f"hf://{broken}/b.gguf", "--endpoint", hub.url)
    assert code == FormatError.exit_code
    [line] = err.strip().splitlines()
    assert line.startswith(f"error: hf://{broken}@") and "/b.gguf: truncated: " in line


def test_summarize_names_files_at_the_commit_served(hub: LoopbackHub, split_set: tuple[Path, str]) -> None:
    folder, repo = split_set
    commit = api_for(hub).repo_info(repo).sha
    hub.requests.clear()
    summary = summarize(api_for(hub), f"hf://{repo}@main/{sorted(p.name for p in folder.iterdir())[0]}")
    assert [f["path"].split("@")[1].split("/")[0] for f in summary["files"]] == [commit] * 5


class _Detour(http.server.BaseHTTPRequestHandler):
    """A storage host in front of the loopback Hub: 302 to it (as the Hub redirects LFS/Xet files to
    a CDN), or, with ``whole``, the whole file with 200, ignoring Range as some servers do."""

    hub_url: ClassVar[str] = ""
    whole: ClassVar[bytes | None] = None
    seen: ClassVar[list[dict[str, str]]] = []

    def do_GET(self) -> None:
        type(self).seen.append(dict(self.headers.items()))
        if self.whole is None:
            self.send_response(302)
            self.send_header("Location", self.hub_url + self.path)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.whole)))
        self.end_headers()
        with contextlib.suppress(OSError):  # the reader hangs up once it has what it asked for
            self.wfile.write(self.whole)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def detour(hub: LoopbackHub) -> Iterator[tuple[str, type[_Detour]]]:
    handler = type("Detour", (_Detour,), {"hub_url": hub.url, "whole": None, "seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()
    server.server_close()


def test_redirects_to_another_host_keep_the_range(
    hub: LoopbackHub, split_set: tuple[Path, str], detour: tuple[str, type[_Detour]]
) -> None:
    folder, repo = split_set
    url, handler = detour
    first = sorted(folder.glob("*.gguf"))[0]
    summary = summarize(HfApi(endpoint=url, token=False), f"hf://{repo}/{first.name}")
    assert summary["requests"] == 5 and summary["fetched_bytes"] == 5 * INITIAL_READ
    assert all(seen["Range"] == f"bytes=0-{INITIAL_READ - 1}" for seen in handler.seen)
    assert summary["composition"] == local_json(first)["composition"]


def test_a_server_ignoring_range_is_read_only_as_far_as_needed(
    hub: LoopbackHub, split_set: tuple[Path, str], detour: tuple[str, type[_Detour]]
) -> None:
    folder, _ = split_set
    url, handler = detour
    first = sorted(folder.glob("*.gguf"))[-1]
    handler.whole = first.read_bytes()
    file = RangedFile(HfApi(endpoint=url, token=False), "acme/any", first.name, "main")
    head = file.read_to(1000)
    assert head == handler.whole[:1000] and file.size == len(handler.whole)
    assert file.traffic.fetched_bytes < len(handler.whole) / 2


def test_endpoint_local_reads_from_the_embedded_hub(tmp_path: Path) -> None:
    from hubrelease.hub.client import embedded_hub

    shard = write_vocab_gguf(tmp_path / "small.gguf", 3000)
    upload_files(api_for(embedded_hub()), "acme/local-target", {"small.gguf": shard.read_bytes()})
    code, out, err = run_cli("inspect", "hf://acme/local-target/small.gguf", "--endpoint", "local", "--json")
    assert code == 0, err
    assert json.loads(out)["tokenizer_tokens"] == 3000


def test_a_header_past_the_cap_is_refused_in_one_line(
    hub: LoopbackHub, vocab: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from hubrelease.hub import remote_headers

    _, repo = vocab
    monkeypatch.setattr(remote_headers, "MAX_HEADER_READ", 1 << 20)
    code, _, err = run_cli("inspect", f"hf://{repo}/target.gguf", "--endpoint", hub.url)
    assert code == FormatError.exit_code
    [line] = err.strip().splitlines()
    assert "/target.gguf: header declares at least " in line
    assert line.endswith(" bytes, over the 1,048,576-byte cap of a remote read")
    # the first read (resolve, then its storage URL) gives the declared counts: nothing more is fetched
    assert sum(r.bytes_out for r in logged(hub, FILE_ROUTES, 2)) <= 64 << 10


@pytest.mark.parametrize("storage", ["xet", "lfs"])
def test_ranges_read_files_stored_either_way(
    hub: LoopbackHub, tmp_path: Path, request: pytest.FixtureRequest, storage: str
) -> None:
    if storage == "lfs":
        request.getfixturevalue("lfs_only")
    # Distinct bytes per mode: the loopback Hub knows a file's Xet hash by its content.
    path = write_vocab_gguf(tmp_path / "t.gguf", 20_000 if storage == "xet" else 20_001, type_id=145)
    repo = unique_repo(f"stored-{storage}")
    upload_files(api_for(hub), repo, {"t.gguf": path.read_bytes()})
    _, headers = head(f"{hub.url}/{repo}/resolve/main/t.gguf")  # the 302's own headers
    assert ("x-xet-hash" in headers) == (storage == "xet")
    same_but_paths(remote_json(hub, f"hf://{repo}/t.gguf"), local_json(path), repo)


def test_a_refusing_hub_is_exit_4_and_a_non_model_file_exit_2(
    hub: LoopbackHub, sharded: tuple[Path, str]
) -> None:
    _, repo = sharded
    hub.faults.inject("status", method="GET", path="/resolve/", status=403)
    code, _, err = run_cli("inspect", f"hf://{repo}/model.safetensors.index.json", "--endpoint", hub.url)
    assert code == HubUnavailable.exit_code
    [line] = err.strip().splitlines()
    assert line.startswith(f"error: {repo}: the Hub refused the token (HTTP 403")
    code, _, err = run_cli("inspect", f"hf://{repo}/config.json", "--endpoint", hub.url)
    assert code == InputError.exit_code
    assert err.strip().endswith("/config.json: expected a .gguf, .safetensors, index json or folder")


def test_a_folder_with_a_dot_in_its_name_is_a_folder(hub: LoopbackHub, sharded: tuple[Path, str]) -> None:
    folder, _ = sharded
    repo = unique_repo("dotted")
    shard = folder / "model-00001-of-00003.safetensors"
    upload_files(api_for(hub), repo, {"v1.0/model.safetensors": shard.read_bytes()})
    summary = remote_json(hub, f"hf://{repo}/v1.0")
    assert summary["tensor_count"] == local_json(shard)["tensor_count"]
    assert [f["path"].rsplit("/", 2)[1:] for f in summary["files"]] == [["v1.0", "model.safetensors"]]
