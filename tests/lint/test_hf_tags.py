"""llama.cpp's -hf / -hfd resolution of a GGUF release, and its split sets.

The resolution functions mirror common/download.cpp of llama.cpp 0c1e57098; the conformance tier runs
the real `llama-server -hf ... -hfd ...` against the published example (conformance/hub_steps.py).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hubrelease.builders.gguf_drafter import build_gguf_drafter
from hubrelease.builders.safetensors_drafter import build_safetensors_drafter
from hubrelease.lint.hf_tags import best_model, best_sidecar, hf_tag_findings, split_info
from hubrelease.manifest.models import Manifest
from tests.factories.drafters import mutate_gguf, write_checkpoint, write_target_gguf

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_GGUF = REPO / "manifests" / "example" / "tiny-dflash2-q8_0.gguf"
TARGET_GGUF = REPO / "manifests" / "example-target" / "tiny-qwen3-f16.gguf"


def test_tags_and_resolution_as_llama_cpp_reads_names() -> None:
    assert split_info("gguf/Drafter-Q8_0.gguf") == ("gguf/Drafter-Q8_0", "Q8_0", 1, 1)
    assert split_info("m-Q4_K_M-00002-of-00003.gguf") == ("m-Q4_K_M", "Q4_K_M", 2, 3)
    lower = split_info("Ornith-DFLASH-m1-q4.gguf")
    assert lower is not None and lower.tag == "Q4"
    assert split_info("config.json") is None
    paths = sorted(
        ["m-Q4_K_M-00001-of-00002.gguf", "m-Q4_K_M-00002-of-00002.gguf", "m-Q8_0.gguf", "mmproj-f16.gguf"]
    )
    assert best_model(paths, "") == "m-Q4_K_M-00001-of-00002.gguf"  # the default Q4_K_M, shard 1
    assert best_model(paths, "q8_0") == "m-Q8_0.gguf"
    assert best_model(paths, "F16") is None  # mmproj is never the model
    # "F16[.-]" is found inside "BF16.": a bf16 file listed first answers the F16 tag.
    assert best_model(["m-BF16.gguf", "m-F16.gguf"], "F16") == "m-BF16.gguf"
    sidecars = ["dflash-m-Q8_0.gguf", "dflash-m-F16.gguf", "sub/dflash-x-Q8_0.gguf"]
    assert best_sidecar(sidecars, "", "dflash-", "Q8_0") == "dflash-m-Q8_0.gguf"
    assert (
        best_sidecar(["sub/dflash-x-Q8_0.gguf"], "", "dflash-", "Q8_0") is None
    )  # not at or above the model
    assert (
        best_sidecar(["sub/dflash-x-Q8_0.gguf"], "sub/m-Q8_0.gguf", "dflash-", "Q8_0")
        == "sub/dflash-x-Q8_0.gguf"
    )


def _release(root: Path, files: dict[str, Path]) -> Manifest:
    for path, source in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, root / path)
    data = {"schema_version": 1, "release": {"repo_id": "acme/d", "license": "mit"},
            "artifacts": [{"path": p} for p in files]}  # fmt: skip
    return Manifest.model_validate(data)


def _found(manifest: Manifest, root: Path) -> list[tuple[str, str, str]]:
    return [(r.file, r.finding.rule_id, r.finding.message) for r in hf_tag_findings(manifest, root)]


def test_the_example_release_resolves_and_an_ambiguous_one_does_not(tmp_path: Path) -> None:
    assert _found(_release(tmp_path / "ok", {"tiny-dflash2-q8_0.gguf": EXAMPLE_GGUF}), tmp_path / "ok") == []
    root = tmp_path / "two"
    manifest = _release(
        root, {"a/tiny-Q8_0.gguf": EXAMPLE_GGUF, "b-q8_0.gguf": EXAMPLE_GGUF, "untagged.gguf": EXAMPLE_GGUF}
    )
    assert _found(manifest, root) == [
        (
            "b-q8_0.gguf",
            "hf-tag",
            "`-hfd acme/d:Q8_0` loads a/tiny-Q8_0.gguf, not this file (llama.cpp takes the first path matching Q8_0[.-])",
        ),
        ("untagged.gguf", "hf-tag", "no quantization token in the name: `-hfd acme/d:TAG` cannot select it"),
    ]


def test_a_drafter_beside_its_target_needs_the_sidecar_name(tmp_path: Path) -> None:
    root = tmp_path / "r"
    manifest = _release(root, {"target-F16.gguf": TARGET_GGUF, "drafter-Q8_0.gguf": EXAMPLE_GGUF})
    assert ("drafter-Q8_0.gguf", "hf-tag", "a DFlash drafter beside other models must have 'dflash-' in its name: "
            "llama.cpp takes it for the model, and `--spec-type draft-dflash` looks for 'dflash-' sidecars") in _found(manifest, root)  # fmt: skip
    named = tmp_path / "named"
    assert (
        _found(
            _release(named, {"target-F16.gguf": TARGET_GGUF, "dflash-drafter-Q8_0.gguf": EXAMPLE_GGUF}), named
        )
        == []
    )
    deep = tmp_path / "deep"
    assert _found(_release(deep, {"drafters/dflash-d-Q8_0.gguf": EXAMPLE_GGUF}), deep) == [
        ("drafters/dflash-d-Q8_0.gguf", "hf-tag", "`-hfd acme/d:Q8_0 --spec-type draft-dflash` loads no sidecar, not this "
         "file (a sidecar must sit in its model's folder or above it)"),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("split")
    build_safetensors_drafter(write_checkpoint(root / "ck"), root / "hf")
    built = build_gguf_drafter(root / "hf", root / "d-Q8_0.gguf", flavor="mainline", outtype="f16",
                               tokenizer_from=write_target_gguf(root / "t.gguf"), split_max_size=60_000)  # fmt: skip
    assert len(built) == 3
    return [b.path for b in built]


def test_split_sets_contiguous_with_matching_keys(tmp_path: Path, shards: list[Path]) -> None:
    names = [p.name for p in shards]
    root = tmp_path / "ok"
    assert _found(_release(root, {n: p for n, p in zip(names, shards, strict=True)}), root) == []
    gap = tmp_path / "gap"
    assert _found(_release(gap, {names[0]: shards[0], names[2]: shards[2]}), gap) == [
        (names[0], "gguf-split", f"split set of 3 lacks {names[1]}")
    ]
    wrong = tmp_path / "wrong"
    files = {n: p for n, p in zip(names, shards, strict=True)}
    alone = shutil.copy(shards[1], tmp_path / "alone.gguf")  # read as one file, not as its set
    files[names[1]] = mutate_gguf(
        Path(alone), tmp_path / "m.gguf", set_kv={"split.no": 2, "general.architecture": "dflash"}
    )
    assert _found(_release(wrong, files), wrong) == [
        (names[1], "gguf-split", "split.no/split.count do not say shard 1 of 3")
    ]
