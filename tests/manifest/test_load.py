"""Manifest loading: every invalid input is one line naming file, YAML line and field."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hubrelease.errors import InputError, ManifestError
from hubrelease.manifest import Manifest, load_manifest, load_manifest_text
from hubrelease.manifest.roundtrip import manifest_to_yaml

GOOD = """\
schema_version: 1
release:
  repo_id: acme/drafter
  license: apache-2.0
pins:
  targets:
    - repo_id: acme/target
      revision: 0f0b1b59b879ccde1353e6ebd0fb10c204d4c544
artifacts:
  - path: model.safetensors
    size: 10
    sha256: b6413dfea95b7f1578d74a37f9b37367d6c9ace28a38a4e7dbe36241c54eee5d
"""


def _error(text: str) -> ManifestError:
    with pytest.raises(ManifestError) as info:
        load_manifest_text(text, "m.yaml")
    return info.value


def test_good_manifest_loads() -> None:
    manifest = load_manifest_text(GOOD)
    assert manifest.artifacts[0].size == 10
    assert manifest.pins.targets[0].revision == "0f0b1b59b879ccde1353e6ebd0fb10c204d4c544"


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "    size: 10\n",
            "    size: 10\n    colour: blue\n",
            "m.yaml:12: artifacts[0].colour: unknown key (allowed keys are listed by `hubrelease schema`)",
        ),
        (
            "sha256: b6413dfea95b7f1578d74a37f9b37367d6c9ace28a38a4e7dbe36241c54eee5d",
            "sha256: B6413DFEA95B7F1578D74A37F9B37367D6C9ACE28A38A4E7DBE36241C54EEE5D",
            "m.yaml:12: artifacts[0].sha256: must be 64 lowercase hex characters (a SHA-256 digest)",
        ),
        (
            "  - path: model.safetensors",
            "  - path: ../outside.bin",
            "m.yaml:10: artifacts[0].path: path '../outside.bin' must not contain '..', '.' or empty segments",
        ),
        (
            "  - path: model.safetensors",
            "  - path: /etc/passwd",
            "m.yaml:10: artifacts[0].path: path '/etc/passwd' is absolute; it must be relative to the release folder",
        ),
        (
            "    size: 10\n",
            "    size: -1\n",
            "m.yaml:11: artifacts[0].size: Input should be greater than or equal to 0",
        ),
        (
            "revision: 0f0b1b59b879ccde1353e6ebd0fb10c204d4c544",
            "revision: main",
            "m.yaml:8: pins.targets[0].revision: revision 'main' is not a 40-hex commit; pin a commit "
            "(hubrelease lock resolves branches) or set unpinned: true",
        ),
        (
            "  license: apache-2.0\n",
            "",
            "m.yaml:2: release.license: required field is missing",
        ),
        (
            "schema_version: 1",
            "schema_version: 2",
            "m.yaml:1: schema_version: schema_version 2 is not supported by this hubrelease (expected 1)",
        ),
    ],
)
def test_invalid_manifest_names_file_line_and_field(old: str, new: str, expected: str) -> None:
    assert old in GOOD
    assert str(_error(GOOD.replace(old, new, 1))) == expected


def test_branch_is_accepted_when_marked_unpinned() -> None:
    text = GOOD.replace(
        "revision: 0f0b1b59b879ccde1353e6ebd0fb10c204d4c544", "revision: main\n      unpinned: true"
    )
    assert load_manifest_text(text).pins.targets[0].unpinned


def test_duplicate_artifact_paths_point_at_the_second_entry() -> None:
    text = GOOD + "  - path: model.safetensors\n    size: 1\n"
    assert str(_error(text)) == "m.yaml:13: artifacts[1].path: 'model.safetensors' is listed twice"


def test_bad_yaml_reports_the_line() -> None:
    error = _error("schema_version: 1\nrelease: [unclosed\n")
    assert error.path == "m.yaml"
    assert error.line == 3
    assert str(error).startswith("m.yaml:3: invalid YAML:")


def test_duplicate_yaml_key_is_an_error() -> None:
    error = _error(GOOD + "release:\n  repo_id: x/y\n")
    assert str(error).startswith("m.yaml:")
    assert "invalid YAML" in str(error)


def test_top_level_must_be_a_mapping() -> None:
    assert str(_error("- a\n- b\n")) == "m.yaml:1: the manifest must be a YAML mapping"


def test_license_other_needs_name_and_link() -> None:
    error = _error(GOOD.replace("license: apache-2.0", "license: other"))
    assert str(error) == "m.yaml:4: release.license: license 'other' needs license_name and license_link"


def test_missing_file_is_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="manifest not found"):
        load_manifest(tmp_path / "nope.yaml")


def test_committed_manifests_are_valid(repo_root: Path) -> None:
    paths = sorted((repo_root / "manifests").glob("*/hubrelease.yaml"))
    assert len(paths) >= 3
    for path in paths:
        assert load_manifest(path).schema_version == 1


def test_seed_001_pins_target_shards_by_size_only(repo_root: Path) -> None:
    manifest = load_manifest(repo_root / "manifests/ornith-1.0-dflash-gguf/hubrelease.yaml")
    target = manifest.pins.targets[0]
    assert target.unpinned
    assert [f.size for f in target.files] == [19982543552, 19806331648, 19806331648, 19994372480, 18176416800]
    assert all(f.sha256 is None for f in target.files)
    assert len(manifest.pins.engines[0].binaries) == 4


_printable = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"))
_hex = st.text("0123456789abcdef", min_size=64, max_size=64)
_name = st.from_regex(r"[a-z][a-z0-9_]{0,8}(/[a-z][a-z0-9_.]{0,8}){0,2}", fullmatch=True)
_artifact = st.fixed_dictionaries(
    {"path": _name, "size": st.integers(0, 2**45), "sha256": _hex},
    optional={
        "role": st.sampled_from(["recommended", "variant", "benchmark", "data", "doc"]),
        "description": st.text(_printable, min_size=1, max_size=30).filter(lambda s: s.strip() == s),
        "composition": st.dictionaries(st.sampled_from(["F32", "Q8_0", "IQ3_KS"]), st.integers(0, 99)),
    },
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    artifacts=st.lists(_artifact, max_size=5, unique_by=lambda a: a["path"]),
    tags=st.lists(st.text(_printable, min_size=1)),
)
def test_load_dump_load_round_trip(artifacts: list[dict[str, object]], tags: list[str]) -> None:
    manifest = Manifest.model_validate(
        {
            "schema_version": 1,
            "release": {"repo_id": "acme/x", "license": "mit", "tags": tags},
            "artifacts": artifacts,
        }
    )
    text = manifest_to_yaml(manifest)
    assert load_manifest_text(text) == manifest  # ruamel, the error-reporting path
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "hubrelease.yaml"
        path.write_text(text, encoding="utf-8")
        assert load_manifest(path) == manifest  # libyaml fast path reads the same values


def test_fast_path_reads_yaml_1_2_scalars_like_ruamel(tmp_path: Path) -> None:
    text = (
        GOOD
        + "card:\n  variables:\n    a: yes\n    b: 0777\n    c: 1:20\n    d: 0x1F\n    e: 1_000\n    f: ~\n"
    )
    path = tmp_path / "m.yaml"
    path.write_text(text)
    fast = load_manifest(path)
    assert fast == load_manifest_text(text)
    assert fast.card is not None
    assert fast.card.variables == {"a": "yes", "b": 777, "c": "1:20", "d": 31, "e": 1000, "f": None}


def test_duplicate_key_on_fast_path_still_fails_with_line(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(GOOD.replace("  license: apache-2.0\n", "  license: apache-2.0\n  license: mit\n"))
    with pytest.raises(ManifestError) as info:
        load_manifest(path)
    assert info.value.line == 5
    assert "invalid YAML" in str(info.value)


def test_missing_top_level_key_points_at_the_mapping() -> None:
    assert str(_error("# a comment\nrelease:\n  repo_id: a/b\n  license: mit\n")) == (
        "m.yaml:2: schema_version: required field is missing"
    )
