"""`import_repo` against the loopback Hub: LFS and regular files, branch -> commit, card front matter."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from hubrelease.errors import InputError, NotFoundError
from hubrelease.hub.metadata import RemoteFile, list_files
from hubrelease.hub.remote_headers import INITIAL_READ
from hubrelease.hub.remote_verify import verify_remote
from hubrelease.manifest import load_manifest
from hubrelease.onboarding import importer
from hubrelease.onboarding.facts import inspect_composition
from hubrelease.onboarding.importer import import_repo, parse_spec
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import invoke
from tests.factories.hub import api_for, unique_repo, upload_files
from tests.factories.onboarding import publish_author_folder


def test_branch_is_resolved_and_every_file_pinned_without_downloading_lfs(
    loopback_hub: LoopbackHub, tmp_path: Path
) -> None:
    repo_id, folder, commit = publish_author_folder(api_for(loopback_hub), tmp_path / "release")
    out = tmp_path / "imported.yaml"
    loopback_hub.requests.clear()
    result = import_repo(api_for(loopback_hub), f"{repo_id}@dev", out)
    assert result.commit == commit
    manifest = load_manifest(out)
    assert manifest.release.revision == "dev"
    local = {p.relative_to(folder).as_posix(): p for p in folder.rglob("*") if p.is_file()}
    pinned = {a.path: (a.size, a.sha256) for a in manifest.artifacts}
    expected = {
        name: (p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest())
        for name, p in local.items()
        if name not in ("results/spark.json", "README.md")  # the card is pinned as the card
    }
    assert pinned == expected
    assert manifest.evaluation_paths == ["results/spark.json"]
    roles = {a.path: a.role for a in manifest.artifacts}
    assert roles["weights/checkpoint-0.safetensors"] == "recommended"
    assert roles["gguf/drafter-q4.gguf"] == "variant"
    assert "README.md" not in roles  # the card is never an artifact
    assert manifest.card is not None and manifest.card.template == "none" and manifest.card.sha256
    # Card front matter, parsed by huggingface_hub's ModelCard.
    assert manifest.release.license == "apache-2.0"
    assert manifest.release.base_model == ["acme/target-8b"]
    assert manifest.release.base_model_relation == "finetune"
    assert manifest.release.tags == ["dflash", "speculative-decoding"]
    # Only regular files were fetched; the LFS weights never crossed the wire.
    records = loopback_hub.requests.records
    lfs = {
        n: p.stat().st_size
        for n, p in local.items()
        if n.endswith((".gguf", ".safetensors")) and p.stat().st_size
    }
    fetched = [r.path.partition(f"/resolve/{commit}/")[2] for r in records if "/resolve/" in r.path]
    assert "README.md" in fetched and set(fetched) & set(lfs) == set(lfs)
    # One GET per file, no HEAD: regular files whole (checked against the git blob id from the tree
    # listing), LFS model files only their headers, by range requests, for the composition.
    assert sorted(fetched) == sorted(set(fetched)) and {
        r.method for r in records if r.route == "resolve"
    } == {"GET"}
    redirected = [r for r in records if r.path.partition(f"/resolve/{commit}/")[2] in lfs]
    header_bytes = [r.bytes_out for r in records if r.route == "cdn"]  # where resolve's 302 sent them
    assert {r.status for r in redirected} == {302} and len(header_bytes) == len(redirected) == len(lfs)
    assert 0 < sum(header_bytes) <= len(lfs) * INITIAL_READ
    compositions = {a.path: a.composition for a in manifest.artifacts if a.path in lfs}
    assert compositions == {n: inspect_composition(local[n])[0] for n in lfs}
    assert result.fetched_bytes == sum(p.stat().st_size for p in local.values()) - sum(lfs.values())
    assert sum(r.bytes_out for r in records) < sum(lfs.values()) + sum(header_bytes)
    assert f"at commit {commit}" in out.read_text(encoding="utf-8").splitlines()[0]


def test_imported_manifest_passes_remote_verify(loopback_hub: LoopbackHub, tmp_path: Path) -> None:
    repo_id, _, commit = publish_author_folder(api_for(loopback_hub), tmp_path / "release")
    out = tmp_path / "imported.yaml"
    import_repo(api_for(loopback_hub), f"{repo_id}@dev", out)
    manifest = load_manifest(out)
    assert manifest.imported_at == commit
    report = verify_remote(manifest, api_for(loopback_hub), manifest_path=out)
    # Everything the import describes is on the Hub; the manifest itself is published by the first push,
    # which its absence notes.
    assert report.errors == [] and report.extra["commit"] == commit
    noted = [f for f in report.findings if f.path == out.name]
    assert [(f.kind, f.severity, f.message) for f in noted] == [
        ("missing", "info", f"not on the Hub yet: imported at {commit[:12]}; its first push publishes it")
    ]
    # Without the import's mark the same absence is drift, as for any pushed release.
    pushed = manifest.model_copy(update={"imported_at": None})
    missing = verify_remote(pushed, api_for(loopback_hub), manifest_path=out).errors
    assert [(f.kind, f.path, f.message) for f in missing] == [
        ("missing", out.name, "the manifest is not on the Hub (push publishes it)")
    ]


def test_commit_revision_keeps_main_as_the_push_branch(loopback_hub: LoopbackHub, tmp_path: Path) -> None:
    repo_id, _, commit = publish_author_folder(api_for(loopback_hub), tmp_path / "release")
    out = tmp_path / "at-commit.yaml"
    result = import_repo(api_for(loopback_hub), f"{repo_id}@{commit}", out)
    assert result.commit == commit
    assert load_manifest(out).release.revision == "main"
    assert any("is not a branch" in w for w in result.warnings)


def test_missing_repo_and_revision_are_not_found(loopback_hub: LoopbackHub, tmp_path: Path) -> None:
    repo_id, _, _ = publish_author_folder(api_for(loopback_hub), tmp_path / "release")
    with pytest.raises(NotFoundError) as missing_repo:
        import_repo(api_for(loopback_hub), "acme/does-not-exist-xyz", tmp_path / "a.yaml")
    assert str(missing_repo.value) == "acme/does-not-exist-xyz: repository not found"
    assert missing_repo.value.exit_code == 2
    with pytest.raises(NotFoundError) as missing_rev:
        import_repo(api_for(loopback_hub), f"{repo_id}@no-such-branch", tmp_path / "b.yaml")
    assert str(missing_rev.value) == f"{repo_id}: revision 'no-such-branch' not found"
    assert not (tmp_path / "a.yaml").exists() and not (tmp_path / "b.yaml").exists()


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("acme/x", ("acme/x", "main", None)),
        ("acme/x@v1.0", ("acme/x", "v1.0", None)),
        ("acme/x@refs/pr/1", ("acme/x", "refs/pr/1", None)),
        ("datasets/acme/x", ("acme/x", "main", "dataset")),
        ("hf://datasets/acme/x@v2", ("acme/x", "v2", "dataset")),
        ("hf://acme/x", ("acme/x", "main", None)),
        ("hf://spaces/acme/x", ("acme/x", "main", "space")),
        ("models/acme/x@main", ("acme/x", "main", "model")),
    ],
)
def test_parse_spec(spec: str, expected: tuple[str, str, str | None]) -> None:
    assert parse_spec(spec) == expected


@pytest.mark.parametrize("spec", ["not a repo", "acme/x@", "a/b/c", "hf://datasets/", "hf://acme/x@"])
def test_parse_spec_refuses_bad_input(spec: str) -> None:
    with pytest.raises(InputError):
        parse_spec(spec)


def test_dataset_repo(loopback_hub: LoopbackHub, tmp_path: Path) -> None:
    api = api_for(loopback_hub)
    repo_id = unique_repo("data")
    files = {
        "README.md": b"---\nlicense: cc-by-4.0\ntags:\n- chat\n---\n# Data\n",
        "data/train-00000-of-00001.parquet": b"PAR1" + bytes(range(256)) * 8 + b"PAR1",
        "data/extra.jsonl": b'{"a": 1}\n',
    }
    commit = upload_files(api, repo_id, files, repo_type="dataset")
    out = tmp_path / "data.yaml"
    result = import_repo(api, repo_id, out, repo_type="dataset")
    manifest = load_manifest(out)
    assert (result.commit, manifest.release.repo_type, manifest.release.license) == (
        commit,
        "dataset",
        "cc-by-4.0",
    )
    assert {a.path: a.role for a in manifest.artifacts} == {
        "data/extra.jsonl": "data",
        "data/train-00000-of-00001.parquet": "data",
    }
    assert "--repo-type dataset" in out.read_text(encoding="utf-8").splitlines()[0]
    assert verify_remote(manifest, api, manifest_path=out).errors == []
    # The hf CLI's forms name the type in the id: no --repo-type needed, a contradicting one refused.
    for form in (f"datasets/{repo_id}", f"hf://datasets/{repo_id}@main"):
        again = import_repo(api, form, tmp_path / "form.yaml", force=True)
        assert again.commit == commit and load_manifest(tmp_path / "form.yaml").release.repo_type == "dataset"
    with pytest.raises(InputError, match="names a dataset repo but --repo-type is model"):
        import_repo(api, f"datasets/{repo_id}", tmp_path / "x.yaml", repo_type="model")


def test_a_large_lfs_readme_is_not_downloaded(
    loopback_hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = api_for(loopback_hub)
    repo_id = unique_repo("bigcard")
    readme = b"---\nlicense: mit\n---\n\0" + b"x" * 64  # a NUL byte sends it to LFS
    upload_files(api, repo_id, {"README.md": readme, "notes.txt": b"hi\n"})
    monkeypatch.setattr(importer, "REGULAR_FETCH_LIMIT", 32)
    loopback_hub.requests.clear()
    result = import_repo(api, repo_id, tmp_path / "m.yaml")
    assert not [r.path for r in loopback_hub.requests.records if r.path.endswith("/README.md")]
    assert result.warnings == ("README.md: 86 bytes in LFS, not fetched; card metadata not imported",)
    card = load_manifest(tmp_path / "m.yaml").card
    assert card is not None and card.sha256 == hashlib.sha256(readme).hexdigest()


def test_a_repo_listing_a_dotdot_path_is_refused_and_nothing_is_written(
    loopback_hub: LoopbackHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = unique_repo()
    upload_files(api_for(loopback_hub), repo, {"config.json": b"{}"})
    real = list_files

    def hostile(*args: object, **kwargs: object) -> dict[str, RemoteFile]:
        files = real(*args, **kwargs)  # type: ignore[arg-type]
        return {**files, "../../escape.txt": RemoteFile("../../escape.txt", 3, "0" * 40, None)}

    monkeypatch.setattr(importer, "list_files", hostile)
    out = tmp_path / "imported.yaml"
    result = invoke(["import", repo, "--out", str(out), "--endpoint", loopback_hub.url])
    assert result.exit_code == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "the Hub lists the unsafe path '../../escape.txt'; nothing was written" in result.stderr
    assert list(tmp_path.iterdir()) == [] and not (tmp_path.parent / "escape.txt").exists()
