"""Manifests, beyond test_manifests.py's top-level fields: any value in nested fields (artifact
entries, card, pins, evaluations, root), YAML escapes that decode to NUL, lone surrogates, control
and bidi characters in every path field, and a 5,000-artifact manifest.
Bounds per case and the contract: tests/fuzz/harness.py.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.factories.releases import write_release
from tests.fuzz.harness import fuzz, run_case
from tests.fuzz.values import set_path, values

COMMANDS = (
    ["verify", "{m}"],
    ["checksums", "{m}"],
    ["render-card", "{m}", "--check"],
    ["push", "{m}", "--dry-run", "--endpoint", "local"],
)
FILES = {"model.safetensors": b"\x00" * 64, "notes.md": b"# notes\n"}

FIELDS = (
    ("release", "repo_type"),
    ("release", "revision"),
    ("artifacts", 0),
    ("artifacts", 0, "path"),
    ("artifacts", 0, "size"),
    ("artifacts", 0, "sha256"),
    ("artifacts", 0, "role"),
    ("artifacts", 0, "composition"),
    ("evaluations",),
    ("card", "template"),
    ("card", "output"),
    ("card", "variables"),
    ("pins", "targets"),
    ("root",),
    ("imported_at",),
    ("unknown_key",),
)


def _release(root: Path) -> tuple[Path, dict[str, Any]]:
    manifest = write_release(root, FILES)
    return manifest, yaml.safe_load(manifest.read_text(encoding="utf-8"))


def _every_command(manifest: Path) -> None:
    for args in COMMANDS:
        run_case([a.format(m=manifest) for a in args], manifest.parent)


@fuzz(30)
@given(field=st.sampled_from(FIELDS), value=values, as_json=st.booleans())
def test_a_field_of_any_type(field: tuple[str | int, ...], value: Any, as_json: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        manifest, data = _release(Path(tmp))
        set_path(data, field, value)
        if as_json:  # JSON is YAML: huge ints and NaN survive as literals
            text = json.dumps(data, allow_nan=True)
        else:
            text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
        manifest.write_bytes(text.encode("utf-8", errors="surrogatepass"))  # a raw surrogate: invalid UTF-8
        _every_command(manifest)


hostile_paths = st.one_of(
    st.sampled_from(['"a\\0b"', '"\\ud800"', '"\\udfff.bin"', '"\\x00"', '"a\\nb"', '"\\r"', '"\\u202e"']),
    st.text(min_size=1, max_size=12).map(json.dumps),
)


@fuzz(20)
@given(path=hostile_paths, where=st.sampled_from(["artifact", "evaluation", "ignore", "card"]))
def test_hostile_escapes_in_paths(path: str, where: str) -> None:
    """Double-quoted YAML escapes reach the models as NUL, lone surrogates, control and bidi characters."""
    with tempfile.TemporaryDirectory() as tmp:
        manifest, _ = _release(Path(tmp))
        text = manifest.read_text(encoding="utf-8")
        if where == "artifact":
            text = text.replace("path: notes.md", f"path: {path}", 1)
        elif where == "evaluation":
            text += f"evaluations:\n- {path}\n"
        elif where == "ignore":
            text += f"ignore:\n- {path}\n"
        else:
            text += f"card:\n  output: {path}\n"
        manifest.write_text(text, encoding="utf-8")
        _every_command(manifest)


@fuzz(3)
@given(count=st.sampled_from([0, 1, 5_000]))
def test_many_artifacts_all_missing(count: int) -> None:
    """A large manifest is read in bounded time and memory: every file is missing (exit 1), none is hashed.

    --json: the human table of 20,000 findings takes rich ~14 s on its own.
    """
    with tempfile.TemporaryDirectory() as tmp:
        manifest, data = _release(Path(tmp))
        data["artifacts"] += [
            {"path": f"shard-{i:06d}.bin", "size": i, "sha256": f"{i:064x}"} for i in range(count)
        ]
        manifest.write_text(json.dumps(data), encoding="utf-8")
        outcome = run_case(["verify", manifest, "--json"], manifest.parent)
        assert outcome.exit_code == (1 if count else 0), outcome.stderr
