"""README front matter -> release fields, through huggingface_hub's ModelCard / DatasetCard."""

from __future__ import annotations

from pathlib import Path

from hubrelease.manifest.card_fields import card_release_fields
from tests.factories.onboarding import README_TEXT


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "README.md"
    path.write_text(text, encoding="utf-8")
    return path


def test_model_card_fields(tmp_path: Path) -> None:
    fields, warnings = card_release_fields(write(tmp_path, README_TEXT), "model")
    assert fields == {
        "license": "apache-2.0",
        "base_model": ["acme/target-8b"],
        "base_model_relation": "finetune",
        "pipeline_tag": "text-generation",
        "library_name": "gguf",
        "tags": ["dflash", "speculative-decoding"],
    }
    assert warnings == []


def test_values_the_manifest_refuses_are_left_out_with_warnings(tmp_path: Path) -> None:
    text = "---\nlicense: other\nbase_model:\n- ok/model\n- not a repo\nbase_model_relation: distilled\n---\n"
    fields, warnings = card_release_fields(write(tmp_path, text), "model")
    assert fields == {"base_model": ["ok/model"]}
    assert warnings == [
        "README.md: license 'other' without license_name and license_link; left out",
        "README.md: base_model 'not a repo' is not a Hub repo id; left out",
    ]


def test_other_license_with_name_and_link_is_kept(tmp_path: Path) -> None:
    text = "---\nlicense: other\nlicense_name: acme\nlicense_link: LICENSE\n---\n"
    fields, _ = card_release_fields(write(tmp_path, text), "model")
    assert fields == {"license": "other", "license_name": "acme", "license_link": "LICENSE"}


def test_dataset_card_and_no_front_matter(tmp_path: Path) -> None:
    fields, _ = card_release_fields(
        write(tmp_path, "---\nlicense: cc-by-4.0\ntags: [chat]\n---\n"), "dataset"
    )
    assert fields == {"license": "cc-by-4.0", "tags": ["chat"]}
    assert card_release_fields(write(tmp_path, "# just prose\n"), "model") == ({}, [])


def test_broken_front_matter_is_a_warning(tmp_path: Path) -> None:
    fields, warnings = card_release_fields(write(tmp_path, "---\nlicense: [unclosed\n---\n# x\n"), "model")
    assert fields == {}
    assert warnings == [
        "README.md: front matter not readable (invalid YAML: did not find expected ',' or ']'); card metadata not imported"
    ]


def test_empty_tag_items_are_not_published_as_none(tmp_path: Path) -> None:
    fields, _ = card_release_fields(write(tmp_path, "---\ntags:\n  -\n  - 3\n  - chat\n---\n"), "model")
    assert fields == {"tags": ["3", "chat"]}
    fields, _ = card_release_fields(write(tmp_path, "---\ntags: [null]\n---\n"), "model")
    assert fields == {}
