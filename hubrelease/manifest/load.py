"""YAML on disk -> ``Manifest``, or a ``ManifestError`` naming file, line and field.

This is the only module that catches YAML and pydantic errors. ruamel.yaml's round-trip loader
is used (rather than PyYAML) because it keeps each key's line number, which lets every error point
at the offending line, and because ``manifest.write`` needs the same tree to keep comments.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import yaml as pyyaml
from pydantic import ValidationError
from ruamel.yaml.comments import CommentedMap, CommentedSeq

if TYPE_CHECKING:
    from ruamel.yaml import YAML

from hubrelease.errors import InputError, ManifestError
from hubrelease.manifest.models import LocatedError, Manifest


def _yaml() -> YAML:
    from ruamel.yaml import YAML  # the parser loads only when a manifest needs line numbers

    yaml = YAML(typ="rt")
    yaml.allow_duplicate_keys = False
    # Quoted scalars keep their quote style, so an edit (add, rm, lock) rewrites only what it changed.
    yaml.preserve_quotes = True
    return yaml


def read_tree(path: Path) -> CommentedMap:
    """Parse ``path`` into ruamel's comment-preserving tree (a dict at the top level)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("manifest not found", path=path) from None
    except IsADirectoryError:
        raise InputError("is a folder, expected a manifest file", path=path) from None
    except UnicodeDecodeError:
        raise ManifestError("not UTF-8 text", path=path) from None
    return parse_tree(text, path)


def parse_tree(text: str, path: Path) -> CommentedMap:
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    try:
        tree = _yaml().load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        raise ManifestError(f"invalid YAML: {problem}", path=path, line=line) from None
    except YAMLError as exc:
        raise ManifestError(f"invalid YAML: {exc}", path=path) from None
    if not isinstance(tree, CommentedMap):
        raise ManifestError("the manifest must be a YAML mapping", path=path, line=1)
    return tree


def line_of(tree: Any, loc: Sequence[str | int]) -> int | None:
    """1-based line of the deepest node of ``loc`` present in the tree (None if unknown)."""
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


def format_loc(loc: Sequence[str | int]) -> str:
    """``("artifacts", 2, "sha256")`` -> ``artifacts[2].sha256``."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "(top level)"


def _first_error(exc: ValidationError, tree: CommentedMap, path: Path) -> ManifestError:
    error = exc.errors(include_url=False)[0]
    loc = list(error["loc"])
    cause = (error.get("ctx") or {}).get("error")
    if isinstance(cause, LocatedError):
        loc.extend(cause.loc)
        message = str(cause)
    else:
        message = error["msg"].removeprefix("Value error, ")
    # pydantic puts a union member's or literal's name in loc; drop parts that are not in the YAML.
    clean = [p for p in loc if isinstance(p, int) or not str(p).startswith(("function-", "str", "int"))]
    if error["type"] == "extra_forbidden":
        message = "unknown key (allowed keys are listed by `hubrelease schema`)"
    elif error["type"] == "missing":
        message = "required field is missing"
    elif error["type"] == "literal_error":
        message = f"{message}, got {error.get('input')!r}"
    count = exc.error_count()
    if count > 1:
        message += f" (and {count - 1} more error{'s' if count > 2 else ''})"
    line = line_of(tree, clean) or tree.lc.line + 1  # a key missing at the top: where the mapping starts
    return ManifestError(message, path=path, line=line, field=format_loc(clean))


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


def validate_tree(tree: CommentedMap, path: Path) -> Manifest:
    """Validate a parsed tree; errors carry the YAML line of the offending field."""
    version = tree.get("schema_version")
    if version is not None and version != 1:
        raise ManifestError(
            f"schema_version {version!r} is not supported by this hubrelease (expected 1)",
            path=path,
            line=line_of(tree, ["schema_version"]),
            field="schema_version",
        )
    try:
        return Manifest.model_validate(to_plain(tree))
    except ValidationError as exc:
        raise _first_error(exc, tree, path) from None


class _FastLoader(getattr(pyyaml, "CSafeLoader", pyyaml.SafeLoader)):  # type: ignore[misc]
    """libyaml-backed loader with YAML 1.2 core-schema scalars (as ruamel reads them) and no duplicate keys.

    PyYAML resolves YAML 1.1 (``yes`` -> True, ``0777`` -> 511, ``1:20`` -> 80); these resolvers
    keep the fast path's values identical to the ruamel round-trip loader's.
    """

    yaml_implicit_resolvers: ClassVar[dict[str, list[tuple[str, re.Pattern[str]]]]] = {}

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        keys = [self.construct_object(k, deep=deep) for k, _ in node.value]
        if len(set(keys)) != len(keys):
            raise pyyaml.YAMLError("duplicate key")
        return dict(super().construct_mapping(node, deep=deep))

    def construct_yaml_int(self, node: Any) -> int:
        text = str(self.construct_scalar(node))
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


def load_manifest(path: str | Path) -> Manifest:
    """Read and validate a manifest file.

    The common case (a valid manifest) is parsed with libyaml, ~15x faster than ruamel on a
    1,000-artifact manifest; any problem re-parses with ruamel to report the exact line.
    """
    manifest_path = Path(path)
    try:
        text = manifest_path.read_text(encoding="utf-8")
        if not any(ch in text for ch in _YAML11_BREAKS):
            data = pyyaml.load(text, Loader=_FastLoader)
            if isinstance(data, dict) and data.get("schema_version") == 1:
                return Manifest.model_validate(data)
    except (OSError, UnicodeDecodeError, pyyaml.YAMLError, ValidationError):
        pass
    return validate_tree(read_tree(manifest_path), manifest_path)


def load_manifest_text(text: str, path: str | Path = "<string>") -> Manifest:
    """Validate manifest YAML given as text (``path`` is only used in messages)."""
    manifest_path = Path(path)
    return validate_tree(parse_tree(text, manifest_path), manifest_path)
