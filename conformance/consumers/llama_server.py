"""llama.cpp mainline (``dflash``) and ik_llama.cpp (``dflash-draft``) llama-server: target + drafter, greedy
tokens with DFlash speculative decoding, drafting asserted from the response timings.

How each engine enables DFlash drafting at the tested commit:
- mainline 0c1e57098: ``--model-draft FILE --spec-type draft-dflash`` (``common/arg.cpp`` ``--spec-type``,
  names in ``common/speculative.cpp:38``); ``--spec-draft-n-max`` caps the drafted tokens;
- ik 8337e4cd: ``--model-draft FILE --spec-type dflash:n_max=N,cross_ctx=C`` (``common/common.cpp:1646``,
  stage keys at ``common/common.cpp:934-966``).
Both servers report ``timings.draft_n`` / ``timings.draft_n_accepted`` in ``/completion``'s response
(mainline ``tools/server/server-common.cpp:100``, ik ``examples/server/server-context.cpp:660``).
"""

from __future__ import annotations

import http.client
import json
import re
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Literal

Engine = Literal["mainline", "ik"]
PROMPT = "Speculative decoding runs a small draft model ahead of a large target model. The draft proposes"
N_PREDICT = 24
DRAFT_MAX = 4
_STARTUP_SECONDS = 120
_ERROR_LINE = re.compile(r"error|fail|abort|exception|mismatch|wrong|invalid|terminate", re.IGNORECASE)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def spec_args(engine: Engine, draft: Path) -> list[str]:
    if engine == "ik":
        return ["--model-draft", str(draft), "--spec-type", f"dflash:n_max={DRAFT_MAX},cross_ctx=64"]
    # -lv 4: the model loader's info lines (which DFlash modules it built) are below the default threshold.
    return [
        "--model-draft", str(draft), "--spec-type", "draft-dflash", "--spec-draft-n-max", str(DRAFT_MAX), "-lv", "4",
        *mainline_cpu_args(),
    ]  # fmt: skip


def mainline_cpu_args() -> list[str]:
    """``--no-repack`` on a CPU with AMX int8, and only there.

    On such a CPU mainline 0c1e57098 puts Q8_0 weights in its AMX buffer type
    (``ggml/src/ggml-cpu/ggml-cpu.cpp:46-49``) and its AMX matmul (``ggml/src/ggml-cpu/amx/mmq.cpp:2342``,
    ``ggml_backend_amx_mul_mat``) segfaults on a Q8_0 drafter of these shapes: also on the file
    llama.cpp's own ``convert_hf_to_gguf.py`` writes (seen on an Intel Xeon with ``amx_int8``; the
    AMD EPYC of earlier runs has no AMX). ``--no-repack`` clears the extra buffer types
    (``common/arg.cpp:2421-2428``, ``no_extra_bufts``), so the engine's plain CPU kernels read the file;
    each result that used it says so after its command.
    """
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8").split()
    except OSError:
        return []
    return ["--no-repack"] if "amx_int8" in flags else []


def _get(url: str, timeout: float) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except OSError:
        return 0


def _post_stream(url: str, body: dict[str, Any], timeout: float) -> tuple[int, dict[str, Any]]:
    """POST with ``stream: true`` and return the last event (the one with ``timings``).

    Streamed, because ik's non-streamed reply serialises the whole text at once and answers 500
    ("invalid UTF-8 byte") when a random model's greedy tokens end inside a multi-byte character.
    """
    data = json.dumps({**body, "stream": True}).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            events = [
                line[len(b"data:") :] for line in response.read().splitlines() if line.startswith(b"data:")
            ]
            parsed = [json.loads(e) for e in events if e.strip().startswith(b"{")]
            final = next((e for e in reversed(parsed) if "timings" in e), parsed[-1] if parsed else {})
            return int(response.status), final
    except urllib.error.HTTPError as exc:
        return int(exc.code), {"error": exc.read().decode(errors="replace")[:500]}
    except (http.client.HTTPException, OSError) as exc:
        # The server died mid-reply (an abort in the graph): the log says why.
        return 0, {"error": f"connection lost ({type(exc).__name__})"}


def _log_excerpt(log: str) -> str:
    """The first error lines (a load's cause, e.g. ``check_tensor_dims: ... wrong shape``) and the last
    two (an abort's), without mainline's "this warning is normal" line of its memory fitting pass."""
    lines = [
        line.strip()
        for line in log.splitlines()
        if _ERROR_LINE.search(line) and "this warning is normal" not in line
    ] or log.splitlines()[-3:]
    picked = lines[:2] + lines[-2:] if len(lines) > 4 else lines
    return " | ".join(picked)[:1500]


def run(
    engine: Engine, server: Path, target: Path, draft: Path, expect_log: tuple[str, ...] = ()
) -> dict[str, Any]:
    """Start the server on 127.0.0.1, wait for /health, ask for N_PREDICT greedy tokens, stop it.

    ``expect_log``: lines the server must log, e.g. mainline's ``DFlash extract_layers`` and, when it
    builds the DFlash2 modules, ``DFlash2 conv kernel`` (``src/models/dflash.cpp:49,157``; without them
    a DFlash2 file would draft as DFlash v1); ik's ``DFlash context ready`` (its dflash state, with the
    feature width it checked against the target).
    """
    spec = spec_args(engine, draft.resolve())
    return serve(server, ["-m", str(target.resolve()), *spec], " ".join(spec[:4]), expect_log)


def serve(
    server: Path,
    model_args: list[str],
    label: str,
    expect_log: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``run`` with any model arguments (``-hf REPO:TAG -hfd ...`` too) and environment; ``label``
    is how the result names the command."""
    port = _free_port()
    if "--no-repack" in model_args:
        label += " --no-repack (AMX CPU)"
    argv = [str(server.resolve()), *model_args]
    argv += ["--host", "127.0.0.1", "--port", str(port), "-c", "1024", "-t", "2", "-np", "1", "--no-warmup"]
    # In a scratch folder: ik's server writes llama.log into its working directory.
    with tempfile.TemporaryFile("w+") as log, tempfile.TemporaryDirectory() as scratch:
        process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=scratch, env=env)
        try:
            deadline = time.monotonic() + _STARTUP_SECONDS
            while time.monotonic() < deadline and process.poll() is None:
                if _get(f"http://127.0.0.1:{port}/health", 2) == 200:
                    break
                time.sleep(0.5)
            if process.poll() is not None or time.monotonic() >= deadline:
                log.seek(0)
                why = f"exited with {process.returncode}" if process.poll() is not None else "not ready"
                return {"status": "fail", "error": f"llama-server {why}: {_log_excerpt(log.read())}"}
            body = {"prompt": PROMPT, "n_predict": N_PREDICT, "temperature": 0.0, "top_k": 1, "seed": 0}
            status, reply = _post_stream(f"http://127.0.0.1:{port}/completion", body, 300)
            log.seek(0)
            text = log.read()
        finally:
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    if status != 200:
        return {
            "status": "fail",
            "error": f"/completion answered {status}: {reply}; log: {_log_excerpt(text)}",
        }
    timings = reply.get("timings") or {}
    drafted, accepted = timings.get("draft_n"), timings.get("draft_n_accepted")
    predicted = timings.get("predicted_n", reply.get("tokens_predicted"))
    detail = f"{predicted} tokens, timings.draft_n={drafted}, draft_n_accepted={accepted}"
    if not isinstance(drafted, int) or drafted <= 0:
        return {
            "status": "fail",
            "error": f"no drafting: {detail}; log: {_log_excerpt(text)}",
            "timings": timings,
        }
    checks = [label, detail]
    for expected in expect_log:
        found = next((line.strip() for line in text.splitlines() if expected in line), None)
        if found is None:
            return {"status": "fail", "error": f"the server never logged {expected!r}: {detail}"}
        checks.append(found[found.index(expected) :])
    return {"status": "pass", "checks": checks, "timings": timings}
