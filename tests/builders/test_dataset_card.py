"""Dataset card: counts, tallies, re-shard-invariant digest, front matter, and one-line refusals."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from huggingface_hub import DatasetCard

from hubrelease.builders.dataset_card import CardOptions, size_category, summarise
from hubrelease.manifest import load_manifest
from hubrelease.recipes.record import build_dataset_card
from tests.builders.test_content_digest import reference_digest
from tests.factories.cli import invoke
from tests.factories.datasets import (
    conversations,
    write_jsonl_shard,
    write_parquet_shards,
    write_tokenizer,
)

ROWS = 40
TOKENS = sum(i % 7 + 3 for i in range(ROWS))


def test_summary_counts_tallies_and_shard_digests(tmp_path: Path) -> None:
    paths = write_parquet_shards(tmp_path / "data", conversations(ROWS), shards=3)
    summary = summarise(tmp_path / "data")
    assert (summary.conversations, summary.completion_tokens) == (ROWS, TOKENS)
    assert summary.categories == {"chat": 10, "code": 10, "math": 10, "stem": 10}
    assert summary.licenses == {"cc-by-4.0": 32, "odc-by": 8}
    assert summary.generators == {"ornith-1.5": 26, "ornith-1.5-nvfp4": 14}
    assert [(s.path, s.sha256) for s in summary.shards] == [
        (p.name, hashlib.sha256(p.read_bytes()).hexdigest()) for p in paths
    ]
    assert summary.download_bytes == sum(p.stat().st_size for p in paths)


def test_content_digest_survives_resharding_and_format_but_not_edits(tmp_path: Path) -> None:
    rows = conversations(ROWS)
    write_parquet_shards(tmp_path / "two", rows, shards=2)
    write_parquet_shards(tmp_path / "five", rows, shards=5)
    write_jsonl_shard(tmp_path / "jsonl" / "all.jsonl", rows)
    digests = {name: summarise(tmp_path / name).content_sha256 for name in ("two", "five", "jsonl")}
    assert len(set(digests.values())) == 1
    assert digests["two"] == reference_digest(rows)  # the documented recipe, independently
    rows[7]["messages"][1]["content"] += "!"
    write_parquet_shards(tmp_path / "edited", rows, shards=2)
    assert summarise(tmp_path / "edited").content_sha256 != digests["two"]


def test_tokenizer_counts_assistant_turns_only(tmp_path: Path) -> None:
    write_parquet_shards(tmp_path / "data", conversations(ROWS, counts=False))
    tokenizer = write_tokenizer(tmp_path / "tokenizer.json")
    summary = summarise(tmp_path / "data", tokenizer=tokenizer)
    assert summary.completion_tokens == TOKENS
    assert summary.token_source.startswith("tokenized assistant turns with tokenizer.json (sha256 ")


@pytest.mark.parametrize(
    ("rows", "bucket"),
    [(0, "n<1K"), (999, "n<1K"), (1000, "1K<n<10K"), (108_729, "100K<n<1M"), (10**13, "n>1T")],
)
def test_size_category_counts_examples(rows: int, bucket: str) -> None:
    assert size_category(rows) == bucket


def test_card_front_matter_reads_back_through_huggingface_hub(tmp_path: Path) -> None:
    write_parquet_shards(tmp_path / "data", conversations(ROWS))
    options = CardOptions(
        license="cc-by-4.0", source_datasets=("nvidia/Nemotron-Post-Training-Dataset-v2",), languages=("en",)
    )
    build_dataset_card(tmp_path / "data", tmp_path / "README.md", options=options)
    card = DatasetCard.load(tmp_path / "README.md")
    data = card.data.to_dict()
    assert data["license"] == "cc-by-4.0"
    assert data["language"] == ["en"]
    assert data["size_categories"] == ["n<1K"]
    assert data["source_datasets"] == ["nvidia/Nemotron-Post-Training-Dataset-v2"]
    assert data["configs"] == [
        {"config_name": "default", "data_files": [{"split": "train", "path": "data/*.parquet"}]}
    ]
    assert data["dataset_info"]["splits"][0]["num_examples"] == ROWS
    assert data["dataset_info"]["features"][0] == {
        "name": "messages",
        "list": [{"name": "role", "dtype": "string"}, {"name": "content", "dtype": "string"}],
    }
    assert f"{TOKENS:,} assistant completion tokens" in card.text
    assert "| data/train-00001-of-00002.parquet | 20 |" in card.text
    assert "This dataset is released under CC-BY-4.0." in card.text
    assert "Derived from [nvidia/Nemotron-Post-Training-Dataset-v2]" in card.text


def test_nothing_is_assumed_without_a_manifest_or_options(tmp_path: Path) -> None:
    write_parquet_shards(tmp_path / "data", conversations(ROWS))
    build_dataset_card(tmp_path / "data", tmp_path / "README.md")
    text = (tmp_path / "README.md").read_text(encoding="utf-8")
    data = DatasetCard.load(tmp_path / "README.md").data.to_dict()
    assert "license" not in data and "source_datasets" not in data and "language" not in data
    assert "Nemotron" not in text and "CC BY" not in text and "CC-BY" not in text
    assert "No licence is stated for this dataset." in text


def test_manifest_supplies_title_licence_and_credit(tmp_path: Path) -> None:
    write_parquet_shards(tmp_path / "data", conversations(8))
    manifest = {
        "schema_version": 1,
        "release": {
            "repo_id": "jzinno/Ornith-1.5-35B-A3B-Nemotron-v2-100M",
            "repo_type": "dataset",
            "license": "cc-by-4.0",
            "title": "Ornith 1.5 Nemotron v2 generations",
        },
        "pins": {
            "datasets": [
                {
                    "repo_id": "nvidia/Nemotron-Post-Training-Dataset-v2",
                    "license": "cc-by-4.0",
                    "revision": "0" * 40,
                    "attribution": "Prompts: NVIDIA Nemotron-Post-Training-Dataset-v2, CC BY 4.0.",
                }
            ]
        },
    }
    (tmp_path / "hubrelease.yaml").write_text(yaml.safe_dump(manifest), encoding="utf-8")
    build_dataset_card(tmp_path / "data", tmp_path / "README.md", manifest=tmp_path / "hubrelease.yaml")
    card = DatasetCard.load(tmp_path / "README.md")
    assert card.data.pretty_name == "Ornith 1.5 Nemotron v2 generations"
    assert card.text.startswith("\n# Ornith 1.5 Nemotron v2 generations\n")
    assert "\nPrompts: NVIDIA Nemotron-Post-Training-Dataset-v2, CC BY 4.0.\n" in card.text
    recorded = load_manifest(tmp_path / "hubrelease.yaml").card  # the written README is pinned there
    assert recorded is not None and recorded.template == "none" and recorded.output == "README.md"
    assert recorded.sha256 == hashlib.sha256((tmp_path / "README.md").read_bytes()).hexdigest()


def test_a_bad_manifest_is_refused_before_any_shard_is_read_or_card_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_parquet_shards(tmp_path / "data", conversations(8))
    code, err = _cli(tmp_path, "--manifest", "missing.yaml")
    assert code == 2 and "missing.yaml: manifest not found" in err
    (tmp_path / "bad.yaml").write_text("schema_version: 1\nrelease: {repo_id: acme/x}\n")
    code, err = _cli(tmp_path, "--manifest", "bad.yaml")
    assert code == 2 and "release.license" in err


def _cli(tmp_path: Path, *extra: str) -> tuple[int, str]:
    readme = tmp_path / "README.md"
    readme.write_text("previous\n", encoding="utf-8")
    result = invoke(["build", "dataset-card", "data", "--out", "README.md", *extra])
    assert readme.read_text(encoding="utf-8") == "previous\n" or result.exit_code == 0
    return result.exit_code, result.stderr


def test_cli_writes_card_and_json_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write_parquet_shards(tmp_path / "data", conversations(ROWS))
    result = invoke(["build", "dataset-card", "data", "--out", "README.md", "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["schema_version"], report["conversations"], report["completion_tokens"]) == (
        1,
        ROWS,
        TOKENS,
    )
    assert report["content_sha256"] in (tmp_path / "README.md").read_text(encoding="utf-8")


def _write_bad(tmp_path: Path, case: str) -> None:
    data = tmp_path / "data"
    data.mkdir()
    rows = conversations(6)
    if case == "empty shard":
        write_parquet_shards(data, rows, shards=1)
        pq.write_table(pa.Table.from_pylist(rows).slice(0, 0), data / "train-00002.parquet")
    elif case == "wrong schema":
        pq.write_table(pa.table({"messages": ["hello"], "completion_tokens": [1]}), data / "a.parquet")
    elif case == "null count":
        rows[4]["completion_tokens"] = None
        write_parquet_shards(data, rows, shards=1)
    elif case == "no counts":
        write_parquet_shards(data, conversations(6, counts=False), shards=1)
    elif case == "malformed line":
        write_jsonl_shard(data / "a.jsonl", rows)
        with (data / "a.jsonl").open("a", encoding="utf-8") as handle:
            handle.write('{"messages": [}\n')
    elif case == "bad messages":
        rows[2]["messages"] = [{"role": "user"}]
        write_jsonl_shard(data / "a.jsonl", rows)
    elif case == "schemas differ":
        write_parquet_shards(data, rows, shards=1)
        write_jsonl_shard(data / "y.jsonl", rows)  # same columns in another format is fine
        write_jsonl_shard(data / "z.jsonl", [{"messages": rows[0]["messages"], "completion_tokens": 3}])


@pytest.mark.parametrize(
    ("case", "line"),
    [
        ("empty shard", "error: data/train-00002.parquet: empty shard: no rows"),
        (
            "wrong schema",
            "error: data/a.parquet: messages: expected list<struct<role: string, content: string>>, got string",
        ),
        (
            "null count",
            "error: data/train-00000-of-00001.parquet: completion_tokens: row 5: token count is missing or negative",
        ),
        (
            "no counts",
            "error: data/train-00000-of-00001.parquet: completion_tokens: no stored token counts; "
            "pass --tokenizer tokenizer.json to count assistant tokens",
        ),
        ("malformed line", "error: data/a.jsonl:7: malformed JSON line: Expecting value"),
        ("bad messages", "error: data/a.jsonl:3: messages: expected a list of {role, content} strings"),
        (
            "schemas differ",
            "error: data/z.jsonl: columns ['messages', 'completion_tokens'] differ from "
            "train-00000-of-00001.parquet's ['messages', 'category', 'license', 'generator', 'completion_tokens']",
        ),
    ],
)
def test_bad_data_is_one_line_exit_2_and_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, line: str
) -> None:
    monkeypatch.chdir(tmp_path)
    _write_bad(tmp_path, case)
    assert _cli(tmp_path) == (2, line + "\n")


def test_missing_folder_and_folder_without_shards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert _cli(tmp_path) == (2, "error: data: expected a folder of .parquet or .jsonl shards\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "notes.txt").write_text("x", encoding="utf-8")
    assert _cli(tmp_path) == (2, "error: data: no .parquet or .jsonl shards found\n")


def test_jsonl_keys_missing_from_the_first_row_are_counted_and_digested(tmp_path: Path) -> None:
    rows = conversations(ROWS)
    write_parquet_shards(tmp_path / "parquet", rows, shards=1)
    first = {key: value for key, value in rows[0].items() if key != "category"}
    write_jsonl_shard(tmp_path / "jsonl" / "all.jsonl", [first, *rows[1:]])
    summary = summarise(tmp_path / "jsonl")
    assert sum(summary.categories.values()) == ROWS
    assert summary.categories.get("unspecified") == 1
    edited = [first, *rows[1:-1], {**rows[-1], "category": "other"}]
    write_jsonl_shard(tmp_path / "edited" / "all.jsonl", edited)
    assert summarise(tmp_path / "edited").content_sha256 != summary.content_sha256


def test_null_message_fields_are_digested_and_unsupported_columns_name_the_shard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [
        {**row, "messages": [{**m, "tool_calls": None} for m in row["messages"]]} for row in conversations(4)
    ]
    write_jsonl_shard(tmp_path / "jsonl" / "a.jsonl", rows)
    assert summarise(tmp_path / "jsonl").conversations == 4
    monkeypatch.chdir(tmp_path)
    table = pa.Table.from_pylist(conversations(4))
    (tmp_path / "data").mkdir()
    pq.write_table(table.append_column("blob", pa.array([b"x"] * 4)), tmp_path / "data" / "a.parquet")
    assert _cli(tmp_path) == (
        2,
        "error: data/a.parquet: blob: column type binary is not supported by the content digest\n",
    )


@pytest.mark.parametrize(("offset", "reason"), [(8, "Deserializing page header failed."), (200, "snappy")])
def test_corrupt_parquet_pages_are_one_line_naming_the_shard(
    tmp_path: Path, offset: int, reason: str
) -> None:
    # The footer is intact, so the file opens; the damage surfaces only while its batches decode
    # (pyarrow's thrift message spans lines; a bad snappy page was an internal error).
    data = tmp_path / "data"
    data.mkdir()
    shard = write_parquet_shards(data, conversations(ROWS), shards=1)[0]
    damaged = bytearray(shard.read_bytes())
    damaged[offset : offset + 16] = b"\xff" * 16
    shard.write_bytes(bytes(damaged))
    result = invoke(["build", "dataset-card", str(data), "--out", str(tmp_path / "README.md")])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {shard}: corrupt parquet data (")
    assert reason in result.stderr and result.stderr.count("\n") == 1
    assert not (tmp_path / "README.md").exists()
