"""The path patterns of ``.gitignore`` and ``.gitattributes``, as git matches them (gitignore(5)).

What the Hub applies at preupload: ``.gitattributes`` lines with ``filter=lfs`` make a file LFS,
and ``.gitignore`` makes ``shouldIgnore`` true (huggingface_hub drops the file from the commit,
``_commit_api.py`` ``_prepare_commit_payload``). Own code, because neither huggingface_hub nor the
project's fixed packages match git patterns; the rules kept are git's: a pattern without a slash
(a trailing one aside) matches a name at any depth, one with a slash is anchored at the repo's
root; ``*`` and ``?`` stop at ``/``, ``**`` crosses it; a trailing ``/`` matches folders only; in
``.gitignore`` the last matching line wins and ``!`` re-includes, but not inside an ignored
folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern[str]
    folders_only: bool
    negated: bool


def _compile(pattern: str) -> _Pattern | None:
    negated = pattern.startswith("!")
    pattern = pattern[1:] if negated else pattern
    folders_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    if not pattern:
        return None
    anchored = "/" in pattern
    pattern = pattern.lstrip("/")
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) > 0:
            body = pattern[i + 1 : end]
            out.append("[" + ("^" + body[1:] if body[0] in "!^" else body).replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    prefix = "" if anchored else "(?:.*/)?"
    return _Pattern(re.compile(prefix + "".join(out)), folders_only, negated)


class GitIgnore:
    """The lines of a ``.gitignore``: ``ignores(path)`` as git decides it."""

    def __init__(self, text: str) -> None:
        self._patterns = [
            p
            for line in text.splitlines()
            if line.strip() and not line.startswith("#") and (p := _compile(line.strip()))
        ]

    def ignores(self, path: str) -> bool:
        """A file inside an ignored folder stays ignored: git cannot re-include it (gitignore(5))."""
        parts = path.split("/")
        return any(self._matches("/".join(parts[:n]), True) for n in range(1, len(parts))) or self._matches(
            path, False
        )

    def _matches(self, path: str, is_folder: bool) -> bool:
        ignored = False
        for pattern in self._patterns:
            if (is_folder or not pattern.folders_only) and pattern.regex.fullmatch(path):
                ignored = not pattern.negated
        return ignored


class GitAttributes:
    """The ``filter=lfs`` lines of a ``.gitattributes``: ``lfs(path)`` as git-lfs decides it."""

    def __init__(self, text: str) -> None:
        self._rules: list[tuple[_Pattern, bool]] = []
        for line in text.splitlines():
            fields = line.split()
            if not fields or fields[0].startswith("#") or fields[0].startswith("!"):
                continue
            pattern = _compile(fields[0])
            verdict = None
            for attribute in fields[1:]:
                if attribute == "filter=lfs":
                    verdict = True
                elif attribute in ("-filter", "!filter") or attribute.startswith("filter="):
                    verdict = False
            if pattern is not None and verdict is not None and not pattern.folders_only:
                self._rules.append((pattern, verdict))

    def lfs(self, path: str) -> bool:
        tracked = False
        for pattern, verdict in self._rules:
            if pattern.regex.fullmatch(path):
                tracked = verdict
        return tracked
