"""The import contracts (pyproject ``[tool.importlinter]``, run by scripts/check.sh) hold on the packages
and fail on a copy of them given a deliberate upward import, a cycle inside a room, ruamel in hub/, the
loopback Hub checking cards by the client's constants, or the client importing the loopback Hub."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.factories.cli import run_program

REPO = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the packages found first on the path: ``root``'s."""
    return run_program(
        [str(LINT_IMPORTS), "--no-cache", "--config", str(REPO / "pyproject.toml")],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )


@pytest.fixture(scope="module")
def clean_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("house")
    for package in (REPO / "hubrelease", REPO / "loopback-hub" / "hubrelease_loopback"):
        shutil.copytree(package, root / package.name, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_the_package_keeps_every_contract(clean_copy: Path) -> None:
    result = _lint_imports(clean_copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "7 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "added", "broken"),
    [
        ("hubrelease/formats/gguf_header.py", "import hubrelease.cli.app", "floors"),  # ground -> top floor
        ("hubrelease/manifest/models.py", "import hubrelease.manifest.editor", "no import cycle"),
        ("hubrelease/hub/publish.py", "import ruamel.yaml", "ruamel"),
        ("hubrelease_loopback/cardcheck.py", "import hubrelease.hub_licenses", "own copy of the Hub's rules"),
        ("hubrelease/preview.py", "import hubrelease_loopback.pages", "no module of the loopback Hub"),
    ],
)
def test_a_deliberate_violation_breaks_its_contract(
    clean_copy: Path, tmp_path: Path, module: str, added: str, broken: str
) -> None:
    root = tmp_path / "house"
    shutil.copytree(clean_copy, root)
    target = root / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n{added}\n", encoding="utf-8")
    result = _lint_imports(root)
    assert result.returncode == 1, result.stdout
    assert "6 kept, 1 broken" in result.stdout
    broken_section = result.stdout.split("Broken contracts", 1)[1]
    assert broken in broken_section and Path(module).stem in broken_section  # names the importer
