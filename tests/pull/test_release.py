"""`hubrelease pull` against the loopback Hub with the real huggingface_hub client: exactly what each
engine loads, checked as pinned, a wrong target refused before any weights, a tampered file refused."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from huggingface_hub import try_to_load_from_cache

from hubrelease_loopback import LoopbackHub, RepoKey
from hubrelease_loopback.faults import FILE_ROUTES
from tests.factories.drafters import mutate_gguf
from tests.factories.published import TARGET_GGUF, PublishedExample, files_below, publish_example, pull_json

WEIGHTS = ("model.safetensors", "tiny-dflash2-q8_0.gguf")


@pytest.fixture
def example(hub: LoopbackHub, tmp_path: Path) -> PublishedExample:
    published = publish_example(hub, tmp_path)
    hub.requests.clear()
    return published


def _weight_requests(hub: LoopbackHub) -> list[str]:
    return [r.path for r in hub.requests.on(FILE_ROUTES) if r.path.endswith(WEIGHTS)]


@pytest.mark.parametrize(
    ("engine", "expected"),
    [("sglang", {"config.json", "model.safetensors"}), ("llama.cpp", {"tiny-dflash2-q8_0.gguf"})],
)
def test_pull_fetches_exactly_what_the_engine_loads_checked_as_pinned(
    hub: LoopbackHub, example: PublishedExample, tmp_path: Path, engine: str, expected: set[str]
) -> None:
    out = tmp_path / "pulled"
    code, report, err = pull_json(hub, f"{example.repo}@main", "--engine", engine, "--dir", out)
    assert code == 0, err
    assert report is not None
    assert report["commit"] == example.commit and report["revision"] == "main"
    assert files_below(out) == expected
    for name in expected:
        pinned = (example.release / name).read_bytes()
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == hashlib.sha256(pinned).hexdigest()


def test_pull_into_the_hf_cache_is_found_by_huggingface_hub_at_the_commit_and_branch(
    hub: LoopbackHub, example: PublishedExample, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    code, report, err = pull_json(hub, example.repo, "--engine", "sglang", "--cache-dir", cache)
    assert code == 0, err
    for revision in (example.commit, "main"):
        found = try_to_load_from_cache(example.repo, "model.safetensors", cache_dir=cache, revision=revision)
        assert isinstance(found, str)
        assert Path(found).read_bytes() == (example.release / "model.safetensors").read_bytes()
    again = hub.requests.count()
    code, report, err = pull_json(hub, example.repo, "--engine", "sglang", "--cache-dir", cache)
    assert code == 0 and report is not None
    assert [f["fetched"] for f in report["files"]] == [False, False]
    assert not [r for r in hub.requests.on(FILE_ROUTES)[again:] if r.path.endswith(WEIGHTS)]


def test_sglang_command_names_the_drafter_and_target_at_their_commits(
    hub: LoopbackHub, example: PublishedExample, tmp_path: Path
) -> None:
    code, report, err = pull_json(hub, example.repo, "--engine", "sglang", "--dir", tmp_path / "d")
    assert code == 0, err
    assert report is not None
    commands = report["commands"]
    assert isinstance(commands, list) and len(commands) == 1
    argv = commands[0]["argv"]
    assert argv[:2] == ["sglang", "serve"]
    assert argv[argv.index("--speculative-draft-model-path") + 1] == str(tmp_path / "d")
    assert argv[argv.index("--speculative-draft-model-revision") + 1] == example.commit
    assert argv[argv.index("--model-path") + 1] == example.target_repo


def test_an_engine_the_release_has_no_files_for_is_exit_2(
    hub: LoopbackHub, example: PublishedExample
) -> None:
    code, _, err = pull_json(hub, example.repo, "--engine", "vllm")
    assert code == 2
    assert err.startswith("error: ") and "speculators" in err and "Traceback" not in err


def test_the_pinned_target_pairs_local_and_on_the_hub(
    hub: LoopbackHub, example: PublishedExample, tmp_path: Path
) -> None:
    for target in (example.target, example.target / TARGET_GGUF, example.target_repo):
        code, report, err = pull_json(
            hub, example.repo, "--engine", "llama.cpp", "--target", target, "--dir", tmp_path / "d"
        )
        assert code == 0, (target, err)
        assert report is not None
        pairing = report["pairing"]
        assert isinstance(pairing, dict) and pairing["ok"] is True


def test_a_target_with_other_layers_is_refused_before_any_weights(
    hub: LoopbackHub, example: PublishedExample, tmp_path: Path
) -> None:
    other = mutate_gguf(
        example.target / TARGET_GGUF, tmp_path / "other-target.gguf", set_kv={"qwen3.block_count": 6}
    )
    out = tmp_path / "pulled"
    code, _, err = pull_json(hub, example.repo, "--engine", "llama.cpp", "--target", other, "--dir", out)
    assert code == 1
    lines = err.splitlines()
    assert lines[0] == f"error: {other}: the target does not pair with this release; nothing was downloaded"
    assert "error: target layers: the release pins 8, the target has 6" in lines
    # the drafter taps target layer 6: past the last layer (5) of a 6-layer target
    assert (
        f"error: drafter target-layers: num_target_layers is 8 but the target ({other}) has 6 layers" in lines
    )
    assert any(line.startswith("error: GGUF header sha256: the release pins ") for line in lines)
    assert files_below(out) == set()
    assert _weight_requests(hub) == []


def test_a_target_at_another_commit_is_refused_naming_both(
    hub: LoopbackHub, example: PublishedExample, tmp_path: Path
) -> None:
    moved = hub.store.replace_file(RepoKey("model", example.target_repo), "main", "notes.md", b"moved\n")
    code, _, err = pull_json(
        hub, example.repo, "--engine", "sglang", "--target", f"{example.target_repo}@{moved}"
    )
    assert code == 1
    assert f"target commit: the release pins {example.target_commit}, the target has {moved}" in err
    assert _weight_requests(hub) == []


def test_a_file_replaced_on_the_hub_is_refused_before_download(
    hub: LoopbackHub, example: PublishedExample, tmp_path: Path
) -> None:
    hub.store.replace_file(RepoKey("model", example.repo), "main", "model.safetensors", b"\0" * 204136)
    out = tmp_path / "pulled"
    code, _, err = pull_json(hub, example.repo, "--engine", "sglang", "--dir", out)
    assert code == 1
    assert "model.safetensors: the Hub lists 204136 bytes" in err
    assert _weight_requests(hub) == []
    assert files_below(out) == set()


def test_downloads_are_bounded_by_the_pinned_size_not_the_read_cap(
    hub: LoopbackHub, example: PublishedExample, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hubrelease.hub import bounds

    monkeypatch.setattr(bounds, "MAX_BODY", 100_000)  # below model.safetensors (204,136 bytes)
    code, _, err = pull_json(hub, example.repo, "--engine", "sglang", "--dir", tmp_path / "d")
    assert code == 0, err
    assert (tmp_path / "d" / "model.safetensors").stat().st_size == 204_136
