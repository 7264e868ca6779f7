"""A real OpenAI-compatible server (vLLM's CPU build) and a fault-injecting proxy in front of it.

vLLM lives in its own virtual environment (it pins its own transformers): `.venv-vllm`, made by
`make vllm` (which .ci/run calls), or the interpreter named by HIVEBENCH_VLLM_PYTHON.
"""

from __future__ import annotations

import contextlib
import http.client
import itertools
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VLLM_PYTHON = Path(os.environ.get("HIVEBENCH_VLLM_PYTHON", REPO / ".venv-vllm" / "bin" / "python"))


# Each pytest-xdist worker picks ports from its own range: a port checked free by one worker is never
# taken by another before its server binds it (the OS's ephemeral ports lie above 32768).
PORTS_PER_WORKER = 500
_next_port = itertools.count()


def free_port() -> int:
    """A free loopback port of this worker's range (gw0: 20000-20499, gw1: 20500-20999, ...)."""
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    first = 20000 + PORTS_PER_WORKER * worker
    for _ in range(PORTS_PER_WORKER):
        port = first + next(_next_port) % PORTS_PER_WORKER
        with socket.socket() as s, contextlib.suppress(OSError):
            s.bind(("127.0.0.1", port))
            return port
    raise RuntimeError(f"no free port in {first}-{first + PORTS_PER_WORKER - 1}")


def wait_until_up(url: str, process: subprocess.Popen[bytes], log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"vLLM exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        try:
            urllib.request.urlopen(url, timeout=30).read()  # a loaded machine answers slowly
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"vLLM did not answer {url} within {timeout_s} s:\n{log.read_text()[-3000:]}")


# The server command docs/llm-agents.md gives for vLLM's CPU build: a seeded request whose prefill is split (chunked
# prefill, on by default) kills its worker, so chunked prefill is off and a step takes a whole context.
MAX_MODEL_LEN = 4096
CPU_SAFE_FLAGS = ("--no-enable-chunked-prefill", "--max-num-batched-tokens", str(MAX_MODEL_LEN))


def start_vllm(
    model: Path, served_name: str, log: Path, flags: tuple[str, ...] = CPU_SAFE_FLAGS
) -> tuple[subprocess.Popen[bytes], str]:
    """Start `vllm.entrypoints.openai.api_server` on a free loopback port; return it and its /v1 URL."""
    port = free_port()
    command = [
        str(VLLM_PYTHON),
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(model),
        "--served-model-name",
        served_name,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--dtype",
        "float32",
        "--max-model-len",
        str(MAX_MODEL_LEN),
        "--enforce-eager",
        # guidance: strict JSON Schema decoding that also holds for a random-weight model
        "--structured-outputs-config",
        '{"backend":"guidance","disable_any_whitespace":true}',
        *flags,
    ]
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        wait_until_up(f"http://127.0.0.1:{port}/v1/models", process, log, timeout_s=300)
    except BaseException:
        stop_vllm(process)
        raise
    return process, f"http://127.0.0.1:{port}"


def stop_vllm(process: subprocess.Popen[bytes]) -> None:
    """Stop a server from start_vllm and every process it started (its engine core and workers
    outlive a signal to the API server alone when the engine has died)."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        pass
    except ProcessLookupError:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # whatever is left of its session
    process.wait()


Fault = Callable[[int, bytes], "str | None"]  # (request number from 1, body) -> a fault name or None


class FaultProxy:
    """Forwards HTTP requests to `upstream`, except the ones `fault` picks, which get a 429 (with a
    `retry-after` where one is given), a 500, a 400 naming json_schema, a 401 quoting the key, a body
    that is not JSON, a hang until the client gives up on the request (its timeout; at most `hang_s`),
    or a dropped connection. Counts what it
    forwarded, when each request came in and each fault went out, and the most requests in flight at
    once. `stop()` closes it like a killed server."""

    def __init__(
        self,
        upstream: str,
        fault: Fault | None = None,
        port: int = 0,
        hang_s: float = 300.0,
        die_after: int | None = None,
        retry_after_s: float | None = None,
    ):
        self.upstream = upstream.removeprefix("http://")
        self.fault = fault or (lambda number, body: None)
        self.hang_s = hang_s
        self.die_after = die_after  # forwarded calls after which it behaves as a killed server
        self.retry_after_s = retry_after_s  # the `retry-after` its 429s carry, if any
        self.arrivals: list[float] = []  # when each POST came in (time.time())
        self.faults: list[tuple[float, str]] = []  # when each fault was given, and which
        self.dead = False
        self.received = 0
        self.forwarded = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                proxy.handle(self, b"")

            def do_POST(self) -> None:
                proxy.handle(self, self.rfile.read(int(self.headers.get("Content-Length", 0))))

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def handle(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        with self.lock:
            self.received += 1
            number = self.received
            if handler.command == "POST":
                self.arrivals.append(time.time())
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            fault = self.fault(number, body) if handler.command == "POST" else None
            if fault is not None:
                with self.lock:
                    self.faults.append((time.time(), fault))
            if self.dead:  # also on connections the client keeps alive from before
                handler.connection.shutdown(socket.SHUT_RDWR)
                handler.close_connection = True
            elif fault == "429":
                wait = {} if self.retry_after_s is None else {"retry-after": str(self.retry_after_s)}
                self.reply(handler, 429, b'{"error": {"message": "injected fault"}}', headers=wait)
            elif fault == "500":
                self.reply(handler, 500, b'{"error": {"message": "injected fault"}}')
            elif fault == "401-echo-key":  # a server that quotes the credentials it was sent
                self.reply(
                    handler,
                    401,
                    f'{{"error": {{"message": "bad key {handler.headers.get("Authorization")}"}}}}'.encode(),
                )
            elif fault == "malformed":  # a 200 whose body is cut short: not JSON
                self.reply(handler, 200, b'{"id": "cmpl-1", "choices": [{')
            elif fault == "400-json-schema":
                self.reply(handler, 400, b'{"error": {"message": "response_format json_schema is not supported"}}')
            elif fault == "hang":  # no reply until the client closes the connection (recv reads its end)
                handler.connection.settimeout(self.hang_s)
                with contextlib.suppress(OSError):
                    handler.connection.recv(1)
                handler.close_connection = True
            elif fault == "drop":
                handler.connection.shutdown(socket.SHUT_RDWR)
                handler.close_connection = True
            else:
                self.forward(handler, body)
        finally:
            with self.lock:
                self.in_flight -= 1

    def forward(self, handler: BaseHTTPRequestHandler, body: bytes) -> None:
        connection = http.client.HTTPConnection(self.upstream, timeout=120)
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in ("host", "connection")}
        connection.request(handler.command, handler.path, body=body or None, headers=headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        with self.lock:
            self.forwarded += handler.command == "POST"
            dies = self.die_after is not None and self.forwarded >= self.die_after
        self.reply(handler, response.status, data, response.getheader("Content-Type", "application/json"))
        if dies:
            self.stop()

    @staticmethod
    def reply(
        handler: BaseHTTPRequestHandler,
        status: int,
        data: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        for name, value in (headers or {}).items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def stop(self) -> None:
        self.dead = True
        threading.Thread(target=self.server.shutdown).start()  # may be called from a handler thread
        self.server.socket.close()
