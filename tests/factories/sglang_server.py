"""A loopback stand-in for an SGLang server, enough for SGLang's own bench_serving to measure it.

It speaks the routes bench_serving uses (python/sglang/benchmark/serving.py, sglang 0.5.23):
``POST /v1/completions`` (backend ``sglang-oai``: SSE chunks with ``choices[0].text`` and
``usage.completion_tokens``, then ``[DONE]``), ``POST /generate`` (backend ``sglang``: cumulative
``text`` and ``meta_info.completion_tokens``), ``POST /flush_cache``, ``GET /server_info`` (resolved
server arguments plus ``internal_states[0].avg_spec_accept_length``) and ``GET /v1/models``.
Decoding is simulated: every step sleeps ``step_s`` and emits ``tokens_per_step`` tokens (cycled),
so a speculative server streams several tokens per chunk as a real one does. The server pauses
``done_lag_s`` before ``[DONE]``, which is why bench_serving's latency - TTFT exceeds the sum of ITLs.
Used by scripts/bench_serving_fixtures.py to produce the committed fixtures.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class StubConfig:
    """What the stub serves and how fast."""

    model_path: str = "acme/target"
    speculative_algorithm: str | None = None
    draft_model_path: str | None = None
    num_draft_tokens: int | None = None
    tokens_per_step: Sequence[int] = (1,)
    step_s: float = 0.004
    prefill_s: float = 0.02
    done_lag_s: float = 0.003
    fail_requests: Sequence[int] = ()
    """1-based indices of generation requests (warmup included) answered with HTTP 500."""
    version: str = "0.5.23"
    requests: int = field(default=0)
    accepted: int = field(default=0)
    rounds: int = field(default=0)


class _Handler(BaseHTTPRequestHandler):
    server: _StubServer

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: bench_serving's own output is what the script shows."""

    def _json(self, status: int, payload: Any) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    @property
    def route(self) -> str:
        return self.path.split("?", 1)[0]

    def do_GET(self) -> None:
        config = self.server.config
        if self.route in ("/server_info", "/get_server_info"):
            with self.server.lock:
                accept = config.accepted / config.rounds if config.rounds else 0.0
            self._json(
                200,
                {
                    "model_path": config.model_path,
                    "tokenizer_path": config.model_path,
                    "speculative_algorithm": config.speculative_algorithm,
                    "speculative_draft_model_path": config.draft_model_path,
                    "speculative_num_draft_tokens": config.num_draft_tokens,
                    "internal_states": [
                        {"avg_spec_accept_length": accept if config.speculative_algorithm else None}
                    ],
                    "version": config.version,
                },
            )
        elif self.route == "/v1/models":
            self._json(200, {"object": "list", "data": [{"id": config.model_path, "object": "model"}]})
        elif self.route in ("/health", "/model_info"):
            self._json(200, {"model_path": config.model_path})
        else:
            self._json(404, {"error": "not found"})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        config = self.server.config
        if self.route == "/flush_cache":
            with self.server.lock:
                config.accepted = config.rounds = 0
            self._json(200, {})
            return
        if self.route not in ("/v1/completions", "/v1/chat/completions", "/generate"):
            self._json(404, {"error": "not found"})
            return
        with self.server.lock:
            config.requests += 1
            index = config.requests
        if index in config.fail_requests:
            self._json(500, {"error": "stub: injected failure"})
            return
        native, chat = self.route == "/generate", self.route == "/v1/chat/completions"
        if native:
            prompt, wanted = body.get("text"), (body.get("sampling_params") or {}).get("max_new_tokens", 16)
        elif chat:
            prompt, wanted = (
                (body.get("messages") or [{}])[-1].get("content"),
                body.get("max_completion_tokens", 16),
            )
        else:
            prompt, wanted = body.get("prompt"), body.get("max_tokens", 16)
        wanted = int(wanted)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        prompt_tokens = max(1, len(str(prompt or "").split()))
        time.sleep(config.prefill_s)
        produced, text = 0, ""
        steps = itertools.cycle(config.tokens_per_step)
        first = True
        while produced < wanted:
            count = 1 if first else min(next(steps), wanted - produced)
            if not first:
                time.sleep(config.step_s)
                with self.server.lock:
                    config.rounds += 1
                    config.accepted += count
            first = False
            piece = "".join(f" t{produced + i}" for i in range(count))
            produced += count
            text += piece
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": produced}
            if native:
                chunk: dict[str, Any] = {"text": text, "meta_info": usage}
            elif chat:
                chunk = {
                    "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                    "usage": usage,
                }
            else:
                chunk = {"choices": [{"index": 0, "text": piece, "finish_reason": None}], "usage": usage}
            self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            self.wfile.flush()
        time.sleep(config.done_lag_s)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


class _StubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, config: StubConfig) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.config = config
        self.lock = threading.Lock()


def start_stub(config: StubConfig) -> tuple[ThreadingHTTPServer, str]:
    """Serve ``config`` on 127.0.0.1 (a free port) in a daemon thread; returns the server and its base URL."""
    server = _StubServer(config)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, port = server.server_address[:2]
    return server, f"http://{host!s}:{port}"
