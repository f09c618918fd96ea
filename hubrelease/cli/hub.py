"""`hubrelease hub serve`: run the loopback Hub in the foreground."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from hubrelease.cli import output
from hubrelease.cli.groups import CommandApp, CommandGroup

EXAMPLES = """
Examples:

  hubrelease hub serve --root ./hub-data --port 8765 --storage-port 8766 --token-file ./hub-tokens
  hubrelease hub serve --root ./hub-data --allow-anonymous          # tests and demos only

  # trusted publishing: the Hub's OIDC exchange, and GitHub's id-token side for a rehearsed CI job
  hubrelease hub serve --root ./hub-data --token-file ./hub-tokens --trusted-publishers ./trust
  #   ./trust:
  #   publisher acme/drafter repository=acme/drafter-release workflow=release.yml environment=hub ref=refs/tags/v*
  #   job REQUEST_TOKEN repository=acme/drafter-release ref=refs/tags/v1.0 environment=hub workflow_ref=acme/drafter-release/.github/workflows/release.yml@refs/tags/v1.0
  #   the job's env: ACTIONS_ID_TOKEN_REQUEST_URL=http://127.0.0.1:8765/__oidc/github
  #   ACTIONS_ID_TOKEN_REQUEST_TOKEN=REQUEST_TOKEN HF_OIDC_RESOURCE=acme/drafter GITHUB_ACTIONS=true

  # in another shell:
  HF_ENDPOINT=http://127.0.0.1:8765 HF_TOKEN=... hf download acme/drafter

Limits (what a slow or hostile client can hold, and the largest accepted inputs):

  max_connections   512 open connections; past it the one waiting longest for a request head is closed
  header_timeout    30 s for a request line and headers to arrive whole (they hold no worker meanwhile)
  max_header_bytes  64 KiB of request head; larger is 431
  idle_timeout      75 s for a kept-alive connection with no request
  max_workers       64 requests served at once
  anonymous_workers 8 requests without a credential the server issued, served apart from max_workers
  request_timeout   60 s of silence inside a request body
  min_upload_rate   64 KiB/s average for a body, once request_timeout has passed (else 408)
  max_body          64 MiB for a body read into memory (each route less: 1 MiB, 8 MiB file lists); larger is 413
  max_upload        64 GiB for a streamed body (LFS object, xorb) and for the files one Xet shard describes
  commits           2 GiB streamed to disk, one line of at most 15 MiB in memory (regular files under 10 MiB)
  xorbs, shards     80 MiB per xorb, 64 MiB per shard; LZ4 chunks decoded to at most their header's length (128 KiB)
  xorb, shard work  8,192 chunks and 64 MiB decoded per xorb; a shard's terms at most 4x the distinct chunks they name
  Range             ignored unless one 'bytes=' range; one past the end is 416 (huge numbers included)
  commit paths      empty, absolute, '.'/'..' segments, NUL, backslash, '.git/' are 400
  OIDC exchange     an id token is exchanged once; the token it gives writes one repo for expires_in (3600 s)
"""

hub_app = CommandApp(
    cls=CommandGroup,
    name="hub",
    help="The loopback Hub: a local, disk-backed Hub for tests and demos.",
    no_args_is_help=True,
)


@hub_app.command("serve", epilog=EXAMPLES)
def serve(
    root: Annotated[
        Path, typer.Option("--root", help="Folder holding the Hub's repos and blobs.", show_default=False)
    ],
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="TCP port on 127.0.0.1 (0 = any free port).")
    ] = 0,
    storage_port: Annotated[
        int,
        typer.Option(
            "--storage-port",
            min=0,
            max=65535,
            help="TCP port of the storage origin LFS/Xet downloads redirect to (0 = any free port); "
            "another port than --port, as the Hub's CDN is another origin.",
        ),
    ] = 0,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="HUBRELEASE_HUB_TOKEN",
            help="A write token clients must send (Authorization: Bearer); env HUBRELEASE_HUB_TOKEN.",
            show_default=False,
        ),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            help="File of tokens, one 'TOKEN [read|write] [[TYPE/]ns/name|[TYPE/]ns/* ...]' per line: "
            "role (write by default) and the repos it covers (every repo if none; TYPE is models, "
            "datasets or spaces; a bare ns/name is the model, a bare ns/* every type; outside them it "
            "is as good as no token), # comments.",
            show_default=False,
        ),
    ] = None,
    *,
    allow_anonymous: Annotated[
        bool,
        typer.Option(
            "--allow-anonymous",
            help="Let clients without a token read and write public repos (tests, demos).",
        ),
    ] = False,
    anonymous_reads: Annotated[
        bool,
        typer.Option(
            "--anonymous-reads/--no-anonymous-reads",
            help="Clients without a token read public repos, their pages included, as on the Hub (the "
            "default); --no-anonymous-reads refuses them (401). Writing needs a token unless --allow-anonymous.",
        ),
    ] = True,
    trusted_publishers: Annotated[
        Path | None,
        typer.Option(
            "--trusted-publishers",
            help="File of trusted publishers, 'publisher RESOURCE repository=OWNER/REPO [workflow=FILE] "
            "[branch=B] [ref=GLOB] [environment=E]' (every named claim must match), and of CI jobs whose "
            "OIDC id tokens this Hub mints, 'job REQUEST_TOKEN repository=... [ref=...] [workflow_ref=...] "
            "[environment=...]'; # comments.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Serve a Hub-compatible API (git LFS and Xet) on 127.0.0.1 until interrupted."""
    from hubrelease.local_hub import ServeOptions, server

    options = ServeOptions(
        port=port,
        storage_port=storage_port,
        token=token,
        token_file=token_file,
        allow_anonymous=allow_anonymous,
        anonymous_reads=anonymous_reads,
        trusted_publishers=trusted_publishers,
        access_log=output.info_line,
    )
    hub = server(root, options)
    output.info_line(f"loopback Hub at {hub.url} (root {root}; LFS/Xet files redirect to {hub.cdn_url})")
    output.info_line(f"use: HF_ENDPOINT={hub.url}, or --endpoint {hub.url}; pages: {hub.url}/NS/NAME")
    try:
        hub.serve_forever()
    except KeyboardInterrupt:
        output.info_line("stopped")
    finally:
        hub.stop()


def register(app: typer.Typer) -> None:
    app.add_typer(hub_app, name="hub")
