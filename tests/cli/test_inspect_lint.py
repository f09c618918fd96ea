"""`hubrelease inspect` and `hubrelease lint` end to end: output, JSON, exit codes and error lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.factories.cli import run_cli
from tests.factories.drafters import naive_convert, write_checkpoint, write_ik_mixed_gguf, write_target_gguf


@pytest.fixture(scope="module")
def ggufs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli")
    write_checkpoint(root / "ck")
    write_target_gguf(root / "target.gguf")
    code, _, err = run_cli(
        "build", "gguf-drafter", str(root / "ck"), "--flavor", "ik", "--outtype", "q8_0",
        "--tokenizer-from", str(root / "target.gguf"), "--out", str(root / "ik.gguf"),
    )  # fmt: skip
    assert code == 0, err
    naive_convert(root / "ik.gguf", root / "naive.gguf")
    write_ik_mixed_gguf(root / "q4.gguf")
    return root


def test_inspect_shows_composition_of_ik_types(ggufs: Path) -> None:
    code, out, _ = run_cli("inspect", str(ggufs / "q4.gguf"))
    assert code == 0
    assert "architecture: dflash-draft   GGUF v3   alignment 32" in out
    assert "tensors: 5 (2 IQ3_KS, 1 F32, 1 IQ4_KSS, 1 Q8_0)" in out


def test_inspect_json(ggufs: Path) -> None:
    code, out, _ = run_cli("inspect", str(ggufs / "ik.gguf"), "--json")
    data = json.loads(out)
    assert code == 0 and data["schema_version"] == 1
    assert data["composition"] == {"Q8_0": 15, "F32": 10}
    assert data["tokenizer_tokens"] == 512
    assert data["metadata"]["dflash-draft.dflash.target_layer_ids"] == [1, 3, 6]
    code, out, _ = run_cli("inspect", str(ggufs / "ck"), "--json")
    assert json.loads(out)["metadata"]["rope_theta_source"] == "rope_parameters.rope_theta"


def test_inspect_errors_are_one_line(ggufs: Path, tmp_path: Path) -> None:
    broken = tmp_path / "b.gguf"
    broken.write_bytes((ggufs / "ik.gguf").read_bytes()[:1000])
    code, _, err = run_cli("inspect", str(broken))
    assert code == 2
    assert err.strip().splitlines() == [
        # the counts at byte 8 already need more than the 1000 bytes left: 13 a key, 24 a tensor at least
        f"error: {broken}: 29 keys and 25 tensors cannot fit in the file at byte offset 8"
    ]
    code, _, err = run_cli("inspect", str(tmp_path / "none.gguf"))
    assert (code, err.strip()) == (2, f"error: {tmp_path / 'none.gguf'}: no such file")


def test_lint_exit_codes_and_json(ggufs: Path) -> None:
    config = str(ggufs / "ck" / "config.json")
    code, out, err = run_cli("lint", str(ggufs / "ik.gguf"), "--config", config)
    assert (code, out) == (0, "")
    assert err.strip() == f"{ggufs / 'ik.gguf'}: 0 error(s), 0 warning(s)"
    code, out, _ = run_cli("lint", str(ggufs / "naive.gguf"), "--config", config)
    assert code == 1
    assert out.startswith(
        "error: [rope-freq-base] dflash-draft.rope.freq_base is missing: loaders fall back to 10000"
    )
    code, out, _ = run_cli("lint", str(ggufs / "naive.gguf"), "--json")
    data = json.loads(out)
    assert code == 1 and data["ok"] is False and data["schema_version"] == 1
    assert [f["rule_id"] for f in data["findings"]] == ["rope-freq-base"]


def test_lint_missing_config_is_usage_error(ggufs: Path) -> None:
    code, _, err = run_cli("lint", str(ggufs / "ik.gguf"), "--config", str(ggufs / "nope.json"))
    assert (code, err.strip()) == (2, f"error: {ggufs / 'nope.json'}: no such file")
