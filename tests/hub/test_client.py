"""`hub_api`: endpoint strings -> HfApi; 'local' starts one embedded loopback Hub per folder."""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from huggingface_hub import constants

from hubrelease.errors import InputError
from hubrelease.hub.client import embedded_hub, hub_api, local_hub_root
from hubrelease_loopback import LoopbackHub
from tests.factories.cli import finish, invoke, run_process, run_program, spawn
from tests.factories.hub import raw_request, unique_repo
from tests.factories.releases import write_release
from tests.factories.waiting import CEILING_S


def test_local_endpoint_starts_one_embedded_hub_in_the_configured_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUBRELEASE_LOCAL_HUB", str(tmp_path / "local"))
    api = hub_api("local")
    assert local_hub_root() == tmp_path / "local"
    assert api.endpoint == embedded_hub().url
    assert raw_request(f"{api.endpoint}/api/models/acme/x")[0] == 401  # only this process's own token
    assert constants.HF_HUB_DISABLE_XET is False  # the loopback Hub speaks Xet
    repo = unique_repo()
    api.create_repo(repo)
    assert hub_api("local").endpoint == api.endpoint  # reused, not restarted
    assert (tmp_path / "local" / "repos" / "models" / repo / "refs.json").is_file()


def test_the_hub_client_loads_nothing_of_the_loopback_server() -> None:
    """Commands against the real Hub must not pay for the server: hubrelease.hub and its client,
    a remote endpoint's HfApi included, import neither hubrelease_loopback nor blake3, lz4 or numpy."""
    probe = (
        "import sys\n"
        "import hubrelease.hub, hubrelease.hub.client as client\n"
        "client.hub_api('http://127.0.0.1:9')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('blake3', 'lz4', 'numpy')"
        " or m.startswith('hubrelease_loopback')))\n"
        "client.embedded_hub()\n"
        "print('hubrelease_loopback' in sys.modules)\n"
    )
    env = {**os.environ, "HUBRELEASE_LOCAL_HUB": str(Path(os.environ["HF_HOME"]) / "probe-hub")}
    done = run_program([sys.executable, "-c", probe], check=True, env=env)
    assert done.stdout.split() == ["[]", "True"]  # the probe's second line shows it can see the import


def test_endpoint_must_be_a_url_or_local() -> None:
    for bad in ("huggingface.co", "http://[::1"):
        with pytest.raises(InputError, match="--endpoint must be an http"):
            hub_api(bad)
    assert hub_api("http://127.0.0.1:9/").endpoint == "http://127.0.0.1:9"


def test_hub_serve_cli_serves_until_interrupted(tmp_path: Path) -> None:
    help_text = invoke(["hub", "serve", "--help"])
    assert (
        help_text.exit_code == 0 and "hubrelease hub serve --root ./hub-data --port 8765" in help_text.stdout
    )
    # The serving loop itself runs in a child (it blocks until SIGINT).
    (tmp_path / "tokens").write_text("hf_serve_reader read  # a comment\n")
    with socket.socket() as probe:  # a port free a moment ago, for the storage origin
        probe.bind(("127.0.0.1", 0))
        storage_port = probe.getsockname()[1]
    args = ["--root", str(tmp_path / "root"), "--token-file", str(tmp_path / "tokens")]
    args += ["--no-anonymous-reads", "--storage-port", str(storage_port)]
    proc = spawn("hub", "serve", *args, stdout=subprocess.DEVNULL)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        assert first.startswith("loopback Hub at http://127.0.0.1:")
        assert f"redirect to http://127.0.0.1:{storage_port})" in first
        url = first.split()[3]
        assert raw_request(f"{url}/api/models/acme/none")[0] == 401  # no token, anonymous reads turned off
        reader = {"Authorization": "Bearer hf_serve_reader"}
        status, headers, _ = raw_request(f"{url}/api/models/acme/none", headers=reader)
        assert status == 404 and headers["x-error-code"] == "RepoNotFound"
        create = b'{"name": "x", "organization": "acme"}'
        assert raw_request(f"{url}/api/repos/create", "POST", create, reader)[0] == 403  # read-only
        assert proc.stderr.readline().startswith("use: ")
        assert proc.stderr.readline().startswith("GET /api/models/acme/none 401 in=0 out=")
        assert proc.stderr.readline() == "GET /api/models/acme/none 404 in=0 out=60\n"
    finally:
        proc.send_signal(signal.SIGINT)
        code, _, err = finish(proc)
    assert code == 0
    assert "stopped" in err and "hf_serve_reader" not in err
    refused = invoke(["hub", "serve", "--root", str(tmp_path / "root")])
    assert refused.exit_code == 2
    assert "hub serve needs --token, --token-file or --allow-anonymous" in refused.stderr


def test_push_and_verify_remote_with_endpoint_local(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HUBRELEASE_LOCAL_HUB", str(tmp_path / "local"))
    manifest = write_release(
        tmp_path / "rel", extra_manifest={"release": {"repo_id": unique_repo(), "license": "mit"}}
    )
    pushed = invoke(["push", str(manifest), "--endpoint", "local"])
    assert pushed.exit_code == 0, pushed.stderr
    verified = invoke(["verify", str(manifest), "--remote", "--endpoint", "local"])
    assert verified.exit_code == 0 and verified.stdout.startswith(
        "OK (remote at main): 5 files"
    )  # 4 artifacts + the manifest


def test_stopping_the_hub_frees_workers_held_by_idle_kept_alive_connections(tmp_path: Path) -> None:
    # Pool workers are joined at interpreter exit: one waiting out the idle timeout on a client's
    # kept-alive connection held every `--endpoint local` command open for 75 s.
    hub = LoopbackHub(tmp_path / "hub", allow_anonymous=True, idle_timeout=600).start()
    connection = http.client.HTTPConnection("127.0.0.1", hub.port)
    connection.request("GET", "/api/models/acme/nothing")
    connection.getresponse().read()  # the connection stays open, its worker waiting for a request
    hub.stop()
    joined = threading.Thread(target=hub._httpd.pool.shutdown, kwargs={"wait": True})
    joined.start()
    joined.join(CEILING_S)
    connection.close()
    assert not joined.is_alive()


def test_a_command_on_the_embedded_hub_exits_when_it_is_done(tmp_path: Path) -> None:
    env = {**os.environ, "HUBRELEASE_LOCAL_HUB": str(tmp_path / "local")}
    command = ["inspect", "hf://acme/nothing/model.gguf", "--endpoint", "local"]
    # The embedded Hub's idle timeout (75 s) made longer than the ceiling: a worker left waiting on a
    # kept-alive connection holds the process open past it, so a regression fails instead of passing late.
    setup = "import functools, hubrelease_loopback as lb\nlb.LoopbackHub = functools.partial(lb.LoopbackHub, idle_timeout=1e6)"
    code, _, err = run_process(*command, env=env, setup=setup)
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ")
