"""Loopback Hub ingest (LFS and Xet) against single-stream sha256 and a raw loopback socket, one run.

Every upload path the Hub has, on the same random file, interleaved round by round:

- ``hub LFS PUT``: one LFS basic-transfer ``PUT`` of the file on its signed href over raw HTTP
  (the client ``sendfile``s it), the Hub hashing and writing as it receives;
- ``hf LFS``: the real huggingface_hub client (``HF_HUB_DISABLE_XET=1``) committing the file, in a
  process of its own; past the Hub's 64 MiB threshold that is a multipart upload of 16 MiB parts;
- ``hf Xet``: the same client with hf_xet (its default), a fresh ``HF_HOME`` and a fresh Hub root
  each round so nothing is deduplicated: xorbs, then the shard whose files the Hub checks;
- ``hub xorb POST``: the xorbs that upload stored, POSTed again one after another over raw HTTP to
  a fresh Hub: the Hub's xorb ingest without the client's chunking and compression.

The client's own sha256 of the file (huggingface_hub's ``UploadInfo``, which it otherwise
computes lazily inside ``create_commit``, and which hf_xet then need not compute) is taken before
the clock starts: the figures are the transfer plus the Hub's checks, not the client's hashing. Peers, on the same file from the page
cache: ``openssl dgst -sha256`` (one stream; LFS checks a sha256 of every byte, so that rate is
the ceiling of ingest, the target is >= 0.6x of it) and a bare TCP socket on 127.0.0.1 whose
receiver ``recv_into``s a 1 MiB buffer and writes it to a file in the same folder (no HTTP, no
hashing). Best of ``--repeat``; for the client rows, the CPU time the client and the Hub spent in
the best round, which tells which side a machine's cores bound.

    python bench/hub_ingest_bench.py [--mib 1024] [--repeat 3]
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import platform
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from hubrelease_loopback import LoopbackHub, RepoKey
from hubrelease_loopback.lfs import upload_href

BUFFER = 1 << 20
# Run in a process of its own, so the client's Python does not share the Hub's GIL.
CLIENT = """
import os, sys, time
from huggingface_hub import CommitOperationAdd, HfApi
api = HfApi(endpoint=sys.argv[1], token=os.environ["BENCH_HUB_TOKEN"])
api.create_repo(sys.argv[2])
operation = CommitOperationAdd("weights.bin", sys.argv[3])
assert operation.upload_info.sha256  # huggingface_hub hashes lazily: its own pass, before the clock
start = time.perf_counter()
api.create_commit(sys.argv[2], [operation], commit_message="bench")
print(time.perf_counter() - start)
"""


def _drain(sock: socket.socket, size: int, sink: int | None) -> None:
    view = memoryview(bytearray(BUFFER))
    left = size
    while left:
        got = sock.recv_into(view, min(BUFFER, left))
        if not got:
            raise RuntimeError("peer closed early")
        if sink is not None:
            os.write(sink, view[:got])
        left -= got


def raw_upload(source: Path, folder: Path, size: int) -> float:
    """Seconds to move ``size`` bytes into a file over a bare socket (receiver writes, no hashing)."""
    listener = socket.create_server(("127.0.0.1", 0))

    def receive() -> None:
        conn, _ = listener.accept()
        with conn:
            fd = os.open(folder / "raw-upload", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                _drain(conn, size, fd)
            finally:
                os.close(fd)
            conn.sendall(b"ok")

    thread = threading.Thread(target=receive)
    thread.start()
    start = time.perf_counter()
    with socket.create_connection(listener.getsockname()) as sock, source.open("rb") as handle:
        sock.sendfile(handle)
        sock.recv(2)
    elapsed = time.perf_counter() - start
    thread.join()
    listener.close()
    (folder / "raw-upload").unlink()
    return elapsed


def openssl_sha256(source: Path, sha: str) -> float:
    """Seconds for ``openssl dgst -sha256`` of ``source`` (page-cached), checked against ``sha``."""
    start = time.perf_counter()
    done = subprocess.run(["openssl", "dgst", "-sha256", "-r", str(source)], capture_output=True, check=True)
    elapsed = time.perf_counter() - start
    if not done.stdout.startswith(sha.encode()):
        raise RuntimeError("openssl disagrees with hashlib")
    return elapsed


def _send(port: int, method: str, target: str, source: Path, headers: dict[str, str]) -> bytes:
    """One request whose body is ``source``, sent with ``sendfile``; the answer's body (2xx only)."""
    conn = http.client.HTTPConnection("127.0.0.1", port)
    conn.putrequest(method, target)
    for name, value in {**headers, "Content-Length": str(source.stat().st_size)}.items():
        conn.putheader(name, value)
    conn.endheaders()
    assert conn.sock is not None
    with source.open("rb") as handle:
        conn.sock.sendfile(handle)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    if response.status // 100 != 2:
        raise RuntimeError(f"{method} {target.split('?')[0]}: HTTP {response.status} {body[:200]!r}")
    return body


def hub_put(hub: LoopbackHub, key: RepoKey, source: Path, sha: str, size: int) -> float:
    """Seconds for one LFS basic-transfer PUT of ``source`` (the object is removed first)."""
    hub.store.lfs_path(sha).unlink(missing_ok=True)
    target = upload_href(hub, key, sha, size).removeprefix(hub.url)
    start = time.perf_counter()
    _send(hub.port, "PUT", target, source, {})
    elapsed = time.perf_counter() - start
    if not hub.store.has_lfs(sha, size):
        raise RuntimeError("the PUT left no object")
    return elapsed


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def hf_commit(hub: LoopbackHub, repo: str, source: Path, xet: bool, home: Path) -> tuple[float, float, float]:
    """Seconds huggingface_hub's ``create_commit`` of ``source`` takes, in its own process, and the
    CPU seconds the client process (start-up included) and the Hub (this process) spent meanwhile."""
    env = {
        **os.environ,
        "HF_HOME": str(home),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "BENCH_HUB_TOKEN": hub.owner_token,
    }
    env.pop("HF_TOKEN", None)
    if not xet:
        env["HF_HUB_DISABLE_XET"] = "1"
    client, server = _cpu(resource.RUSAGE_CHILDREN), _cpu(resource.RUSAGE_SELF)
    done = subprocess.run(
        [sys.executable, "-c", CLIENT, hub.url, repo, str(source)], env=env, capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(f"huggingface_hub upload failed: {done.stderr[-2000:]}")
    used = (_cpu(resource.RUSAGE_CHILDREN) - client, _cpu(resource.RUSAGE_SELF) - server)
    return float(done.stdout.split()[-1]), *used


def _xet_token(hub: LoopbackHub, repo: str) -> str:
    conn = http.client.HTTPConnection("127.0.0.1", hub.port)
    conn.request(
        "GET",
        f"/api/models/{repo}/xet-write-token/main",
        headers={"Authorization": f"Bearer {hub.owner_token}"},
    )
    token = str(json.loads(conn.getresponse().read())["accessToken"])
    conn.close()
    return token


def hub_xorbs(hub: LoopbackHub, xorbs: list[Path]) -> float:
    """Seconds to POST ``xorbs`` (stored by an earlier upload) one after another to ``hub``."""
    repo = "bench/xorbs"
    hub.store.create_repo(RepoKey("model", repo), private=False)
    headers = {"Authorization": f"Bearer {_xet_token(hub, repo)}"}
    start = time.perf_counter()
    for xorb in xorbs:
        answer = _send(hub.port, "POST", f"/__xet/v1/xorbs/default/{xorb.name}", xorb, headers)
        if not json.loads(answer)["was_inserted"]:
            raise RuntimeError(f"xorb {xorb.name} was already stored")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024, help="file size in MiB")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    size = args.mib << 20
    times: dict[str, list[float]] = {
        name: [] for name in ("sha256", "raw socket", "hub LFS PUT", "hf LFS", "hf Xet", "hub xorb POST")
    }
    cpu: dict[tuple[str, float], list[float]] = {}
    xorb_bytes = 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = folder / "weights.bin"
        with source.open("wb") as handle:
            for _ in range(args.mib):
                handle.write(os.urandom(1 << 20))
        with source.open("rb") as handle:
            sha = hashlib.file_digest(handle, "sha256").hexdigest()
        with LoopbackHub(folder / "hub") as hub:
            key = RepoKey("model", "bench/put")
            hub.store.create_repo(key, private=False)
            for round_ in range(args.repeat):
                times["sha256"].append(openssl_sha256(source, sha))
                times["raw socket"].append(raw_upload(source, folder, size))
                times["hub LFS PUT"].append(hub_put(hub, key, source, sha, size))
                hub.store.lfs_path(sha).unlink()
                seconds, *used = hf_commit(hub, f"bench/lfs-{round_}", source, False, folder / "home")
                times["hf LFS"].append(seconds)
                cpu[("hf LFS", seconds)] = used
                hub.store.lfs_path(sha).unlink()
                with LoopbackHub(folder / f"xet-{round_}") as xet_hub:
                    home = folder / f"home-{round_}"
                    seconds, *used = hf_commit(xet_hub, "bench/xet", source, True, home)
                    times["hf Xet"].append(seconds)
                    cpu[("hf Xet", seconds)] = used
                    shutil.rmtree(home)
                    stored = sorted(
                        p
                        for p in (folder / f"xet-{round_}" / "xet" / "xorbs").glob("*/*")
                        if "." not in p.name
                    )
                xorb_bytes = sum(p.stat().st_size for p in stored)
                with LoopbackHub(folder / f"xorbs-{round_}") as xorb_hub:
                    times["hub xorb POST"].append(hub_xorbs(xorb_hub, stored))
                shutil.rmtree(folder / f"xorbs-{round_}")
                shutil.rmtree(folder / f"xet-{round_}")
    best = {name: min(values) for name, values in times.items()}
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"{subprocess.run(['openssl', 'version'], capture_output=True, text=True).stdout.strip()}"
    )
    print(
        f"file: {args.mib} MiB random, best of {args.repeat}, load average {os.getloadavg()[0]:.2f} at the end"
    )
    rates = {
        name: (xorb_bytes if name == "hub xorb POST" else size) / seconds for name, seconds in best.items()
    }
    for name, seconds in best.items():
        print(f"{name:>14}: {seconds:7.3f} s  {rates[name] / 1e6:8.0f} MB/s")
    print(f"xorbs: {xorb_bytes} bytes in all ({xorb_bytes / size:.3f}x the file)")
    for name in ("hf LFS", "hf Xet"):
        client, hub_cpu = cpu[(name, best[name])]
        print(
            f"{name:>14}, best round: client {client:.2f} CPU s (start-up included), Hub {hub_cpu:.2f} CPU s"
        )
    for name in ("hub LFS PUT", "hf LFS", "hf Xet", "hub xorb POST"):
        print(
            f"{name:>14} / sha256: {rates[name] / rates['sha256']:.2f}x  (target >= 0.6x)"
            f"   / raw socket: {rates[name] / rates['raw socket']:.2f}x"
        )


if __name__ == "__main__":
    main()
