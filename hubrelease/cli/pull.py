"""`hubrelease pull`: the files one engine loads from a published release, checked as pinned and paired."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from hubrelease.cli import output
from hubrelease.cli.options import EndpointOpt, JsonOpt, QuietOpt, TokenOpt, hub_session

if TYPE_CHECKING:
    from hubrelease.pull.moved import MovedReport
    from hubrelease.pull.release import PullReport

EXAMPLES = """
Examples:

  hubrelease pull acme/drafter@v1.0 --engine sglang --target Qwen/Qwen3-8B   # into the hf cache

  hubrelease pull acme/drafter --engine llama.cpp --target ./qwen3-8b-f16.gguf --dir drafter/

  hubrelease pull acme/drafter@v1.0 --engine sglang --exec                     # then run the command

  hubrelease pull acme/drafter@3f1c...e9 --check --target Qwen/Qwen3-8B        # did my pin move?

Exit codes: 0 pulled (--check: the pin is still the branch's head), 1 a file is not the pinned bytes,
the signature does not verify, or the target does not pair (--check: the release moved), 2 invalid
input (no such engine files, a target that cannot be read), 4 the Hub could not be reached.
"""

Engine = Literal["sglang", "vllm", "llama.cpp", "ik"]
"""``pull.select.EngineName``, spelled here so that ``--help`` imports no format readers."""


def pull(
    ref: Annotated[
        str, typer.Argument(help="REPO[@REVISION]: a branch or tag is resolved once to its commit.")
    ],
    engine: Annotated[
        Engine | None,
        typer.Option(
            "--engine", help="sglang | vllm | llama.cpp | ik (default: the release's first command's)."
        ),
    ] = None,
    target: Annotated[
        str | None,
        typer.Option(
            "--target",
            help="Your target: a folder with config.json, a GGUF, or REPO[@REV]; checked against the pin first.",
        ),
    ] = None,
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="Put the files here at their repo paths (default: the hf cache).",
            show_default=False,
        ),
    ] = None,
    cache_dir: Annotated[
        Path | None,
        typer.Option("--cache-dir", help="The hf cache to fill (default: HF_HUB_CACHE).", show_default=False),
    ] = None,
    *,
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="REPO@COMMIT you pinned: has the release's branch moved? Downloads nothing."
        ),
    ] = False,
    run: Annotated[bool, typer.Option("--exec", help="Run the engine command after the pull.")] = False,
    public_key: Annotated[
        Path | None,
        typer.Option("--public-key", help="The signer's EC public key (PEM), from the publisher."),
    ] = None,
    json_mode: JsonOpt = False,
    endpoint: EndpointOpt = None,
    token: TokenOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Download what one engine loads from a release, each file checked against its pinned sha256."""
    from hubrelease.errors import InputError
    from hubrelease.pull.moved import MovedReport
    from hubrelease.pull.resolve import parse_ref
    from hubrelease.pull.run import PullOptions
    from hubrelease.pull.run import pull as pull_release

    parsed = parse_ref(ref)
    if check and (directory is not None or cache_dir is not None or run):
        raise InputError("--check downloads nothing: --dir, --cache-dir and --exec do not apply")
    # A pull's downloads are multi-GB files: the read bounds' 900 s deadline and 257 MiB body cap
    # (hub.bounds) would end them, so they run unbounded, as push's uploads do; each file is bounded
    # by its pinned size instead (pull.fetch). --check reads only metadata and configs: bounded.
    api = hub_session(endpoint, token, quiet, writes=not check)
    signer = None
    if public_key is not None:
        from hubrelease.signing.verifiers import SignaturePolicy

        signer = SignaturePolicy(public_key=public_key, anchor="--public-key")
    options = PullOptions(
        engine=engine, target=target, directory=directory, cache_dir=cache_dir, signer=signer, check=check
    )
    report = pull_release(api, parsed, options)
    if isinstance(report, MovedReport):
        _render_moved(report, json_mode)
        raise typer.Exit(1 if report.moved else 0)
    _render(report, json_mode)
    if run:
        raise typer.Exit(_run(report))


def _render(report: PullReport, json_mode: bool) -> None:
    if json_mode:
        output.emit_document("pull", **report.to_dict())
        return
    output.info_line(f"{report.repo_id}@{report.revision} is commit {report.commit}")
    if report.pairing is not None:
        output.info_line(f"target {report.pairing.target}: pairs ({len(report.pairing.checks)} checks)")
    else:
        output.info_line("no --target: the pairing with your target was not checked")
    signature = report.signature
    output.info_line(
        "signature: verified" if signature.get("ok") else f"signature: not checked ({signature.get('why')})"
    )
    output.print_rows(
        ["file", "size", "sha256", "status"],
        [
            [f.path, str(f.size), f.sha256[:16], "fetched" if f.fetched else "already there"]
            for f in report.files
        ],
        right=(1,),
        what="files",
    )
    for command in report.commands:
        output.info_line(f"# {command.pinned_engine} at commit {command.engine_commit}")
        output.value_line(command.text.replace(" \\\n  ", " "))
    if not report.commands:
        output.info_line(f"the release records no {report.engine} command (card.usage)")


def _run(report: PullReport) -> int:
    import shutil
    import subprocess

    from hubrelease.errors import InputError

    if len(report.commands) != 1:
        raise InputError(
            f"--exec: the release records {len(report.commands)} {report.engine} commands, not one"
        )
    argv = report.commands[0].argv
    if shutil.which(argv[0]) is None:
        raise InputError(f"--exec: {argv[0]!r} is not on PATH")
    return subprocess.run(argv, check=False).returncode


def _render_moved(moved: MovedReport, json_mode: bool) -> None:
    if json_mode:
        output.emit_document("pull", **moved.to_dict())
        return
    if not moved.moved:
        output.value_line(f"{moved.repo_id}@{moved.branch} is still {moved.pinned}")
        return
    output.value_line(f"{moved.repo_id}@{moved.branch} moved: {moved.pinned} -> {moved.head}")
    output.print_rows(
        ["change", "file", "detail"], [[c.change, c.path, c.detail] for c in moved.files], what="files"
    )
    if moved.pairing is not None:
        verdict = "still pairs" if moved.pairing.ok else "; ".join(moved.pairing.mismatches())
        output.value_line(f"target {moved.pairing.target}: {verdict}")


def register(app: typer.Typer) -> None:
    app.command("pull", epilog=EXAMPLES)(pull)
