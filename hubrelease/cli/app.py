"""The typer application and the one place where errors become exit codes.

Exit codes: 0 ok, 1 check failed / drift, 2 usage or invalid input (also for click usage errors),
3 internal error (a bug: set HUBRELEASE_DEBUG=1 for the traceback), 4 the Hub could not be
reached or refused us, 130 interrupted.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import typer

from hubrelease.cli.groups import HELP_NAMES, USAGE_ERROR, Entry, LazyGroup, prepare

INTERRUPTED = 130
"""Exit code after Ctrl-C (documented in the exit-code table of docs/reference/conventions.md)."""

# Every command, in the order `--help` lists them (``LazyGroup`` says why a table).
COMMANDS: dict[str, Entry] = {
    "verify": Entry(
        "verify",
        "Verify every artifact of a release: size, then SHA-256, plus files the manifest does not list.",
    ),
    "checksums": Entry(
        "checksums",
        "Print `sha256sum -c` lines for every artifact with a pinned digest (paths relative to the release folder).",
    ),
    "schema": Entry(
        "schema",
        "Print the JSON Schema of the release manifest (or of evaluation files, or of build eval specs).",
    ),
    "render-card": Entry(
        "render_card", "Render the card from the manifest and evaluation files (same inputs, same bytes)."
    ),
    "inspect": Entry(
        "inspect",
        "Read a GGUF or safetensors header (never the tensor data) and show what the file really holds.",
    ),
    "lint": Entry(
        "lint",
        "Check a DFlash drafter for silent conversion bugs: rope base, flavour, target layers, tensor set.",
    ),
    "lock": Entry(
        "lock",
        "Resolve each pin's branch or tag to a commit and fill file sizes and sha256 (comments are kept).",
    ),
    "sign": Entry(
        "sign",
        "Sign the release: model.sig at its root, an OpenSSF Model Signing bundle over every published file.",
    ),
    "push": Entry(
        "push",
        "Publish the release as one commit guarded by the head it was planned on, then verify the Hub.",
    ),
    "pull": Entry(
        "pull", "Download what one engine loads from a release, each file checked against its pinned sha256."
    ),
    "diff": Entry(
        "diff", "Files, pins, architecture (from headers), evaluation cells, licence and signer that changed."
    ),
    "check": Entry(
        "check",
        "Check a release as a pull request proposes it, and plan its push against the published release.",
    ),
    "preview": Entry(
        "preview",
        "Show the release's page as the Hub would, from an embedded loopback Hub, and list its problems.",
    ),
    "init": Entry(
        "init", "Describe every file in DIR in a new, commented manifest that passes `verify` as written."
    ),
    "add": Entry(
        "add", "Add files to a manifest, or refresh their size, sha256 and composition after they changed."
    ),
    "rm": Entry(
        "add", "Remove artifacts or evaluation files from a manifest (the files themselves are not touched)."
    ),
    "import": Entry(
        "import_", "Describe a published repo at one commit: sizes, sha256s and card metadata from the Hub."
    ),
    "build": Entry(
        "build", "Build release artifacts: drafters, evaluation JSON, eval results, dataset cards."
    ),
    "rebuild": Entry(
        "rebuild",
        "Re-run every recipe (artifacts, evaluations, a built card) in a temporary folder and compare the bytes with the manifest: sizes, sha256 and, for evaluations, every figure.",
    ),
    "bom": Entry(
        "bom",
        "Write a CycloneDX 1.6 JSON ML-BOM: files with digests, pins, engines, hardware, evaluation results with confidence intervals (model card), recipes (formulation).",
    ),
    "hub": Entry("hub", "The loopback Hub: a local, disk-backed Hub for tests and demos."),
}


class HubReleaseGroup(LazyGroup):
    """The root group: errors become one line and an exit code; commands are built on first use.

    Help is click's plain formatter, not typer's rich panels: typer.rich_utils imports rich's
    markdown stack, 3x ``import typer`` on its own (bench/startup_bench.py).
    """

    table = COMMANDS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        prepare(self)

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Usage errors as one ``error:`` line and exit 2 (typer would draw a multi-line box).

        click is run with ``standalone_mode=False`` so its exceptions reach us; the exit codes are
        click's own (2 for usage, 1 for other click errors), Ctrl-C outside a command is 130.
        typer exports the base of click's exceptions (``typer.TyperException``), not each class:
        a usage error is the one that carries the context it happened in.
        """
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except typer.TyperException as exc:
            ctx = getattr(exc, "ctx", None)
            message = exc.format_message()
            if exc.exit_code == USAGE_ERROR:
                hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
                message = f"{message.replace('Value error, ', '')}{hint}"
            _error_line(message)
            code = exc.exit_code
        except (typer.Abort, KeyboardInterrupt):
            _error_line("interrupted")
            code = INTERRUPTED
        if not standalone_mode:
            return code
        sys.exit(code if isinstance(code, int) else 0)

    def invoke(self, ctx: Any) -> Any:
        """Errors become one line and their exit code, with ``HUBRELEASE_DEBUG`` set as without it
        (the traceback then comes first: ``debug_traceback``).

        ``hubrelease COMMAND --help`` passes through here too, so ``output`` and ``errors`` are
        imported only once an error is to be shown.
        """
        output = sys.modules.get("hubrelease.cli.output")
        if output is not None:
            output.set_quiet(False)  # per command: -q of an earlier in-process run must not carry over
        try:
            return super().invoke(ctx)
        except (typer.TyperException, typer.Exit, typer.Abort):
            raise
        except KeyboardInterrupt:
            _error_line("interrupted")
            raise typer.Exit(INTERRUPTED) from None
        except Exception as exc:
            raise typer.Exit(_report(exc)) from None
        finally:
            _end_hub_state()

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """Each command with the first paragraph of its help, in full (wrapped, not cut off)."""
        rows = [(name, entry.summary) for name, entry in self.table.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


app = typer.Typer(
    cls=HubReleaseGroup,
    name="hubrelease",
    help="Publish ML model releases to the Hugging Face Hub with integrity you can check.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": HELP_NAMES},
)


def _version(value: bool) -> None:
    if value:
        from hubrelease import __version__
        from hubrelease.cli import output

        output.stdout.print(f"hubrelease {__version__}", markup=False)
        raise typer.Exit(0)


@app.callback()
def _options(
    version: bool = typer.Option(
        False, "--version", help="Print the version and exit.", callback=_version, is_eager=True
    ),
) -> None:
    """Publish ML model releases to the Hugging Face Hub with integrity you can check.

    The commands are not registered here: ``HubReleaseGroup`` builds each on first use.
    """


def _error_line(message: str) -> None:
    """``output.error_line``, importing ``output`` only when there is an error to show."""
    from hubrelease.cli import output

    output.error_line(message)


def _report(exc: Exception) -> int:
    """One ``error:`` line per line of ``exc`` (after the traceback, when debugging); its exit code."""
    from hubrelease.cli import output
    from hubrelease.errors import HubReleaseError

    debug_traceback(exc)
    if isinstance(exc, HubReleaseError):
        for line in exc.lines():
            output.error_line(line)
        return exc.exit_code
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        output.error_line(f"{where}{exc.strerror or exc}")
        return 2
    output.error_line(f"internal error: {type(exc).__name__}: {exc} (set HUBRELEASE_DEBUG=1 for a traceback)")
    return 3


def debug_traceback(exc: BaseException) -> None:
    """With ``HUBRELEASE_DEBUG`` set: the whole exception chain on stderr, through the one redaction.

    Users paste this into bug reports and a server may have echoed the ``Authorization`` header
    into an error message, so it goes through ``output`` (``redaction.redact``) like every other line.
    Every link is shown, also those a ``raise ... from None`` hid from Python's own traceback (the
    huggingface_hub error behind a one-line ``HubError``); frames' local variables never are.
    """
    if not os.environ.get("HUBRELEASE_DEBUG"):
        return
    import traceback

    from hubrelease.cli import output

    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and all(current is not seen for seen in chain):
        chain.append(current)
        current = current.__cause__ or current.__context__
    parts = [
        "".join(traceback.format_exception(type(link), link, link.__traceback__, chain=False))
        for link in reversed(chain)
    ]
    output.debug_text("\nThe above exception led to the next one:\n\n".join(parts))


def _end_hub_state() -> None:
    """Stop this command's embedded Hubs and the bounds of its remote reads.

    Commands that never reached the Hub never imported these modules: they pay no import for this.
    """
    client = sys.modules.get("hubrelease.hub.client")
    if client is not None:
        client.stop_embedded()
    bounds = sys.modules.get("hubrelease.hub.bounds")
    if bounds is not None:
        bounds.stop()


def main() -> None:
    """Console-script entry point.

    After Ctrl-C (exit 130) the process ends at once: the interrupted writes have already removed
    their temp files on the way out, and waiting for interpreter shutdown would join worker
    threads still inside a library call (an upload chunk, a download), for seconds or minutes.
    """
    try:
        app()
    except SystemExit as exc:
        if exc.code == INTERRUPTED:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(INTERRUPTED)
        raise
