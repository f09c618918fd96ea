"""`hubrelease pull` of both seed-shaped releases (tests/factories/seed_releases.py) from the loopback Hub
with the real huggingface_hub client: for the engine each seed supports, only what it loads, checked as
pinned, the command that runs it; a wrong target refused before any weight request; a tampered file refused."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from hubrelease.formats.gguf_header import read_gguf
from hubrelease.manifest import load_manifest
from hubrelease_loopback import LoopbackHub, RepoKey
from hubrelease_loopback.faults import FILE_ROUTES
from tests.factories.published import files_below, pull_json
from tests.factories.seed_releases import (
    GGUF_STEM,
    REPO_ROOT,
    SEED_SHAPED,
    SeedName,
    SeedRelease,
    publish_seed_shaped,
    shallower_target,
)

WEIGHTS = (".safetensors", ".gguf")


@pytest.fixture(scope="module")
def seeds(loopback_hub: LoopbackHub, tmp_path_factory: pytest.TempPathFactory) -> dict[str, SeedRelease]:
    """Both seeds published once; tests pull them at their commit (a test that moves ``main`` harms none)."""
    folder = tmp_path_factory.mktemp("seeds")
    return {name: publish_seed_shaped(loopback_hub, folder, name) for name in SEED_SHAPED}


def _weight_requests(hub: LoopbackHub) -> set[str]:
    """The weight files requested from the Hub's file routes (resolve and its redirect targets)."""
    return {r.path.rsplit("/", 1)[-1] for r in hub.requests.on(FILE_ROUTES) if r.path.endswith(WEIGHTS)}


def _leaves(data: dict[str, Any], prefix: str = "") -> set[str]:
    keys = set()
    for key, value in data.items():
        keys |= _leaves(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}"}
    return keys


def test_the_stand_ins_keep_the_seeds_layout_config_keys_and_target_pins(
    seeds: dict[str, SeedRelease],
) -> None:
    for name, seed in seeds.items():
        committed = load_manifest(REPO_ROOT / "manifests" / name / "hubrelease.yaml")
        shaped = load_manifest(seed.manifest)
        assert [a.path for a in shaped.artifacts] == [a.path for a in committed.artifacts]
        assert all(a.size is not None and a.sha256 is not None for a in shaped.artifacts)
        assert [f.path for f in shaped.pins.targets[0].files] == [
            f.path for f in committed.pins.targets[0].files
        ]
    dflash2 = seeds["ornith-1.5-dflash2"].manifest.parent
    stated = json.loads(
        (REPO_ROOT / "manifests" / "ornith-1.5-dflash2" / "config.json").read_text(encoding="utf-8")
    )
    assert _leaves(stated) <= _leaves(json.loads((dflash2 / "config.json").read_text(encoding="utf-8")))
    ggufs = seeds["ornith-1.0-dflash-gguf"].manifest.parent
    q8, mixed = (read_gguf(ggufs / f"Ornith-DFLASH-m1-{kind}.gguf") for kind in ("q8_0", "q4"))
    assert q8.architecture == mixed.architecture == "dflash-draft"  # ik_llama.cpp's DFlash architecture
    assert [t.name for t in mixed.shards[0].tensors] == [t.name for t in q8.shards[0].tensors]
    # the engine-relevant keys the seed's card states for its files (rope base 1e7, sliding window, pattern)
    header = mixed.shards[0]
    assert header.value("dflash-draft.rope.freq_base") == 1e7
    assert header.value("dflash-draft.attention.sliding_window") is not None
    assert header.value("dflash-draft.attention.sliding_window_pattern") is not None
    types = {t.type_name for t in mixed.shards[0].tensors}
    assert {"F32", "F16", "Q8_0"} <= types


@pytest.mark.parametrize("name", SEED_SHAPED)
def test_pull_fetches_only_what_the_seeds_engine_loads_and_prints_its_command(
    hub: LoopbackHub, seeds: dict[str, SeedRelease], tmp_path: Path, name: SeedName
) -> None:
    seed = seeds[name]
    out = tmp_path / "pulled"
    code, report, err = pull_json(
        hub, f"{seed.repo}@{seed.commit}", "--engine", seed.engine, "--target", seed.target, "--dir", out
    )
    assert code == 0, err
    assert report is not None and report["pairing"]["ok"] is True
    assert files_below(out) == set(seed.loads)
    pins = {a.path: a.sha256 for a in load_manifest(seed.manifest).artifacts}
    for path in seed.loads:
        assert hashlib.sha256((out / path).read_bytes()).hexdigest() == pins[path]
    assert _weight_requests(hub) == {p for p in seed.loads if p.endswith(WEIGHTS)}
    (command,) = report["commands"]
    argv = command["argv"]
    if seed.engine == "ik":
        assert argv[0] == "llama-server" and command["pinned_engine"] == "ik_llama.cpp"
        assert argv[argv.index("--model") + 1] == str(seed.target)  # the target the user paired with
        assert argv[argv.index("--model-draft") + 1] == str(out / seed.loads[0])
        assert argv[argv.index("--spec-type") + 1] == "dflash:n_max=3,cross_ctx=512"
    else:
        assert argv[:2] == ["sglang", "serve"]
        assert argv[argv.index("--speculative-draft-model-path") + 1] == str(out)
        assert argv[argv.index("--model-path") + 1] == seed.target_repo
        assert argv[argv.index("--revision") + 1] == seed.target_commit


@pytest.mark.parametrize(
    ("name", "engine"),
    [("ornith-1.5-dflash2", "llama.cpp"), ("ornith-1.5-dflash2", "ik"), ("ornith-1.0-dflash-gguf", "sglang"),
     ("ornith-1.0-dflash-gguf", "llama.cpp")],
)  # fmt: skip
def test_an_engine_a_seed_has_no_files_for_is_refused_unfetched(
    hub: LoopbackHub, seeds: dict[str, SeedRelease], name: SeedName, engine: str
) -> None:
    code, _, err = pull_json(hub, f"{seeds[name].repo}@{seeds[name].commit}", "--engine", engine)
    assert code == 2 and err.startswith(f"error: the release publishes no files {engine} loads")
    assert _weight_requests(hub) == set()


def _wrong_target(seed: SeedRelease, folder: Path) -> tuple[Path, str]:
    """A target one config or header value away from the pinned one, and the refusal line it must give."""
    if seed.engine == "sglang":
        target = shutil.copytree(seed.target, folder / "target")
        config = json.loads((target / "config.json").read_text(encoding="utf-8"))
        config["num_hidden_layers"] = 6
        (target / "config.json").write_text(json.dumps(config), encoding="utf-8")
        return target, "error: target layers: the release pins 8, the target has 6"
    shards = shallower_target(folder, seed.target.name.removesuffix("-00001-of-00005.gguf"))
    pinned = ", ".join(str(f.size) for f in load_manifest(seed.manifest).pins.targets[0].files)
    found = ", ".join(str(p.stat().st_size) for p in shards)
    return shards[0], f"error: target GGUF shard sizes: the release pins {pinned}, the target has {found}"


@pytest.mark.parametrize("name", SEED_SHAPED)
def test_a_wrong_target_is_refused_before_any_weight_request(
    hub: LoopbackHub, seeds: dict[str, SeedRelease], tmp_path: Path, name: SeedName
) -> None:
    seed = seeds[name]
    target, line = _wrong_target(seed, tmp_path)
    out = tmp_path / "pulled"
    code, _, err = pull_json(
        hub, f"{seed.repo}@{seed.commit}", "--engine", seed.engine, "--target", target, "--dir", out
    )
    assert code == 1
    lines = err.splitlines()
    assert lines[0] == f"error: {target}: the target does not pair with this release; nothing was downloaded"
    assert line in lines
    assert files_below(out) == set()
    assert _weight_requests(hub) == set()


@pytest.mark.parametrize("name", SEED_SHAPED)
def test_a_tampered_weight_file_is_refused(
    hub: LoopbackHub, tmp_path: Path, lfs_only: None, name: SeedName
) -> None:
    seed = publish_seed_shaped(hub, tmp_path, name)
    weights = next(p for p in seed.loads if p.endswith(WEIGHTS))
    pinned = (seed.manifest.parent / weights).read_bytes()
    hub.store.lfs_path(hashlib.sha256(pinned).hexdigest()).write_bytes(pinned[:-1] + bytes([pinned[-1] ^ 1]))
    out = tmp_path / "pulled"
    code, _, err = pull_json(hub, f"{seed.repo}@{seed.commit}", "--engine", seed.engine, "--dir", out)
    assert code == 1
    assert err.startswith(f"error: {seed.repo}@{seed.commit[:12]}:{weights}: the Hub sent bytes with sha256 ")
    assert weights not in files_below(out)
    # replaced in place under the same name: refused from the listing, before any download
    hub.store.replace_file(RepoKey("model", seed.repo), "main", weights, b"\0" * len(pinned))
    hub.requests.clear()
    code, _, err = pull_json(hub, seed.repo, "--engine", seed.engine, "--dir", out)
    assert code == 1 and f"{weights}: the Hub lists {len(pinned)} bytes, sha256 " in err
    assert _weight_requests(hub) == set()


def test_a_hub_target_pinned_by_shard_sizes_is_checked_against_its_listing(
    hub: LoopbackHub, tmp_path: Path
) -> None:
    seed = publish_seed_shaped(hub, tmp_path, "ornith-1.0-dflash-gguf")
    pulled: list[str | Path] = [f"{seed.repo}@{seed.commit}", "--engine", "ik", "--dir", tmp_path / "pulled"]
    code, report, err = pull_json(hub, *pulled, "--target", seed.target_repo)
    assert code == 0, err
    assert report is not None and report["pairing"]["ok"] is True
    shard = seed.target.name.replace("00001-of", "00003-of")
    moved = hub.store.replace_file(RepoKey("model", seed.target_repo), "main", shard, b"another model\n")
    hub.requests.clear()
    code, _, err = pull_json(hub, *pulled, "--target", f"{seed.target_repo}@{moved}")
    assert code == 1
    pinned = [f.size for f in load_manifest(seed.manifest).pins.targets[0].files]
    found = [*pinned[:2], len(b"another model\n"), *pinned[3:]]
    assert (
        f"error: target GGUF shard sizes: the release pins {', '.join(map(str, pinned))}, "
        f"the target has {', '.join(map(str, found))}" in err.splitlines()
    )
    # the pairing reads the target's first shard header by range; no drafter GGUF is requested
    assert {name for name in _weight_requests(hub) if name.startswith(GGUF_STEM)} == set()
