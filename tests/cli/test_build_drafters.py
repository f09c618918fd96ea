"""`hubrelease build safetensors-drafter|gguf-drafter` end to end, including --manifest recording."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hubrelease.errors import InputError
from hubrelease.hashing import sha256_file
from hubrelease.lint import lint_file
from hubrelease.manifest import load_manifest
from hubrelease.sizes import parse_size
from tests.factories.cli import run_cli
from tests.factories.drafters import write_target_gguf, write_training_checkpoint

MANIFEST = """\
# Example release (comments survive builds)
schema_version: 1
release:
  repo_id: acme/tiny-dflash2  # where it goes
  license: apache-2.0
artifacts: []
"""


def test_build_both_and_record_in_the_manifest(tmp_path: Path) -> None:
    checkpoint = write_training_checkpoint(tmp_path / "runs" / "step-3228")
    release = tmp_path / "release"
    release.mkdir()
    manifest = release / "hubrelease.yaml"
    manifest.write_text(MANIFEST)
    code, out, err = run_cli(
        "build",
        "safetensors-drafter",
        str(checkpoint),
        "--out",
        str(release),
        "--manifest",
        str(manifest),
        "--json",
    )
    assert code == 0, err
    assert [Path(f["path"]).name for f in json.loads(out)["files"]] == ["model.safetensors", "config.json"]
    target = write_target_gguf(tmp_path / "target.gguf")
    code, _, err = run_cli(
        "build", "gguf-drafter", str(release), "--flavor", "mainline", "--outtype", "q8_0",
        "--tokenizer-from", str(target),
        "--out", str(release / "gguf" / "drafter-q8_0.gguf"), "--manifest", str(manifest),
    )  # fmt: skip
    assert code == 0, err
    text = manifest.read_text()
    assert text.startswith("# Example release (comments survive builds)\n")
    assert "repo_id: acme/tiny-dflash2  # where it goes" in text
    loaded = load_manifest(manifest)
    by_path = {a.path: a for a in loaded.artifacts}
    assert sorted(by_path) == ["config.json", "gguf/drafter-q8_0.gguf", "model.safetensors"]
    gguf_artifact = by_path["gguf/drafter-q8_0.gguf"]
    assert gguf_artifact.sha256 == sha256_file(release / "gguf" / "drafter-q8_0.gguf")
    assert gguf_artifact.lint and gguf_artifact.lint_config == "config.json"
    assert gguf_artifact.recipe is not None and gguf_artifact.recipe.source == "."
    assert gguf_artifact.recipe.options == {
        "flavor": "mainline",
        "outtype": "q8_0",
        "tokenizer_from": os.path.relpath(target, release),
    }
    # What verify will do for an artifact with lint: true.
    assert lint_file(release / gguf_artifact.path, release / "config.json", gguf_artifact.composition) == []
    # Rebuilding updates in place: same entries, same digests.
    code, _, _ = run_cli(
        "build", "safetensors-drafter", str(checkpoint), "--out", str(release), "--manifest", str(manifest)
    )
    assert code == 0 and manifest.read_text() == text


def test_output_outside_the_manifest_folder_is_refused(tmp_path: Path) -> None:
    checkpoint = write_training_checkpoint(tmp_path / "ck")
    (tmp_path / "rel").mkdir()
    manifest = tmp_path / "rel" / "hubrelease.yaml"
    manifest.write_text(MANIFEST)
    code, _, err = run_cli(
        "build",
        "safetensors-drafter",
        str(checkpoint),
        "--out",
        str(tmp_path / "elsewhere"),
        "--manifest",
        str(manifest),
    )
    assert code == 2
    assert err.strip() == (
        f"error: {manifest}: output {tmp_path / 'elsewhere'} is outside the release folder "
        f"{(tmp_path / 'rel').resolve()}"
    )
    assert not (tmp_path / "elsewhere").exists()  # refused before anything was built


def test_an_invalid_manifest_is_refused_before_any_output_is_written(tmp_path: Path) -> None:
    checkpoint = write_training_checkpoint(tmp_path / "ck")
    (tmp_path / "rel").mkdir()
    manifest = tmp_path / "rel" / "hubrelease.yaml"
    manifest.write_text("schema_version: 1\nrelease: {repo_id: acme/x}\n")
    code, _, err = run_cli("build", "safetensors-drafter", str(checkpoint), "--out", str(tmp_path / "rel"),
                       "--manifest", str(manifest))  # fmt: skip
    assert code == 2 and "release.license" in err
    assert sorted(p.name for p in (tmp_path / "rel").iterdir()) == ["hubrelease.yaml"]


def test_rebuilding_into_shards_replaces_the_old_entry_and_keeps_its_role(tmp_path: Path) -> None:
    release = tmp_path / "release"
    checkpoint = write_training_checkpoint(tmp_path / "ck")
    release.mkdir()
    manifest = release / "hubrelease.yaml"
    manifest.write_text(MANIFEST)
    assert run_cli("build", "safetensors-drafter", str(checkpoint), "--out", str(release))[0] == 0
    target = write_target_gguf(tmp_path / "target.gguf")
    gguf = release / "drafter.gguf"
    build = ["build", "gguf-drafter", str(release), "--flavor", "mainline", "--outtype", "f32",
             "--tokenizer-from", str(target), "--out", str(gguf), "--manifest", str(manifest)]  # fmt: skip
    assert run_cli(*build)[0] == 0, run_cli(*build)[2]
    text = manifest.read_text()
    manifest.write_text(
        text.replace("  - path: drafter.gguf\n", "  - path: drafter.gguf\n    role: recommended\n")
    )
    assert load_manifest(manifest).artifacts[0].role == "recommended"
    gguf.unlink()
    code, _, err = run_cli(*build, "--split-max-size", "40K")
    assert code == 0, err
    artifacts = load_manifest(manifest).artifacts
    assert "drafter.gguf" not in {a.path for a in artifacts}
    shards = [a for a in artifacts if a.path.startswith("drafter-")]
    assert len(shards) > 1 and {a.role for a in shards} == {"recommended"}


def test_build_errors_are_one_line(tmp_path: Path) -> None:
    checkpoint = write_training_checkpoint(tmp_path / "ck")
    code, _, err = run_cli("build", "gguf-drafter", str(checkpoint), "--flavor", "ik", "--outtype", "f16", "--out", str(tmp_path / "x.gguf"),
                       "--tokenizer-from", str(write_target_gguf(tmp_path / "t.gguf")))  # fmt: skip
    assert (code, err.strip()) == (
        2,
        f"error: {checkpoint / 'config.json'}: ik_llama.cpp has no DFlash2 support; use --flavor mainline",
    )
    code, _, err = run_cli(
        "build", "gguf-drafter", str(checkpoint), "--flavor", "x", "--outtype", "f16", "--out", "x.gguf"
    )
    assert code == 2 and "--flavor must be ik or mainline" in err


@pytest.mark.parametrize(
    ("text", "size"), [("2G", 2 * 1024**3), ("500M", 500 * 1024**2), ("1.5GB", 1610612736), ("4096", 4096)]
)
def test_parse_size(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_parse_size_rejects_garbage() -> None:
    with pytest.raises(InputError, match="not a size"):
        parse_size("lots")


@pytest.mark.parametrize("command", ["safetensors-drafter", "gguf-drafter", "lint"])
def test_a_rope_theta_beyond_float_range_is_one_line_exit_2(tmp_path: Path, command: str) -> None:
    # rope_theta 10**400 is valid JSON; float() of it raised OverflowError (exit 3) in every command.
    checkpoint = write_training_checkpoint(tmp_path / "ck")
    text = (checkpoint / "config.json").read_text().replace("10000000.0", "1" + "0" * 400)
    (checkpoint / "config.json").write_text(text)
    args = {
        "safetensors-drafter": [
            "build",
            "safetensors-drafter",
            str(checkpoint),
            "--out",
            str(tmp_path / "o"),
        ],
        "gguf-drafter": [
            "build",
            "gguf-drafter",
            str(checkpoint),
            "--flavor",
            "mainline",
            "--outtype",
            "f16",
            "--tokenizer-from",
            str(write_target_gguf(tmp_path / "t.gguf")),
            "--out",
            str(tmp_path / "o.gguf"),
        ],
        "lint": ["lint", str(checkpoint)],
    }[command]
    code, _, err = run_cli(*args)
    assert code == 2
    assert err.count("\n") == 1 and "rope_parameters.rope_theta: must be a positive finite number" in err
    assert "got 100000000000... (401 characters)" in err and "OverflowError" not in err
