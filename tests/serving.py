"""A real `museum serve` process on a free loopback port, for end-to-end tests."""

import base64
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LISTENING = re.compile(r"listening on http://127\.0\.0\.1:(\d+)")


class Server:
    """A started server: its process, port and the log lines it wrote so far."""

    def __init__(self, process, port, log_path):
        self.process = process
        self.port = port
        self.log_path = log_path

    def log(self):
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def request(self, method, path, body=None, headers=None, timeout=30):
        """(status, headers, body bytes) of one request on a fresh connection."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            payload = json.dumps(body).encode() if body is not None else None
            all_headers = {"Content-Type": "application/json"} if payload else {}
            all_headers.update(headers or {})
            connection.request(method, path, body=payload, headers=all_headers)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def stop(self, sig=signal.SIGTERM, timeout=15):
        """Send `sig` to the server and return its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout=timeout)


def auth_header(name, password):
    return {"Authorization": "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()}


def start_server(directory, config_text, *extra_args, startup_timeout=30):
    """Start `museum serve` with `config_text` in `directory` on a free port."""
    directory = Path(directory)
    config_path = directory / "museum.ini"
    config_path.write_text(config_text, encoding="utf-8")
    log_path = directory / f"server-{time.monotonic_ns()}.log"
    with open(log_path, "wb") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "museum", "serve", "--config", str(config_path),
             "--port", "0", "--db", str(directory / "museum.sqlite3"), *extra_args],
            cwd=directory, stdout=log_file, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    deadline = time.monotonic() + startup_timeout
    while time.monotonic() < deadline:
        match = LISTENING.search(log_path.read_text(encoding="utf-8", errors="replace"))
        if match:
            return Server(process, int(match.group(1)), log_path)
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{log_path.read_text()}")
        time.sleep(0.05)
    process.kill()
    process.wait()
    raise RuntimeError(f"server did not start:\n{log_path.read_text()}")


@contextmanager
def running_server(directory, config_text, *extra_args):
    """A started server that is stopped (SIGTERM, then SIGKILL) when the block ends."""
    server = start_server(directory, config_text, *extra_args)
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.process.terminate()
            try:
                server.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.process.kill()
                server.process.wait()
