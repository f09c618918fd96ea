"""The library's log records as the CLI's notice lines, and huggingface_hub's log lines redacted.

A module of its own, loaded when a command's body runs (``groups.Command.invoke``): ``logging``
costs more to import than ``--help`` may add to ``import typer``.
"""

from __future__ import annotations

import logging

from hubrelease.cli import output
from hubrelease.redaction import redact


class _Notices(logging.Handler):
    """hubrelease's library notices (``logging.getLogger("hubrelease...")``): warnings always, info
    (a rate-limit wait as it starts) only when someone watches, as progress is; in a log, each
    case stays one line (the error that ends a command after its waits counts them)."""

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            output.warn_line(record.getMessage())
        elif output.interactive():
            output.info_line(record.getMessage())


class _RedactRecord(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), ()
        return not output.quiet()


def redact_library_logs() -> None:
    """huggingface_hub logs retries to stderr itself, quoting URLs and server errors: redact them too."""
    from huggingface_hub.utils import logging as hf_logging

    for handler in hf_logging.get_logger().handlers:
        if not any(isinstance(f, _RedactRecord) for f in handler.filters):
            handler.addFilter(_RedactRecord())


def listen() -> None:
    """Route ``logging.getLogger("hubrelease...")`` records to ``_Notices`` (once per process)."""
    library_log = logging.getLogger("hubrelease")
    if not any(isinstance(handler, _Notices) for handler in library_log.handlers):
        library_log.addHandler(_Notices())
    library_log.setLevel(logging.INFO)
    library_log.propagate = False
