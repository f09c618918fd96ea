"""Manifests: mutations of a valid one, generated values in every field, aliases and bombs, depth,
size, types, encodings, NUL and lone surrogates; through every command that loads a manifest."""

from __future__ import annotations

import tempfile
from pathlib import Path

import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.factories.releases import write_release
from tests.fuzz.harness import fuzz, run_case

FILES = {"model.safetensors": b"\0" * 64, "config.json": b"{}\n"}
FIELDS = [
    "schema_version",
    "release",
    "release.repo_id",
    "release.license",
    "artifacts",
    "card",
    "pins",
    "ignore",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(
        ["model.safetensors", "../escape", "/abs", "a\x00b", ".hubrelease/x", "", "~", "0777", "yes"]
    ),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _set(document: dict[str, object], dotted: str, value: object) -> None:
    *parents, last = dotted.split(".")
    node: object = document
    for part in parents:
        node = node.setdefault(part, {}) if isinstance(node, dict) else node
    if isinstance(node, dict):
        node[last] = value


def _bomb(levels: int, fan_out: int) -> str:
    lines = [f"  l0: &l0 [{', '.join(['x'] * fan_out)}]"]
    lines += [f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * fan_out)}]" for i in range(1, levels)]
    return "card:\n" + "\n".join(lines) + "\n"


hostile = st.one_of(
    st.builds(_bomb, st.integers(2, 12), st.integers(2, 12)),
    st.builds(lambda d: "card:\n  variables:\n    x: " + "[" * d + "]" * d + "\n", st.integers(10, 3000)),
    st.builds(
        lambda d: "card:\n" + "".join("  " * (i + 1) + f"k{i}:\n" for i in range(d)), st.integers(10, 400)
    ),
    st.builds(lambda n: f"extra: {'7' * n}\n", st.integers(4000, 9000)),
    st.builds(lambda n: "".join(f"k{i}: {i}\n" for i in range(n)), st.integers(1, 3000)),
    st.just("? [a, b]\n: 1\n"),
    st.just("card:\n  variables:\n    ? {a: 1}\n    : 1\n"),
    st.just("card:\n  variables: &x\n    self: *x\n"),
    st.just('card:\n  variables:\n    x: "\\ud800"\n'),
    st.just('artifacts:\n  - path: "a\\0b"\n    size: 1\n'),
    st.just("!!python/object/apply:os.system ['true']\n"),
    st.just("%YAML 1.1\n---\na: b\n"),
)

ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "latin-1", "utf-32"]


@st.composite
def manifest_bytes(draw: st.DrawFn, good: str) -> bytes:
    kind = draw(st.sampled_from(["field", "hostile", "mutate", "encode"]))
    text = good
    if kind == "field":
        document = yaml.safe_load(good)
        _set(document, draw(st.sampled_from(FIELDS)), draw(values))
        text = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    elif kind == "hostile":
        text = good + draw(hostile)
    elif kind == "mutate":
        lines = good.splitlines(keepends=True)
        at = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "insert", "indent"]))
        if action == "delete":
            del lines[at]
        elif action == "duplicate":
            lines.insert(at, lines[at])
        elif action == "insert":
            lines.insert(at, draw(st.text(max_size=30)) + "\n")
        else:
            lines[at] = " " * draw(st.integers(1, 5)) + lines[at]
        text = "".join(lines)
    data = text.encode(draw(st.sampled_from(ENCODINGS)) if kind == "encode" else "utf-8", "surrogatepass")
    if kind == "encode" and draw(st.booleans()):
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    return data


COMMANDS = [
    ["verify", "{m}"],
    ["checksums", "{m}"],
    ["render-card", "{m}", "--check"],
    ["rm", "{m}", "config.json"],
    ["add", "{m}", "{root}/config.json"],
    ["push", "{m}", "--dry-run", "--endpoint", "local"],
]


@fuzz(120)
@given(data=st.data())
def test_any_manifest_ends_in_0_1_or_2_with_one_line(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        manifest = write_release(root, FILES)
        manifest.write_bytes(data.draw(manifest_bytes(manifest.read_text())))
        command = data.draw(st.sampled_from(COMMANDS))
        run_case([a.format(m=manifest, root=root) for a in command], root)


def test_a_100k_key_manifest_is_refused_in_every_command() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        manifest = write_release(root, FILES)
        manifest.write_text(manifest.read_text() + "".join(f"k{i}: {i}\n" for i in range(100_000)))
        for command in COMMANDS[:4]:
            result = run_case([a.format(m=manifest, root=root) for a in command], root)
            assert result.exit_code == 2
