"""Every remote read is bounded; a hostile or broken server ends a command in one line.

Each case of the campaign (``tests.factories.hostile_hub``) is put on the route it broke, in front of
a real loopback Hub, and every read command that uses that route runs against it: ``inspect
hf://``, ``verify --remote``, ``lock`` and ``import``. Before the bounds these ended in exit 3, a
sleep of 100,001 s, an endless pagination or a 256 MiB fetch; now each is exit 4 (the server's
fault) or 2 (not a model file) with one ``error:`` line. The deadlines are set small through their
environment variables; what is asserted is the outcome and the work (requests, bytes sent), never
how long it took.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hubrelease_loopback import LoopbackHub
from tests.factories.cli import run_cli
from tests.factories.hostile_hub import MAX_DRIP, HostileHub, Published, publish, read_commands


@pytest.fixture
def published(hub: LoopbackHub, tmp_path: Path, no_backoff_sleep: None) -> Published:
    """``hostile_hub.publish``, with huggingface_hub's backoff sleeps skipped (its retries still
    happen). The time bounds stay at their defaults except in the cases about time (``TIMED``), so
    every other case must end by the bound it is about."""
    return publish(hub, tmp_path)


TIMED = {"drip", "stall"}
"""Cases a time bound ends: remote reads get 1 s in all, 0.5 s per read (the server sends a byte
every 0.2 s: the total deadline, not the per-read timeout, has to end the drip)."""
SAYS = {
    "content_range_digits": ("without a usable Content-Range",),
    "bad_gzip": ("the Hub's answer cannot be decoded",),
    "redirect_loop": ("the Hub's answer is a redirect loop",),
    "short_body": ("the Hub's answer broke off",),
    "deep_json": ("the Hub's answer is malformed (RecursionError",),
    "tree_object": ("the Hub's answer is malformed (TypeError",),
    "redirect_elsewhere": ("the Hub's answer is malformed (KeyError",),
    "drip": ("s deadline for remote reads ($HUBRELEASE_REMOTE_DEADLINE)",),
    "stall": ("s deadline for remote reads ($HUBRELEASE_REMOTE_DEADLINE)",),
    "retry_after": ("asks to wait 100,000 s",),
    "link_loop": ("pagination loop (the next page is one already read)",),
    "huge_array": ("header declares at least 8,796,093,022,",),
    "huge_count": ("header declares at least 893,353,197,",),
}
"""What the one line says for each case."""

CASES = [
    ("content_range_digits", "resolve", 4),
    ("content_range_digits", "cdn", 4),
    ("bad_gzip", "resolve", 4),
    ("bad_gzip", "cdn", 4),
    ("bad_gzip", "repo_info", 4),
    ("bad_gzip", "tree", 4),
    ("redirect_loop", "resolve", 4),
    ("redirect_loop", "cdn", 4),
    ("redirect_loop", "repo_info", 4),
    ("short_body", "resolve", 4),
    ("short_body", "cdn", 4),
    ("short_body", "tree", 4),
    ("deep_json", "repo_info", 4),
    ("deep_json", "tree", 4),
    ("tree_object", "tree", 4),
    ("redirect_elsewhere", "repo_info", 4),
    ("drip", "repo_info", 4),
    ("drip", "resolve", 4),
    ("drip", "cdn", 4),
    ("stall", "tree", 4),
    ("retry_after", "repo_info", 4),
    ("retry_after", "resolve", 4),
    ("retry_after", "cdn", 4),
    ("link_loop", "tree", 4),
    ("huge_array", "resolve", 2),
    ("huge_count", "resolve", 2),
    ("huge_array", "cdn", 2),
]


@pytest.mark.parametrize(("kind", "route", "code"), CASES, ids=[f"{k}-{r}" for k, r, _ in CASES])
def test_a_hostile_server_ends_each_read_command_in_one_line(
    hub: LoopbackHub,
    published: Published,
    kind: str,
    route: str,
    code: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if kind in TIMED:
        monkeypatch.setenv("HUBRELEASE_REMOTE_DEADLINE", "1")
        monkeypatch.setenv("HUBRELEASE_REMOTE_TIMEOUT", "0.5")
    for command in read_commands(published, route):
        if kind.startswith("huge") and command[0] == "import":
            continue  # import records a header it cannot read as a note, by design
        published.out.unlink(missing_ok=True)
        with HostileHub(hub, kind, route=route) as hostile:
            exit_code, stdout, stderr = run_cli(*command, "--endpoint", hostile.url)
        lines = stderr.strip().splitlines()
        where = (kind, route, command[0], exit_code, stderr[-400:])
        assert exit_code == code, where
        assert len(lines) == 1 and lines[0].startswith("error: "), where
        assert any(says in lines[0] for says in SAYS[kind]), where
        assert "Traceback" not in stdout + stderr and "internal error" not in stderr, where
        # bounded work: a few requests per page or file, and little of what the server would send
        assert sum(hostile.requests.values()) <= 40, (where, hostile.requests)
        assert hostile.sent < (1 << 20), (where, hostile.sent)
        assert not published.out.exists()


def test_the_deadline_and_retry_messages_say_what_to_do(
    hub: LoopbackHub, published: Published, monkeypatch: pytest.MonkeyPatch
) -> None:
    with HostileHub(hub, "retry_after", route="repo_info") as hostile:
        _, _, stderr = run_cli("verify", str(published.manifest), "--remote", "--endpoint", hostile.url)
    assert "asks to wait 100,000 s (hubrelease waits at most 300 s" in stderr and "retry after 20" in stderr
    assert hostile.requests["repo_info"] == 1  # refused at once, not slept on
    monkeypatch.setenv("HUBRELEASE_REMOTE_DEADLINE", "1.5")
    with HostileHub(hub, "drip", route="repo_info") as hostile:
        _, _, stderr = run_cli("verify", str(published.manifest), "--remote", "--endpoint", hostile.url)
    assert "within the 1.5 s deadline for remote reads ($HUBRELEASE_REMOTE_DEADLINE)" in stderr
    assert hostile.sent < MAX_DRIP


@pytest.mark.parametrize(
    ("kind", "least"), [("huge_array", "8,796,093,022,"), ("huge_count", "893,353,197,")]
)
def test_a_header_declaring_more_than_the_cap_is_refused_before_it_is_fetched(
    hub: LoopbackHub, published: Published, kind: str, least: str
) -> None:
    """2^40 strings or 2^36 keys: on main the client fetched its whole 256 MiB cap first."""
    with HostileHub(hub, kind, route="resolve") as hostile:
        exit_code, _, stderr = run_cli(
            "inspect", f"hf://{published.repo}/model.gguf", "--endpoint", hostile.url
        )
    assert exit_code == 2 and f"header declares at least {least}" in stderr, stderr
    assert hostile.requests["resolve"] == 1 and hostile.sent <= 64 << 10  # the first read only


def test_a_pagination_loop_is_seen_at_the_second_page(hub: LoopbackHub, published: Published) -> None:
    with HostileHub(hub, "link_loop", route="tree") as hostile:
        exit_code, _, stderr = run_cli(
            "verify", str(published.manifest), "--remote", "--endpoint", hostile.url
        )
    assert exit_code == 4 and "pagination loop" in stderr, stderr
    assert hostile.requests["tree"] == 1


def test_bad_bound_settings_are_usage_errors(published: Published, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HUBRELEASE_REMOTE_DEADLINE", "soon")
    exit_code, _, stderr = run_cli("verify", str(published.manifest), "--remote", "--endpoint", "local")
    assert exit_code == 2 and "$HUBRELEASE_REMOTE_DEADLINE must be a positive number of seconds" in stderr
