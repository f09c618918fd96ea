"""`add` / `rm`: entries change, every other byte of the manifest stays as the author wrote it."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from hubrelease.errors import InputError
from hubrelease.hashing import sha256_file
from hubrelease.manifest import load_manifest
from hubrelease.onboarding.edit import add_files, remove_paths
from hubrelease.onboarding.init import InitOptions, init_manifest
from hubrelease.verify import verify_manifest
from tests.factories.cli import invoke
from tests.factories.onboarding import deny_reading, write_author_folder

HAND_WRITTEN = """# Hand-written header: kept byte for byte.
schema_version: 1

release:
  repo_id: acme/tiny   # where it goes
  license: mit

# Files, most important first.
artifacts:
  - path: a.bin  # the main one
    size: 1
    sha256: {sha_a}
    role: recommended
    description: first file   # keep this comment
  - path: b.txt
    size: 1
    sha256: {sha_b}
    role: doc

# Trailing section comment.
ignore:
  - scratch   # local only
"""


@pytest.fixture
def release(tmp_path: Path) -> Path:
    (tmp_path / "a.bin").write_bytes(b"a")
    (tmp_path / "b.txt").write_bytes(b"b")
    (tmp_path / "scratch").mkdir()
    manifest = tmp_path / "hubrelease.yaml"
    text = HAND_WRITTEN.format(sha_a=sha256_file(tmp_path / "a.bin"), sha_b=sha256_file(tmp_path / "b.txt"))
    manifest.write_text(text, encoding="utf-8")
    return manifest


def test_add_new_file_appends_one_entry_and_keeps_every_comment(release: Path) -> None:
    before = release.read_text(encoding="utf-8")
    new = release.parent / "c.gguf"
    new.write_bytes(b"")
    result = add_files(release, [new])
    [change] = result.changes
    assert (change.path, change.status, change.size) == ("c.gguf", "added", 0)
    assert result.warnings == (
        "c.gguf: header not readable (truncated: 0 bytes is too small for a GGUF header at byte offset 0); "
        "composition not recorded",
    )
    entry = f"  - path: c.gguf\n    size: 0\n    sha256: {sha256_file(new)}\n    role: variant\n"
    anchor = "    role: doc\n"
    assert release.read_text(encoding="utf-8") == before.replace(anchor, anchor + entry)


def test_add_changed_file_reports_old_and_new_and_rewrites_only_its_values(release: Path) -> None:
    before = release.read_text(encoding="utf-8")
    old_sha = sha256_file(release.parent / "a.bin")
    (release.parent / "a.bin").write_bytes(b"aa")
    [change] = add_files(release, [release.parent / "a.bin"], role="variant").changes
    new_sha = sha256_file(release.parent / "a.bin")
    assert (change.status, change.old_size, change.size) == ("changed", 1, 2)
    assert (change.old_sha256, change.sha256) == (old_sha, new_sha)
    assert set(change.changed_keys) == {"size", "sha256", "role"}
    expected = before.replace("size: 1\n    sha256: " + old_sha, "size: 2\n    sha256: " + new_sha).replace(
        "role: recommended", "role: variant"
    )
    assert release.read_text(encoding="utf-8") == expected


def test_add_unchanged_file_writes_nothing(release: Path) -> None:
    stamp = release.stat().st_mtime_ns
    [change] = add_files(release, [release.parent / "b.txt"]).changes
    assert change.status == "unchanged"
    assert release.stat().st_mtime_ns == stamp


def test_rm_last_entry_keeps_the_following_section_comment(release: Path) -> None:
    before = release.read_text(encoding="utf-8")
    remove_paths(release, ["b.txt"])
    entry = before[before.index("  - path: b.txt") : before.index("\n# Trailing")]
    assert release.read_text(encoding="utf-8") == before.replace(entry, "")
    remove_paths(release, ["a.bin"])
    text = release.read_text(encoding="utf-8")
    assert "artifacts: []\n\n# Trailing section comment.\nignore:" in text
    assert text.startswith("# Hand-written header: kept byte for byte.\n")


def test_rm_unknown_path_writes_nothing(release: Path) -> None:
    before = release.read_text(encoding="utf-8")
    with pytest.raises(InputError) as missing:
        remove_paths(release, ["b.txt", "nope.bin"])
    assert str(missing.value) == f"{release}: not in the manifest: nope.bin"
    assert release.read_text(encoding="utf-8") == before


def test_add_then_rm_round_trips_an_init_manifest(tmp_path: Path) -> None:
    root = write_author_folder(tmp_path / "rel", symlink=False)
    out = root / "hubrelease.yaml"
    init_manifest(InitOptions(root=root, out=out, exclude=("extra.md",)))
    before = out.read_text(encoding="utf-8")
    (root / "extra.md").write_text("more\n", encoding="utf-8")
    add_files(out, [root / "extra.md"], path_in_repo="docs/extra.md")
    assert verify_manifest(load_manifest(out), out).findings == ()
    remove_paths(out, ["docs/extra.md"])
    assert out.read_text(encoding="utf-8") == before


def test_evaluation_json_goes_to_evaluations(tmp_path: Path) -> None:
    root = write_author_folder(tmp_path / "rel", symlink=False)
    out = root / "hubrelease.yaml"
    init_manifest(InitOptions(root=root, out=out))
    copy = root / "results" / "h200.json"
    copy.write_bytes((root / "results" / "spark.json").read_bytes())
    [change] = add_files(out, [copy]).changes
    assert change.status == "evaluation"
    assert load_manifest(out).evaluation_paths == ["results/spark.json", "results/h200.json"]
    assert all(e.sha256 is not None for e in load_manifest(out).evaluation_files)  # pinned like artifacts
    text = out.read_text(encoding="utf-8")
    assert "  - path: results/h200.json\n" in text
    remove_paths(out, ["results/h200.json"])
    assert load_manifest(out).evaluation_paths == ["results/spark.json"]


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing.bin", "no such file"),
        ("link.bin", "is a symlink; add the file it points to"),
        ("folder", "is not a regular file"),
    ],
)
def test_add_refuses_files_verify_would_refuse(release: Path, name: str, message: str) -> None:
    (release.parent / "folder").mkdir()
    os.symlink("a.bin", release.parent / "link.bin")
    before = release.read_text(encoding="utf-8")
    with pytest.raises(InputError) as refused:
        add_files(release, [release.parent / name])
    assert str(refused.value) == f"{release.parent / name}: {message}"
    assert release.read_text(encoding="utf-8") == before


def test_add_outside_the_release_folder_is_refused(
    release: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("elsewhere") / "x.bin"
    outside.write_bytes(b"x")
    with pytest.raises(InputError, match="is outside the release folder"):
        add_files(release, [outside])


def test_add_unreadable_file_is_one_error(release: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deny_reading(monkeypatch, "a.bin")
    (release.parent / "a.bin").write_bytes(b"changed")
    with pytest.raises(InputError) as refused:
        add_files(release, [release.parent / "a.bin"])
    assert str(refused.value) == f"{release.parent / 'a.bin'}: cannot read: Permission denied"


def test_path_in_repo_rules(release: Path) -> None:
    with pytest.raises(InputError, match="--path-in-repo needs exactly one FILE"):
        add_files(release, [release.parent / "a.bin", release.parent / "b.txt"], path_in_repo="x")
    with pytest.raises(InputError, match=re.escape("must not contain '..'")):
        add_files(release, [release.parent / "a.bin"], path_in_repo="../x")
    with pytest.raises(InputError, match=re.escape("already listed as a.bin; `hubrelease rm` it first")):
        add_files(release, [release.parent / "a.bin"], path_in_repo="renamed.bin")


def test_file_published_under_another_path_is_refreshed_there(release: Path) -> None:
    built = release.parent / "build" / "out.gguf"
    built.parent.mkdir()
    built.write_bytes(b"v1")
    add_files(release, [built], path_in_repo="drafter.gguf")
    built.write_bytes(b"v2!")
    [change] = add_files(release, [built]).changes
    assert (change.path, change.status, change.old_size, change.size) == ("drafter.gguf", "changed", 2, 3)
    entry = load_manifest(release).artifact("drafter.gguf")
    assert entry is not None and (entry.local, entry.size) == ("build/out.gguf", 3)


def test_add_and_rm_keep_quoted_values_outside_the_edited_entries(tmp_path: Path) -> None:
    (tmp_path / "a.bin").write_bytes(b"a")
    manifest = tmp_path / "hubrelease.yaml"
    text = (
        "schema_version: 1\n"
        "release:\n"
        '  repo_id: "acme/tiny"\n'
        "  license: 'mit'\n"
        '  title: "Tiny: a drafter"\n'
        "artifacts:\n"
        "  - path: a.bin\n"
        "    size: 1\n"
        f"    sha256: {sha256_file(tmp_path / 'a.bin')}\n"
        "    role: recommended\n"
        '    description: "on"\n'
    )
    manifest.write_text(text, encoding="utf-8")
    (tmp_path / "b.txt").write_bytes(b"b")
    add_files(manifest, [tmp_path / "b.txt"])
    entry = f"  - path: b.txt\n    size: 1\n    sha256: {sha256_file(tmp_path / 'b.txt')}\n    role: doc\n"
    assert manifest.read_text(encoding="utf-8") == text + entry
    remove_paths(manifest, ["b.txt"])
    assert manifest.read_text(encoding="utf-8") == text


@pytest.mark.parametrize(
    ("mapping", "dash"),
    [("  ", ""), ("    ", ""), ("    ", "  ")],
    ids=["pyyaml-default", "four-space-flush-dashes", "four-space-indented-dashes"],
)
def test_add_and_rm_keep_the_files_own_indentation(tmp_path: Path, mapping: str, dash: str) -> None:
    (tmp_path / "a.bin").write_bytes(b"a")
    (tmp_path / "b.txt").write_bytes(b"b")
    item = dash + "  "  # where an item's keys sit, relative to its parent key
    text = (
        f"schema_version: 1\nrelease:\n{mapping}repo_id: acme/tiny\n{mapping}license: mit\n"
        f"{mapping}tags:\n{mapping}{dash}- one\nartifacts:\n{dash}- path: a.bin\n{item}size: 1\n"
        f"{item}sha256: {sha256_file(tmp_path / 'a.bin')}\n{item}role: recommended\n"
    )
    manifest = tmp_path / "hubrelease.yaml"
    manifest.write_text(text, encoding="utf-8")
    add_files(manifest, [tmp_path / "b.txt"])
    entry = f"{dash}- path: b.txt\n{item}size: 1\n{item}sha256: {sha256_file(tmp_path / 'b.txt')}\n{item}role: doc\n"
    assert manifest.read_text(encoding="utf-8") == text + entry
    remove_paths(manifest, ["b.txt"])
    assert manifest.read_text(encoding="utf-8") == text


def test_add_refuses_the_manifest_itself(release: Path) -> None:
    before = release.read_text(encoding="utf-8")
    with pytest.raises(InputError) as info:
        add_files(release, [release.parent / "b.txt", release])
    assert str(info.value) == f"{release}: is the manifest itself; it cannot pin its own digest"
    assert release.read_text(encoding="utf-8") == before


def test_path_in_repo_never_pins_one_files_digest_on_another(release: Path) -> None:
    other = release.parent / "other.bin"
    other.write_bytes(b"other bytes")
    before = release.read_text(encoding="utf-8")
    with pytest.raises(InputError, match=re.escape("a.bin is already published from a.bin")):
        add_files(release, [other], path_in_repo="a.bin")
    assert release.read_text(encoding="utf-8") == before
    findings = verify_manifest(load_manifest(release), release).findings
    assert [(f.path, f.kind) for f in findings] == [("other.bin", "unlisted")]  # a.bin's pin untouched


def test_the_card_is_pinned_as_the_card_never_as_an_artifact(release: Path) -> None:
    readme = release.parent / "README.md"
    readme.write_text("# hand-written\n")
    [change] = add_files(release, [readme]).changes
    assert change.status == "card"
    manifest = load_manifest(release)
    assert manifest.artifact("README.md") is None
    assert manifest.card is not None and manifest.card.hand_written
    assert manifest.card.sha256 == sha256_file(readme)
    assert verify_manifest(manifest, release).findings == ()
    readme.write_text("# edited\n")
    kinds = {f.kind for f in verify_manifest(load_manifest(release), release).findings}
    assert kinds == {"size_mismatch"}


def test_a_rendered_card_is_not_added(release: Path) -> None:
    release.write_text(release.read_text() + "card:\n  template: safetensors_drafter\n")
    (release.parent / "README.md").write_text("# rendered\n")
    with pytest.raises(InputError, match="run `hubrelease render-card` instead"):
        add_files(release, [release.parent / "README.md"])


def test_a_file_named_like_a_repo_path_published_from_elsewhere_is_refused(release: Path) -> None:
    built = release.parent / "build" / "out.gguf"
    built.parent.mkdir()
    built.write_bytes(b"built")
    add_files(release, [built], path_in_repo="drafter.gguf")
    stray = release.parent / "drafter.gguf"
    stray.write_bytes(b"some other bytes")
    before = release.read_text(encoding="utf-8")
    # Before: drafter.gguf kept local build/out.gguf but took the stray file's size and digest.
    with pytest.raises(InputError, match=re.escape("drafter.gguf is already published from build/out.gguf")):
        add_files(release, [stray])
    assert release.read_text(encoding="utf-8") == before


@pytest.mark.parametrize(
    "name",
    [b"\xff", b"tab\tname", b"a\nb", b" lead"],
    ids=["undecodable byte", "control", "newline", "space"],
)
def test_add_refuses_a_name_no_manifest_can_hold_before_hashing(release: Path, name: bytes) -> None:
    """Found by tests/fuzz: a file named with an undecodable byte (a lone surrogate in Python) ended in
    exit 3 (UnicodeEncodeError in the stat cache). Control characters and spaces were refused only
    after hashing, at a line of the would-be manifest. Now each is one line naming the file, exit 2."""
    path = Path(os.fsdecode(os.fsencode(release.parent) + b"/" + name))
    path.write_bytes(b"odd")
    before = release.read_bytes()
    result = invoke(["add", str(release), str(path)])
    assert result.exit_code == 2, result.stderr
    lines = result.stderr.strip("\n").split("\n")
    assert len(lines) == 1 and "cannot be a path in the repo" in lines[0], result.stderr
    assert release.read_bytes() == before
