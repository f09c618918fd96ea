"""scripts/ci_lock.py: the committed hubrelease wheels rebuild byte for byte from the commit they name."""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
import sys
import time
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from tests.factories.cli import run_program

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "ci_lock.py"


def _ci_lock() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ci_lock", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _head() -> tuple[str, int]:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "show", "-s", "--format=%H %ct", "HEAD"],
        check=True,
        capture_output=True,
        text=True,
    )
    commit, epoch = done.stdout.split()
    return commit, int(epoch)


def test_two_builds_at_one_commit_are_byte_identical_and_name_the_commit(tmp_path: Path) -> None:
    ci_lock = _ci_lock()
    first = ci_lock.build_wheel("HEAD", tmp_path / "first")
    second = ci_lock.build_wheel("HEAD", tmp_path / "second")
    assert first.read_bytes() == second.read_bytes()
    commit, epoch = _head()
    assert first.name == f"hubrelease-0.1.0+g{commit[:12]}-py3-none-any.whl"
    with zipfile.ZipFile(first) as wheel:
        infos = wheel.infolist()
        metadata = wheel.read(f"hubrelease-0.1.0+g{commit[:12]}.dist-info/METADATA").decode()
    assert f"Version: 0.1.0+g{commit[:12]}\n" in metadata
    names = [info.filename for info in infos]
    assert names[-1].endswith(".dist-info/RECORD") and names[:-1] == sorted(
        names[:-1], key=lambda n: (".dist-info/" in n, n)
    )
    assert {info.date_time for info in infos} == {time.gmtime(epoch - epoch % 2)[:6]}  # zip: 2 s steps
    assert {info.external_attr >> 16 for info in infos} == {0o100644}


def _lock_repo(root: Path, wheel: Path, dependency: str, *others: Path) -> None:
    """A release repository's lock: the wheels and requirements.txt pinning them (and one dependency line)."""
    target = root / ".github" / "hubrelease"
    target.mkdir(parents=True)
    lines = ["# lock", dependency]
    for extras, built in [("[sign,bom]", wheel), *(("", other) for other in others)]:
        (target / built.name).write_bytes(built.read_bytes())
        digest = hashlib.sha256(built.read_bytes()).hexdigest()
        lines.append(f"./.github/hubrelease/{built.name}{extras} --hash=sha256:{digest}")
    (target / "requirements.txt").write_text("\n".join(lines) + "\n")


def _check(root: Path) -> subprocess.CompletedProcess[str]:
    return run_program([sys.executable, str(SCRIPT), str(root), "--check"])


@pytest.fixture(scope="module")
def head_wheels(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The client's and the loopback Hub's wheels at HEAD, built once."""
    built = tmp_path_factory.mktemp("head-wheels")
    ci_lock = _ci_lock()
    return ci_lock.build_wheel("HEAD", built), ci_lock.build_wheel("HEAD", built, "hubrelease_loopback")


def test_check_rebuilds_the_committed_wheel_and_names_what_differs(
    tmp_path: Path, head_wheels: tuple[Path, Path]
) -> None:
    wheel, _ = head_wheels
    pinned = "pyyaml==6.0.2 --hash=sha256:" + "0" * 64
    _lock_repo(tmp_path / "good", wheel, pinned)
    passed = _check(tmp_path / "good")
    assert passed.returncode == 0, passed.stderr
    assert "each wheel rebuilds byte for byte" in passed.stdout

    # The same files, archived the way a plain build does (its own clock on every entry).
    restamped_wheel = tmp_path / "restamped-build" / wheel.name
    restamped_wheel.parent.mkdir()
    with zipfile.ZipFile(wheel) as source, zipfile.ZipFile(restamped_wheel, "w") as target:
        for info in source.infolist():
            info.date_time = (2030, 1, 1, 0, 0, 0)
            target.writestr(info, source.read(info))
    _lock_repo(tmp_path / "restamped", restamped_wheel, pinned)
    restamped = _check(tmp_path / "restamped")
    assert restamped.returncode == 1
    assert f"{wheel.name} differs from its rebuild: hubrelease/__init__.py: date_time" in restamped.stderr

    _lock_repo(tmp_path / "unpinned", wheel, "pyyaml==6.0.2")
    unpinned = _check(tmp_path / "unpinned")
    assert unpinned.returncode == 1
    assert unpinned.stderr.splitlines()[0].endswith("not pinned by sha256: pyyaml==6.0.2")


def test_the_loopback_wheel_is_locked_beside_the_client_from_the_same_commit(
    tmp_path: Path, head_wheels: tuple[Path, Path]
) -> None:
    """The gate's page check needs the loopback Hub: its wheel is built, pinned and checked like the
    client's, and registers the local Hub the client loads (a wheel of another commit is refused)."""
    client, loopback = head_wheels
    commit, _ = _head()
    assert loopback.name == f"hubrelease_loopback-0.1.0+g{commit[:12]}-py3-none-any.whl"
    with zipfile.ZipFile(loopback) as wheel:
        info = f"hubrelease_loopback-0.1.0+g{commit[:12]}.dist-info"
        registered = wheel.read(f"{info}/entry_points.txt").decode()
        assert "Requires-Dist: hubrelease\n" in wheel.read(f"{info}/METADATA").decode()
        assert {n.split("/")[0] for n in wheel.namelist()} == {"hubrelease_loopback", info}
    assert "[hubrelease.local_hub]\nloopback = hubrelease_loopback.provider:PROVIDER" in registered
    pinned = "pyyaml==6.0.2 --hash=sha256:" + "0" * 64
    _lock_repo(tmp_path / "both", client, pinned, loopback)
    passed = _check(tmp_path / "both")
    assert passed.returncode == 0, passed.stderr

    older = _ci_lock().build_wheel("HEAD~1", tmp_path / "older", "hubrelease_loopback")
    _lock_repo(tmp_path / "mixed", client, pinned, older)
    mixed = _check(tmp_path / "mixed")
    assert mixed.returncode == 1
    assert mixed.stderr.splitlines() == [
        f"error: {tmp_path / 'mixed' / '.github' / 'hubrelease' / 'requirements.txt'}: the wheels are built "
        f"from different commits: {client.name}, {older.name}"
    ]
