"""Loopback Hub LFS ingest and download speed against a raw socket copy and single-stream sha256.

Peers, on the same machine in the same run: a bare TCP socket on 127.0.0.1 whose receiver writes
what arrives to a file in the same folder (upload) or whose sender ``sendfile``s the stored object
(download), with no HTTP and no hashing; and ``openssl dgst -sha256`` of the same file from the
page cache, one stream: LFS checks a sha256 of every byte, so that rate is the practical ceiling
of ingest (the target: >= 0.6x of it). The Hub side is the real server: an LFS
basic-transfer ``PUT`` (signed href, sha256 computed while it is written) and a ``GET`` on
``/resolve``. Both clients send with ``sendfile`` and receive into one reused buffer, so the
client costs the same on each side. Best of ``--repeat``, rounds interleaved.

    python bench/hub_ingest_bench.py [--mib 1024] [--repeat 3]
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import os
import platform
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from hubrelease_loopback import LoopbackHub, RepoKey
from hubrelease_loopback.lfs import upload_href
from hubrelease_loopback.store import FileOp

BUFFER = 1 << 20


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
    done = threading.Event()

    def receive() -> None:
        conn, _ = listener.accept()
        with conn:
            fd = os.open(folder / "raw-upload", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                _drain(conn, size, fd)
            finally:
                os.close(fd)
            conn.sendall(b"ok")
        done.set()

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


def raw_download(source: Path, size: int) -> float:
    """Seconds for a client to receive ``size`` bytes a bare socket ``sendfile``s from disk."""
    listener = socket.create_server(("127.0.0.1", 0))

    def send() -> None:
        conn, _ = listener.accept()
        with conn, source.open("rb") as handle:
            conn.sendfile(handle)

    thread = threading.Thread(target=send)
    thread.start()
    start = time.perf_counter()
    with socket.create_connection(listener.getsockname()) as sock:
        _drain(sock, size, None)
    elapsed = time.perf_counter() - start
    thread.join()
    listener.close()
    return elapsed


def openssl_sha256(source: Path, sha: str) -> float:
    """Seconds for ``openssl dgst -sha256`` of ``source`` (page-cached), checked against ``sha``."""
    start = time.perf_counter()
    done = subprocess.run(["openssl", "dgst", "-sha256", "-r", str(source)], capture_output=True, check=True)
    elapsed = time.perf_counter() - start
    if not done.stdout.startswith(sha.encode()):
        raise RuntimeError("openssl disagrees with hashlib")
    return elapsed


def hub_upload(hub: LoopbackHub, key: RepoKey, source: Path, sha: str, size: int) -> float:
    """Seconds for one LFS basic-transfer PUT of ``source`` (the object is removed first)."""
    hub.store.lfs_path(sha).unlink(missing_ok=True)
    target = upload_href(hub, key, sha, size).removeprefix(hub.url)
    conn = http.client.HTTPConnection("127.0.0.1", hub.port)
    start = time.perf_counter()
    conn.putrequest("PUT", target)
    conn.putheader("Content-Length", str(size))
    conn.endheaders()
    assert conn.sock is not None
    with source.open("rb") as handle:
        conn.sock.sendfile(handle)
    response = conn.getresponse()
    response.read()
    elapsed = time.perf_counter() - start
    conn.close()
    if response.status != 200 or not hub.store.has_lfs(sha, size):
        raise RuntimeError(f"upload failed: HTTP {response.status}")
    return elapsed


def hub_download(hub: LoopbackHub, repo: str, size: int) -> float:
    """Seconds for one GET of the committed object on ``/resolve``."""
    conn = http.client.HTTPConnection("127.0.0.1", hub.port)
    headers = {"Authorization": f"Bearer {hub.owner_token}"}
    start = time.perf_counter()
    conn.request("GET", f"/{repo}/resolve/main/weights.bin", headers=headers)
    response = conn.getresponse()
    if response.status != 200:
        raise RuntimeError(f"download failed: HTTP {response.status}")
    view = memoryview(bytearray(BUFFER))
    left = size
    while left:
        got = response.readinto(view[: min(BUFFER, left)])
        if not got:
            raise RuntimeError("server closed early")
        left -= got
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=1024, help="object size in MiB")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    size = args.mib << 20
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        source = folder / "weights.bin"
        with source.open("wb") as handle:
            for _ in range(args.mib):
                handle.write(os.urandom(1 << 20))
        sha = hashlib.sha256(source.read_bytes()).hexdigest()
        with LoopbackHub(folder / "hub") as hub:
            key = RepoKey("model", "bench/ingest")
            hub.store.create_repo(key, private=False)
            times: dict[str, list[float]] = {
                "sha256": [],
                "raw up": [],
                "hub up": [],
                "raw down": [],
                "hub down": [],
            }
            for _ in range(args.repeat):
                times["sha256"].append(openssl_sha256(source, sha))
                times["raw up"].append(raw_upload(source, folder, size))
                times["hub up"].append(hub_upload(hub, key, source, sha, size))
            hub.store.commit(
                key, "main", [FileOp("lfsFile", "weights.bin", sha256=sha, size=size)], {}, False
            )
            stored = hub.store.lfs_path(sha)
            for _ in range(args.repeat):
                times["raw down"].append(raw_download(stored, size))
                times["hub down"].append(hub_download(hub, key.repo_id, size))
    best = {name: min(values) for name, values in times.items()}
    print(
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    print(f"object: {args.mib} MiB, best of {args.repeat}, load average {os.getloadavg()[0]:.2f} at the end")
    for name, seconds in best.items():
        print(f"{name:>9}: {seconds:7.3f} s  {size / seconds / 1e6:8.0f} MB/s")
    print(f"upload   hub/raw: {best['raw up'] / best['hub up']:.2f}x")
    print(f"upload   hub/sha256: {best['sha256'] / best['hub up']:.2f}x  (target >= 0.6x)")
    print(f"download hub/raw: {best['raw down'] / best['hub down']:.2f}x")


if __name__ == "__main__":
    main()
