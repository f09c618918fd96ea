"""The documentation cannot drift from the code: its shell blocks run, its command reference is a fresh
generation, and the site builds with ``mkdocs build --strict``.

A page's ```bash blocks run in order in one bash shell (``set -euo pipefail``), in an empty folder
where ``manifests/`` is the checkout's, with the virtualenv's ``hubrelease`` first on ``PATH`` and
``--endpoint local`` served from a loopback Hub in the test's own folder; a page marked
``<!-- docs-test: in the example release -->`` runs inside a copy of ``manifests/example/`` instead
(``manifests/example-target/`` beside it, as the recipes expect); a page marked
``<!-- docs-test: with the example published -->`` starts with the example's target and the example
release already pushed to its ``--endpoint local`` (one push for the whole module, copied per page),
and one marked ``<!-- docs-test: with measured runs -->`` with the stand-in raw runs and dataset of
``tests/factories/docs_inputs.py`` in its folder. Every block of the site runs; the front pages'
blocks (README.md, CONTRIBUTING.md) show commands over placeholder repos or folders: they are not
run, but each ``hubrelease`` line in them must name a real command and only options that command has.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import typer

from hubrelease.cli.app import app
from tests.factories.cli import run_program
from tests.factories.docs_inputs import MEASURED_MARK, write_measured_runs
from tests.factories.published import publish_example_locally

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
IN_EXAMPLE = "<!-- docs-test: in the example release -->"
PUBLISHED = "<!-- docs-test: with the example published -->"
FRONT = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
"""Pages outside the site: their blocks are synopses over placeholders, checked against the command tree."""
BLOCK = re.compile(r"^(?P<mark><!-- docs-test: [a-z]+ -->\n)?```bash\n(?P<body>.*?)^```$", re.S | re.M)


def _blocks(page: Path) -> list[tuple[bool, str]]:
    """``(is a synopsis, text)`` of every ```bash block of ``page``, in order: the front pages' are."""
    found = []
    for match in BLOCK.finditer(page.read_text(encoding="utf-8")):
        assert not match["mark"], f"{page}: {match['mark'].strip()}: no mark keeps a block from running"
        found.append((page in FRONT, match["body"]))
    return found


PAGES = sorted(p for p in [*FRONT, *DOCS.rglob("*.md")] if _blocks(p))
RUN = [p for p in PAGES if any(not synopsis for synopsis, _ in _blocks(p))]


def _name(page: Path) -> str:
    return str(page.relative_to(ROOT))


def _commands(block: str) -> list[list[str]]:
    """The ``hubrelease`` command lines of a block: continuations joined, comments dropped."""
    found = []
    for line in block.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
        if words[:1] == ["hubrelease"]:  # up to the first redirection, pipe or list operator
            ends = [i for i, word in enumerate(words) if set(word) <= set("<>|&;")]
            found.append(words[: min(ends, default=len(words))])
    return found


def _options(words: list[str]) -> tuple[str, set[str], list[str]]:
    """The command path ``words`` names, the option names it has, and the options ``words`` uses."""
    command: Any = typer.main.get_command(app)
    ctx = command.make_context("hubrelease", [], resilient_parsing=True)
    path = ["hubrelease"]
    rest = words[1:]
    while (
        hasattr(command, "get_command") and rest and (child := command.get_command(ctx, rest[0])) is not None
    ):
        path.append(rest.pop(0))
        command = child
        ctx = command.make_context(path[-1], [], parent=ctx, resilient_parsing=True)
    names = {name for param in command.params for name in (*param.opts, *param.secondary_opts)}
    used = [word.split("=", 1)[0] for word in rest if word.startswith("-") and word != "-"]
    return " ".join(path), names, used


@pytest.fixture(scope="module")
def published_hub(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return publish_example_locally(tmp_path_factory.mktemp("published"))


@pytest.mark.parametrize("page", RUN, ids=_name)
def test_page_shell_blocks_run(page: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    script = "set -euo pipefail\n" + "\n".join(body for synopsis, body in _blocks(page) if not synopsis)
    work = tmp_path / "work"
    work.mkdir()
    (work / "manifests").symlink_to(ROOT / "manifests")
    text = page.read_text(encoding="utf-8")
    if PUBLISHED in text:
        shutil.copytree(request.getfixturevalue("published_hub"), tmp_path / "local-hub")
    if MEASURED_MARK in text:
        write_measured_runs(work)
    if IN_EXAMPLE in text:
        for name in ("example", "example-target"):
            shutil.copytree(ROOT / "manifests" / name, work / name)
        work = work / "example"
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HUBRELEASE_LOCAL_HUB": str(tmp_path / "local-hub"),
        "HF_HOME": str(tmp_path / "hf-home"),
        "HOME": str(tmp_path / "home"),
    }
    env.pop("HF_ENDPOINT", None)
    done = run_program(["bash", "-c", script], cwd=work, env=env)
    assert done.returncode == 0, (
        f"{_name(page)}: exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    )
    assert "error:" not in done.stderr


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_synopsis_blocks_name_real_commands_and_options(page: Path) -> None:
    synopses = [body for synopsis, body in _blocks(page) if synopsis]
    for words in (words for body in synopses for words in _commands(body)):
        path, names, used = _options(words)
        assert len(path.split()) > 1, f"{_name(page)}: {shlex.join(words)}: no such command"
        assert [u for u in used if u not in names] == [], f"{_name(page)}: {path} has no such option"


def test_every_block_of_the_site_runs() -> None:
    blocks = [synopsis for page in PAGES if DOCS in page.parents for synopsis, _ in _blocks(page)]
    assert len(blocks) > 40 and not any(blocks)


INDENTED = re.compile(r"^(?P<indent> +)```bash\n(?P<body>.*?)^(?P=indent)```$", re.S | re.M)


def test_indented_blocks_are_the_lock_commands_the_rehearsal_runs() -> None:
    """Blocks inside list items are not run by this suite: they write and check the CI lock, which
    downloads wheels from the package index. The rehearsal tier (scripts/ci_recipe.py) runs the same
    two commands, so each must stay one of them."""
    lines = [
        line
        for page in DOCS.rglob("*.md")
        for match in INDENTED.finditer(page.read_text(encoding="utf-8"))
        for line in textwrap.dedent(match["body"]).splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    lock = [shlex.split(line) for line in lines if "scripts/ci_lock.py" in line]
    assert [words[3:] for words in lock] == [[], ["--check"]], lock
    assert all(line.startswith("git -C ") for line in lines if "scripts/ci_lock.py" not in line), lines
    recipe = (ROOT / "scripts" / "ci_recipe.py").read_text(encoding="utf-8")
    assert "[sys.executable, str(lock), str(repo)]" in recipe
    assert '[sys.executable, str(lock), str(repo), "--check"]' in recipe


def _gen_reference() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "scripts" / "gen_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_command_reference_is_a_fresh_generation() -> None:
    wanted = _gen_reference().pages()
    committed = {
        str(p.relative_to(DOCS / "reference")): p.read_text(encoding="utf-8")
        for p in [DOCS / "reference" / "commands.md", *(DOCS / "reference" / "commands").glob("*.md")]
    }
    assert committed == wanted


def test_every_command_and_option_is_in_the_reference() -> None:
    text = "".join(_gen_reference().pages().values())
    root: Any = typer.main.get_command(app)
    ctx = root.make_context("hubrelease", [], resilient_parsing=True)
    for name in root.list_commands(ctx):
        command = root.get_command(ctx, name)
        assert f"hubrelease {name}" in text
        for param in command.params:
            for opt in param.opts:
                if opt.startswith("--"):
                    assert opt in text, f"{name} {opt}"


def test_no_tracker_numbers_or_machine_paths_in_the_docs_or_the_code() -> None:
    code = [p for folder in ("hubrelease", "templates", "tests", "scripts", "bench", "conformance")
            for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".j2", ".md", ".sh")]  # fmt: skip
    pages = [*FRONT, *DOCS.rglob("*.md"), *(p for p in code if p.name != "test_docs.py")]
    hits = [
        f"{p.relative_to(ROOT)}: {m.group(0)}"
        for p in pages
        for m in re.finditer(r"[Ii]ssue [0-9]+|/work/|/root/|/home/[a-z]", p.read_text(encoding="utf-8"))
    ]
    assert hits == []


def test_the_readme_is_a_front_page() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 250


def test_the_site_builds_strict(tmp_path: Path) -> None:
    done = run_program(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-q",
            "-f",
            str(ROOT / "mkdocs.yml"),
            "-d",
            str(tmp_path / "site"),
        ],
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # mkdocs-material's banner about a future MkDocs
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "tutorials" / "example" / "index.html").is_file()
