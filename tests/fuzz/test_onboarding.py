"""``.gitignore`` files, README front matter and odd file names through ``init``, ``add`` and ``render-card``.

The folder starts as tests/factories/onboarding's author folder. Bounds per case and the contract: tests/fuzz/harness.py.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.factories.onboarding import README_TEXT, write_author_folder
from tests.fuzz.harness import fuzz, run_case
from tests.fuzz.values import values

gitignore_lines = st.one_of(
    st.sampled_from(
        [
            "[z-a]",
            "[",
            "]",
            "\\",
            "!",
            "!!x",
            "**",
            "***",
            "/",
            "//",
            "a/**/b",
            "[!]",
            "[^a]",
            "\x00",
            "#x",
            "\\#",
            "*.gguf",
            "weights/",
            "!weights/",
            "[[:alpha:]]",
            "\ud800",
        ]
    ),
    st.text(max_size=10),
)


@fuzz(40)
@given(lines=st.lists(gitignore_lines, min_size=1, max_size=5), nested=st.booleans())
def test_gitignore_files(lines: list[str], nested: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_author_folder(Path(tmp) / "release", symlink=False)
        target = folder / ("gguf/.gitignore" if nested else ".gitignore")
        target.write_bytes("\n".join(lines).encode("utf-8", errors="surrogatepass"))
        run_case(["init", folder, "--repo-id", "acme/x", "--json"], folder)


FRONT_KEYS = (
    "license",
    "base_model",
    "base_model_relation",
    "pipeline_tag",
    "library_name",
    "tags",
    "datasets",
    "language",
    "model-index",
)


@fuzz(40)
@given(
    key=st.sampled_from(FRONT_KEYS),
    value=values,
    raw=st.sampled_from(
        [
            None,
            "---\n",
            "---\n[\n---\n",
            "---\na: &a [*a]\n---\n",
            "---\n- 1\n---\n",
            "\ufeff---\nlicense: mit\n---\n",
            "---\nlicense: mit\n",
        ]
    ),
    command=st.sampled_from(["init", "init --repo-type dataset", "render-card"]),
)
def test_readme_front_matter(key: str, value: object, raw: str | None, command: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_author_folder(Path(tmp) / "release", symlink=False)
        if raw is None:
            front = yaml.safe_load(README_TEXT.split("---\n")[1])
            front[key] = value
            try:
                text = "---\n" + yaml.safe_dump(front, allow_unicode=True) + "---\n# Card\n"
            except yaml.YAMLError:
                return
        else:
            text = raw + "# Card\n"
        (folder / "README.md").write_bytes(text.encode("utf-8", errors="surrogatepass"))
        if command == "render-card":
            code = run_case(["init", folder, "--repo-id", "acme/x"], folder).exit_code
            if code == 0:
                run_case(["render-card", folder / "hubrelease.yaml", "--check"], folder)
        else:
            run_case([*command.split()[:1], folder, *command.split()[1:]], folder)


names = st.one_of(
    st.sampled_from(
        [
            "-rf",
            "--json",
            " lead",
            "trail ",
            "a\nb",
            "a\rb",
            "a\\b",
            "é",
            "e\u0301",
            "\u202e.gguf",
            "CON",
            "x" * 255,
            "a:b",
            "*",
            "[z-a]",
            "#x",
            "!x",
            ".hubrelease-tmp-x.1.tmp",
            ".gitignore",
            "hubrelease.yaml",
            "README.md",
            "\udcff",
        ]
    ),
    st.text(
        st.characters(blacklist_characters="/\x00", blacklist_categories=["Cs"]), min_size=1, max_size=20
    ),
)


@fuzz(40)
@given(name=names, command=st.sampled_from(["init", "add"]))
def test_odd_file_names(name: str, command: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = write_author_folder(Path(tmp) / "release", symlink=False)
        if name == "hubrelease.yaml":
            return  # the manifest itself: init refuses to overwrite it (tests/cli covers that)
        try:
            path = Path(os.fsdecode(os.fsencode(folder)) + "/" + name)
            path.write_bytes(b"odd")
        except (OSError, UnicodeEncodeError, ValueError):
            return  # the file system refuses the name: nothing to read
        if command == "init":
            run_case(["init", folder, "--repo-id", "acme/x"], folder)
        else:
            assert run_case(["init", folder, "--repo-id", "acme/x", "--exclude", "*"], folder).exit_code == 0
            run_case(["add", folder / "hubrelease.yaml", path], folder)
