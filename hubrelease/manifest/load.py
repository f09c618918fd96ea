"""YAML on disk -> ``Manifest``, or a ``ManifestError`` naming file, line and field.

This is the only module that catches YAML and pydantic errors. Loading parses with libyaml
(PyYAML's C parser) and keeps its node tree, whose marks give every error its line; ruamel.yaml's
round-trip loader is used for what needs comments (``manifest.roundtrip``) and for the exact wording of
YAML syntax errors. Either way, before anything walks the data, ``_check_shape`` refuses what would
make walking it expensive or impossible: aliases that expand past ``safe_parse.MAX_NODES`` (a 3 KB
"billion laughs" file grows without bound in pydantic), nesting deeper than ``safe_parse.MAX_DEPTH``,
non-scalar keys; integers past ``safe_parse.MAX_INT_DIGITS`` are refused where they are read. The limits
are ``hubrelease.safe_parse``'s, the same for every JSON and YAML reader.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import yaml as pyyaml
from pydantic import ValidationError

if TYPE_CHECKING:
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap

from hubrelease.errors import ManifestError
from hubrelease.manifest.models import Manifest
from hubrelease.manifest.text import read_text
from hubrelease.safe_parse import (
    MAX_INT_DIGITS,
    TOO_DEEP,
    content_problem,
    digits_line,
    too_many_digits,
    yaml_shape_problem,
)
from hubrelease.validation import first_error


def _yaml() -> YAML:
    from ruamel.yaml import YAML  # the parser loads only when a manifest needs line numbers

    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    # Quoted scalars keep their quote style, so an edit (add, rm, lock) rewrites only what it changed.
    yaml.preserve_quotes = True
    return yaml


def read_tree(path: Path) -> CommentedMap:
    """Parse ``path`` into ruamel's comment-preserving tree (a dict at the top level)."""
    return parse_tree(read_text(path), path)


def parse_tree(text: str, path: Path) -> CommentedMap:
    """ruamel's tree of ``text``, once libyaml has screened it for what ruamel is slow to fail on."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    _screen(text, path)

    try:
        tree = _yaml().load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = " ".join((exc.problem or exc.context or "invalid YAML").split())
        raise ManifestError(f"invalid YAML: {problem}", path=path, line=line) from None
    except YAMLError as exc:
        raise ManifestError(f"invalid YAML: {' '.join(str(exc).split())}", path=path) from None
    except RecursionError:
        raise ManifestError(TOO_DEEP, path=path) from None
    except ValueError:  # ruamel's int() of a number past Python's digit limit
        raise ManifestError(too_many_digits(), path=path, line=digits_line(text)) from None
    if not isinstance(tree, CommentedMap):
        raise ManifestError("the manifest must be a YAML mapping", path=path, line=1)
    _check_shape(tree, path, lambda loc: line_of(tree, loc) or tree.lc.line + 1)
    return tree


def line_of(tree: Any, loc: Sequence[str | int]) -> int | None:
    """1-based line of the deepest node of ``loc`` present in the tree (None if unknown)."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq  # only trees ruamel parsed have lines

    node = tree
    line: int | None = None
    for part in loc:
        try:
            if isinstance(node, CommentedMap) and part in node:
                line = node.lc.key(part)[0] + 1
                node = node[part]
            elif isinstance(node, CommentedSeq) and isinstance(part, int) and 0 <= part < len(node):
                line = node.lc.item(part)[0] + 1
                node = node[part]
            else:
                break
        except (KeyError, IndexError, TypeError):
            break  # a node added in memory (add, lock, build --manifest) has no line yet: use its parent's
    return line


SCHEMA_COMMAND = "hubrelease schema"
"""The command that lists a manifest's keys, named by an unknown-key error."""


def _check_shape(data: dict[Any, Any], path: Path, line_for: Callable[[list[str | int]], int | None]) -> None:
    """Refuse alias bombs, deep nesting and complex keys (``safe_parse.yaml_shape_problem``), naming the
    top-level field that holds them."""
    memo: dict[int, tuple[int, int]] = {}  # id -> (values once expanded, depth)
    for key, value in data.items():
        problem = yaml_shape_problem(value, memo) if isinstance(key, str) else "keys must be plain strings"
        if problem is not None:
            field = key if isinstance(key, str) else "(top level)"
            raise ManifestError(
                problem, path=path, line=line_for([field] if isinstance(key, str) else []), field=field
            )


def _node_line(root: pyyaml.Node, loc: Sequence[str | int]) -> int | None:
    """``line_of`` for a libyaml node tree: 1-based line of the deepest node of ``loc`` present."""
    node, line = root, None
    for part in loc:
        if isinstance(node, pyyaml.MappingNode):
            match = next((v for k, v in node.value if k.value == part), None)
            key = next((k for k, _ in node.value if k.value == part), None)
            if match is None or key is None:
                break
            line, node = key.start_mark.line + 1, match
        elif isinstance(node, pyyaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _first_error(exc: ValidationError, tree: CommentedMap, path: Path) -> ManifestError:
    return first_error(
        exc, ManifestError, path, SCHEMA_COMMAND, lambda loc: line_of(tree, loc) or tree.lc.line + 1
    )


def to_plain(node: Any) -> Any:
    """ruamel nodes -> plain dict/list/scalars (pydantic then sees ordinary Python values)."""
    if isinstance(node, dict):
        return {str(k): to_plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [to_plain(v) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    if isinstance(node, float):
        return float(node)
    if isinstance(node, str):
        return str(node)
    return node


def _check_version(
    data: dict[Any, Any], path: Path, line_for: Callable[[list[str | int]], int | None]
) -> None:
    version = data.get("schema_version")
    if version is not None and version != 1:
        raise ManifestError(
            f"schema_version {version!r} is not supported by this hubrelease (expected 1)",
            path=path,
            line=line_for(["schema_version"]),
            field="schema_version",
        )


def valid_manifest(data: dict[str, Any]) -> Manifest | None:
    """The manifest of screened plain data, or None if invalid (``_load`` of its text says where)."""
    try:
        return Manifest.model_validate(data)
    except ValidationError:
        return None


def validate_tree(tree: CommentedMap, path: Path) -> Manifest:
    """Validate a parsed tree; errors carry the YAML line of the offending field."""
    _check_version(tree, path, lambda loc: line_of(tree, loc))
    _check_shape(tree, path, lambda loc: line_of(tree, loc) or tree.lc.line + 1)  # edits may add values
    try:
        return Manifest.model_validate(to_plain(tree))
    except ValidationError as exc:
        raise _first_error(exc, tree, path) from None


class _Refused(pyyaml.constructor.ConstructorError):
    """A value the fast loader refuses outright (not a syntax error ruamel should word)."""


class _FastLoader(getattr(pyyaml, "CSafeLoader", pyyaml.SafeLoader)):  # type: ignore[misc]
    """libyaml-backed loader with YAML 1.2 core-schema scalars (as ruamel reads them) and no duplicate keys.

    PyYAML resolves YAML 1.1 (``yes`` -> True, ``0777`` -> 511, ``1:20`` -> 80); these resolvers
    keep the fast path's values identical to the ruamel round-trip loader's.
    """

    yaml_implicit_resolvers: ClassVar[dict[str, list[tuple[str, re.Pattern[str]]]]] = {}

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        own = [key for key, _ in node.value if key.tag != "tag:yaml.org,2002:merge"]
        merges = len(own) != len(node.value)
        mapping = dict(super().construct_mapping(node, deep=deep))
        # Fewer keys than key nodes means two keys were equal (looked at one by one when << merges).
        if merges or len(mapping) < len(own):
            seen: set[Any] = set()
            for key_node in own:
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise pyyaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"found duplicate key {key!r}",
                        key_node.start_mark,
                    )
                seen.add(key)
        return mapping

    def construct_yaml_int(self, node: Any) -> int:
        text = str(self.construct_scalar(node))
        if len(text) > MAX_INT_DIGITS:
            raise _Refused(None, None, too_many_digits(), node.start_mark)
        for prefix, base in (("0x", 16), ("0o", 8)):
            if text.startswith(prefix):
                return int(text[2:], base)
        return int(text.replace("_", ""), 10)  # YAML 1.2: a leading zero is still decimal


_FastLoader.add_constructor("tag:yaml.org,2002:int", _FastLoader.construct_yaml_int)
for _tag, _pattern, _first in (
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", "~nN"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9][0-9_]*|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
):
    _FastLoader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))
_FastLoader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile(r"^$"), [""])  # empty value

# libyaml treats these as line breaks (YAML 1.1); ruamel does not. Such text takes the slow path.
_YAML11_BREAKS = ("\x85", "\u2028", "\u2029")


def parse_nodes(text: str, path: Path) -> tuple[pyyaml.MappingNode, dict[Any, Any]] | None:
    """libyaml's node tree and data for ``text``, or its one-line error; None where ruamel reads more.

    The marks of the nodes locate errors and, for ``manifest.editor``, the lines of each entry.

    Syntax errors are worded from libyaml too: ruamel's pure-Python parser needs ~10 s to reach an
    error near the end of a 25,000-artifact manifest.
    """
    if any(ch in text for ch in _YAML11_BREAKS):
        return None
    loader = _FastLoader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except pyyaml.MarkedYAMLError as exc:
        problem = " ".join(str(exc.problem or exc.context or "malformed").split())
        mark = exc.problem_mark or exc.context_mark
        if "invalid Unicode character escape" in problem:
            return None  # "\ud800": ruamel reads it, so the path check can say what is wrong with it
        if "unhashable key" in problem:
            problem = "complex (non-scalar) YAML keys are not allowed"
        elif "maximum nesting depth" in problem:  # libyaml's own limit, past the screen's
            problem = TOO_DEEP
        elif not isinstance(exc, _Refused):
            problem = f"invalid YAML: {problem}"
        raise ManifestError(problem, path=path, line=mark.line + 1 if mark else None) from None
    except pyyaml.YAMLError as exc:
        raise ManifestError(f"invalid YAML: {' '.join(str(exc).split())}", path=path) from None
    finally:
        loader.dispose()
    if not isinstance(root, pyyaml.MappingNode) or not isinstance(data, dict):
        raise ManifestError("the manifest must be a YAML mapping", path=path, line=1)
    _check_shape(data, path, lambda loc: _node_line(root, loc) or root.start_mark.line + 1)
    return root, data


def screen_yaml(
    text: str, path: Path, parse_slow: Callable[[str], CommentedMap]
) -> tuple[Any, Callable[[Sequence[str | int]], int | None]]:
    """Plain data of YAML ``text`` that is not a manifest, and a location -> 1-based line function.

    The manifest's screening for other YAML inputs (``build eval --spec``): syntax errors, alias
    bombs, deep nesting, complex keys, huge integers, a non-mapping top level, a NUL in a key and a
    lone surrogate anywhere are one ``ManifestError`` line; no key is checked. Texts ruamel reads differently from libyaml (YAML 1.1
    line breaks, lone surrogate escapes) go to ``parse_slow`` (ruamel, with the caller's wording),
    whose mapping is then shape-checked the same way.
    """
    parsed = parse_nodes(text, path)
    if parsed is not None:
        root, data = parsed
        located = data, lambda loc: _node_line(root, loc)
    else:
        tree = parse_slow(text)
        _check_shape(tree, path, lambda loc: line_of(tree, loc) or 1)
        located = to_plain(tree), lambda loc: line_of(tree, loc)
    problem = content_problem(located[0], strings="\\" in text)  # only an escape makes a NUL or a surrogate
    if problem is not None:
        raise ManifestError(problem, path=path)
    return located


def _screen(text: str, path: Path) -> None:
    """Refuse what ruamel is slow to fail on (an edit validates only after ruamel's parse).

    Alias bombs, deep nesting, complex keys, huge integers, and unknown top-level keys: validation
    refuses those anyway, but ruamel needs over 20 s to parse a manifest of 100,000 of them.
    """
    parsed = parse_nodes(text, path)
    if parsed is None:
        return
    root, data = parsed
    unknown = [key for key in data if key not in Manifest.model_fields]
    if unknown:
        more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
        raise ManifestError(
            f"unknown key (allowed keys are listed by `hubrelease schema`){more}",
            path=path,
            line=_node_line(root, [unknown[0]]),
            field=str(unknown[0]),
        )


@functools.lru_cache(maxsize=2)
def _load(text: str, path: Path) -> Manifest:
    """Validate libyaml's data, errors located through its node tree (ruamel only for YAML 1.1 breaks).

    The last results are kept (the manifest is frozen): a command that checks a release reads the
    same text more than once (sign's preflight renders the card, which loads the manifest from its
    path), and validating 2,008 artifacts costs ~0.2 s on two cores.
    """
    parsed = parse_nodes(text, path)
    if parsed is None:
        return validate_tree(parse_tree(text, path), path)
    root, data = parsed

    def line_for(loc: Sequence[str | int]) -> int:
        return _node_line(root, loc) or root.start_mark.line + 1

    _check_version(data, path, line_for)
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise first_error(exc, ManifestError, path, SCHEMA_COMMAND, line_for) from None


def load_manifest(path: str | Path) -> Manifest:
    """Read and validate a manifest file.

    libyaml parses it (~15x faster than ruamel on a 1,000-artifact manifest) and its node marks
    locate validation errors; only malformed YAML is parsed again by ruamel, for its wording.
    """
    manifest_path = Path(path)
    return _load(read_text(manifest_path), manifest_path)


def load_manifest_text(text: str, path: str | Path = "<string>") -> Manifest:
    """Validate manifest YAML given as text (``path`` is only used in messages)."""
    return _load(text, Path(path))


def with_release(manifest: Manifest, repo_type: str | None = None, revision: str | None = None) -> Manifest:
    """``manifest`` with ``--repo-type`` / ``--revision`` replacing its release fields, when given."""
    update = {key: value for key, value in (("repo_type", repo_type), ("revision", revision)) if value}
    if not update:
        return manifest
    return manifest.model_copy(update={"release": manifest.release.model_copy(update=update)})
