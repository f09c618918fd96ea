"""One redaction of Hub credentials for every line hubrelease prints, logs or writes as output.

The CLI output layer (``cli.output``) passes all text through ``redact``: error messages quote
server bodies, and a proxy or a careless server may echo the ``Authorization`` header back; an
``--endpoint`` URL may carry ``user:token@``. Redacted: Hub tokens (``hf_...``, ``api_...``),
``Bearer``/``Basic`` credentials, URL userinfo, and every token value hubrelease was configured with
(``--token``, ``HF_TOKEN``, the token file), whatever its shape.
"""

from __future__ import annotations

import os
import re

MASK = "***"
# Pattern strings, compiled (and cached by ``re``) on first use: ``--help`` imports this module
# and never calls it.
_PATTERNS = (
    # User access tokens (hf_ + 34 letters and digits; no underscore, so hf_hub_download is safe)
    # and the old api_ / api_org_ ones.
    r"\b(?:hf|api|api_org)_[A-Za-z0-9]{16,}\b",
    r"\b([Bb]earer|BEARER|Basic)(\s+)(?!\*\*\*)[A-Za-z0-9._~+/=-]{6,}",
    r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@:]*(?::[^/\s@]*)?@",  # URL userinfo
)
# What every match of each pattern contains: a pattern runs only on text that holds one of them.
# Scanning the 6.7 MB ``verify --json`` of 20,000 findings with the patterns took 1 s; this, 5 ms.
_NEEDLES = (("hf_", "api_"), ("earer", "EARER", "Basic"), ("://",))
_known: set[str] = set()
_file_read = False


def remember(value: str | None) -> None:
    """Redact ``value`` from now on (a ``--token`` given on the command line, say)."""
    if value and len(value) >= 4:
        _known.add(value)


def _configured() -> set[str]:
    """Token values from the environment (each time) and huggingface_hub's token file (once)."""
    global _file_read
    remember(os.environ.get("HF_TOKEN"))
    remember(os.environ.get("HUGGING_FACE_HUB_TOKEN"))
    if not _file_read:
        _file_read = True
        home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
        path = os.environ.get("HF_TOKEN_PATH") or os.path.join(home, "token")
        try:
            with open(path, encoding="utf-8") as handle:
                remember(handle.read().strip())
        except (OSError, UnicodeDecodeError):
            pass
    return _known


def redact(text: str) -> str:
    """``text`` with every credential replaced by ``***``."""
    for value in sorted(_configured(), key=len, reverse=True):
        text = text.replace(value, MASK)
    tokens, schemes, userinfo = (any(n in text for n in needles) for needles in _NEEDLES)
    if tokens:
        text = re.sub(_PATTERNS[0], MASK, text)
    if schemes:
        text = re.sub(_PATTERNS[1], lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
    if userinfo:
        text = re.sub(_PATTERNS[2], lambda m: f"{m.group(1)}{MASK}@", text)
    return text
