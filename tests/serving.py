"""Server start-up for end-to-end tests: a real `museum serve` (or `museum mock`) process on
a free loopback port, stopped when the test is done, and raw requests to it."""

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UNIX_SOCKET = re.compile(r"(?m)^unix_socket *= *\S")
LISTENING = re.compile(r"listening on (?:http://127\.0\.0\.1:(\d+)|unix:)")


class Server:
    """A started server: its process, port (None on a unix socket), the log lines it
    wrote so far and, for `museum serve`, its database (a sqlite file or a URL)."""

    def __init__(self, process, port, log_path):
        self.process = process
        self.port = port
        self.log_path = log_path
        self.database = None

    def log(self):
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def connection(self, timeout=30, source=None):
        """A new HTTP connection to the server, from loopback address `source` if given."""
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout,
                                          source_address=(source, 0) if source else None)

    def request(self, method, path, body=None, headers=None, timeout=30, source=None):
        """(status, headers, body bytes) of one request on a fresh connection; `source` is
        the client's loopback address (127.0.0.1 when None)."""
        connection = self.connection(timeout, source)
        try:
            payload = json.dumps(body).encode() if body is not None else None
            all_headers = {"Content-Type": "application/json"} if payload else {}
            all_headers.update(headers or {})
            connection.request(method, path, body=payload, headers=all_headers)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def log_in(self, *credentials):
        """Sign in once with each of `credentials` (Authorization headers), which are then
        verified: clients of one name that start together afterwards do not race for its
        first password check (two at a time per name; the others are answered 429)."""
        for headers in credentials:
            status = self.request("GET", "/v1.1/museum-hours", headers=headers)[0]
            assert status == 200, status

    def exchange(self, data, timeout=10):
        """Send raw bytes on a fresh connection; return every byte the server answers until
        it closes the connection (or `timeout` seconds pass without a byte)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            try:
                sock.sendall(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server answered before taking everything: read its answer
            received = b""
            try:
                while chunk := sock.recv(65536):
                    received += chunk
            except (TimeoutError, ConnectionResetError):
                pass
            return received

    def stop(self, sig=signal.SIGTERM, timeout=15):
        """Send `sig` to the server and return its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout=timeout)


def wait_until(predicate, timeout, interval=0.05, what="the condition"):
    """Poll `predicate` until it returns something true (returned) or `timeout` seconds pass
    (AssertionError naming `what`)."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout} s")
        time.sleep(interval)


def problem(status, headers, data):
    """The parsed problem body of a raw answer; asserts it is a well-formed RFC 9457 problem."""
    assert headers.get("Content-Type") == "application/problem+json", (status, headers, data)
    body = json.loads(data)
    assert body["status"] == status and body["title"] and body["detail"], body
    return body


def start_server(directory, config_text, *extra_args, db=None):
    """Start `museum serve` with `config_text` in `directory` on a free port (or on the
    config's unix socket, if it has one), on the database `db` (a `--db` path or URL;
    default: museum.sqlite3 in `directory`)."""
    directory = Path(directory)
    config_path = directory / "museum.ini"
    config_path.write_text(config_text, encoding="utf-8")
    # --port would win over the config's socket.
    listen = [] if UNIX_SOCKET.search(config_text) else ["--port", "0"]
    database = db or str(directory / "museum.sqlite3")
    server = start_process(directory, "server", "-m", "museum_cli", "serve", "--config",
                           str(config_path), *listen, "--db", database, *extra_args)
    server.database = database
    return server


def start_mock(directory, *extra_args):
    """Start `museum mock` in `directory` on a free port."""
    return start_process(directory, "mock", "-m", "museum_cli", "mock", "--port", "0", *extra_args)


def start_process(directory, name, *argv, startup_timeout=30):
    """Run `python *argv` in `directory`, its output in a log file there; return the Server
    once it logs the port it listens on (RuntimeError, with the log, if it does not)."""
    log_path = Path(directory) / f"{name}-{time.monotonic_ns()}.log"
    with open(log_path, "wb") as log_file:
        process = subprocess.Popen([sys.executable, *argv], cwd=directory, stdout=log_file,
                                   stderr=subprocess.STDOUT,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + startup_timeout
    while time.monotonic() < deadline:
        match = LISTENING.search(log_path.read_text(encoding="utf-8", errors="replace"))
        if match:
            port = int(match.group(1)) if match.group(1) else None
            return Server(process, port, log_path)
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}:\n{log_path.read_text()}")
        time.sleep(0.05)
    process.kill()
    process.wait()
    raise RuntimeError(f"{name} did not start:\n{log_path.read_text()}")


def free_port():
    """A TCP port free on loopback now (a host told to listen on it takes it at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_host(directory, config_text, *argv, startup_timeout=30):
    """Start a WSGI host's command (`gunicorn ...`, `waitress-serve ...`; its `{port}`
    filled in) serving museum:app in `directory` with `config_text` as its config, in a
    session of its own, as a service manager starts it; return the Server once the port
    accepts connections."""
    directory = Path(directory)
    (directory / "museum.ini").write_text(config_text, encoding="utf-8")
    port = free_port()
    log_path = directory / f"host-{time.monotonic_ns()}.log"
    environ = {name: value for name, value in os.environ.items()
               if not name.startswith("MUSEUM_")}
    with open(log_path, "wb") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", *(arg.format(port=port) for arg in argv)], cwd=directory,
            stdout=log_file, stderr=subprocess.STDOUT, start_new_session=True,
            env={**environ, "PYTHONPATH": str(ROOT),
                 "MUSEUM_CONFIG": str(directory / "museum.ini")})
    server = Server(process, port, log_path)
    deadline = time.monotonic() + startup_timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server
        except OSError:
            if process.poll() is not None:
                raise RuntimeError(f"{argv[0]} exited with {process.returncode}:\n"
                                   f"{server.log()}") from None
            time.sleep(0.05)
    process.kill()
    process.wait()
    raise RuntimeError(f"{argv[0]} did not start:\n{server.log()}")


@contextmanager
def running_host(directory, config_text, *argv):
    """A started WSGI host (see start_host), stopped when the block ends."""
    with _stopped_at_end(start_host(directory, config_text, *argv)) as server:
        yield server


@contextmanager
def running_server(directory, config_text, *extra_args, db=None):
    """A started server that is stopped (SIGTERM, then SIGKILL) when the block ends."""
    with _stopped_at_end(start_server(directory, config_text, *extra_args, db=db)) as server:
        yield server


@contextmanager
def running_instances(directory, config_text, db, count):
    """`count` servers on database `db`, started at the same moment (their migrations race),
    stopped when the block ends."""
    directories = [Path(directory) / f"instance-{n}" for n in range(count)]
    for each in directories:
        each.mkdir()
    with ThreadPoolExecutor(count) as pool:
        starting = [pool.submit(start_server, each, config_text, db=db) for each in directories]
    started = [future.result() for future in starting if future.exception() is None]
    try:
        if len(started) < count:
            raise next(future.exception() for future in starting if future.exception())
        yield started
    finally:
        for server in started:
            server.stop()


@contextmanager
def running_mock(directory, *extra_args):
    """A started `museum mock` that is stopped (SIGTERM, then SIGKILL) when the block ends."""
    with _stopped_at_end(start_mock(directory, *extra_args)) as server:
        yield server


@contextmanager
def _stopped_at_end(server):
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
