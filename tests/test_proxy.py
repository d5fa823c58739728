"""Behind a reverse proxy: `[server] public_url` as the only source of Link and Location
headers, `museum serve` on a unix socket, and docs/nginx.conf run as shipped with Debian's
nginx in front of a real `museum serve` (ports and paths swapped for the test's own): its
limits per address, and its own errors as problem+json."""

import http.client
import json
import os
import re
import shutil
import socket
import ssl
import stat
import subprocess
import sys
from contextlib import contextmanager

import pytest

import museum
from conftest import ADMIN, VISITOR, basic
from serving import ROOT, problem, running_server, wait_until
from ticketing import EVENTS, TICKETS, event_body, open_days, ticket_body

PUBLIC = "https://museum.example.org"
NAME = "museum.example.org"
HOURS = "/v1.1/museum-hours"
FORWARDED = {"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Host": "evil.example",
             "X-Forwarded-Proto": "http"}


# -- public_url ----------------------------------------------------------------------------

@pytest.fixture
def public_client(make_client, config_text):
    """A client of an app whose public URL has a path prefix (a proxy serving it at /museum)."""
    config = museum.parse_config(config_text + f"[server]\npublic_url = {PUBLIC}/museum/\n")
    return make_client(config)


def test_locations_are_built_on_the_public_url(public_client):
    hostile = {"HTTP_HOST": "evil.example:8443"}
    event = public_client.post_json(EVENTS, event_body(1, ["2026-12-05"]), headers=ADMIN,
                                    extra_environ=hostile, status=201)
    assert event.headers["Location"] == f"{PUBLIC}/museum{EVENTS}/{event.json['eventId']}"
    ticket = public_client.post_json(TICKETS, ticket_body(1, "2026-12-05"), headers=VISITOR,
                                     extra_environ=hostile, status=201)
    assert ticket.headers["Location"] == f"{PUBLIC}/museum{TICKETS}/{ticket.json['ticketId']}/qr"


def test_page_links_are_built_on_the_public_url_whatever_host_was_sent(public_client):
    for number in range(3):
        public_client.post_json(EVENTS, event_body(number, ["2026-12-05"]), headers=ADMIN,
                                status=201)
    res = public_client.get(f"{EVENTS}?startDate=2026-12-01&limit=1&page=2",
                            headers=VISITOR, extra_environ={"HTTP_HOST": "evil.example"},
                            status=200)
    assert res.headers["Link"] == (
        f'<{PUBLIC}/museum{EVENTS}?startDate=2026-12-01&limit=1&page=3>; rel="next", '
        f'<{PUBLIC}/museum{EVENTS}?startDate=2026-12-01&limit=1&page=1>; rel="prev"')


def test_without_a_public_url_location_is_a_path(client):
    res = client.post_json(EVENTS, event_body(1, ["2026-12-05"]), headers=ADMIN,
                           extra_environ={"HTTP_HOST": "evil.example"}, status=201)
    assert res.headers["Location"] == f"{EVENTS}/{res.json['eventId']}"


@pytest.mark.parametrize("value", [
    "museum.example.org", "ftp://museum.example.org", "https://", "https://m.example/?a=1",
    "https://m.example/#top", "https://m.example/?"])
def test_a_public_url_that_is_no_base_url_stops_startup(value):
    with pytest.raises(museum.ConfigError, match=r"\[server\] public_url: must be an http"):
        museum.parse_config(f"[server]\npublic_url = {value}\n")


# -- a unix socket -------------------------------------------------------------------------

class UnixConnection(http.client.HTTPConnection):
    """HTTP over a unix socket, as nginx's `server unix:PATH` speaks to the service."""

    def __init__(self, path, timeout=30):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(str(self.socket_path))


def unix_request(path, method, target, headers=None):
    connection = UnixConnection(path)
    try:
        connection.request(method, target, headers=headers or {})
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def test_on_a_unix_socket_the_peer_is_the_proxy(tmp_path, config_text):
    """The socket gets the configured mode; X-Forwarded-For from whoever may connect names
    the client in the access log and the lock-out; SIGTERM stops it cleanly."""
    sock = tmp_path / "museum.sock"
    config = config_text + f"[server]\nunix_socket = {sock}\npublic_url = {PUBLIC}\n"
    with running_server(tmp_path, config) as server:
        assert stat.S_IMODE(sock.stat().st_mode) == 0o660
        assert unix_request(sock, "GET", "/healthz")[0] == 200
        for number in range(10):
            status = unix_request(sock, "GET", HOURS, {**basic("admin", f"guess-{number}"),
                                                       **FORWARDED})[0]
            assert status == 401
        assert unix_request(sock, "GET", HOURS, {**ADMIN, **FORWARDED})[0] == 429
        other_client = {**FORWARDED, "X-Forwarded-For": "203.0.113.8"}
        assert unix_request(sock, "GET", HOURS, {**ADMIN, **other_client})[0] == 200
        assert server.stop() == 0
        log = server.log()
    assert f"listening on unix:{sock}" in log and "stopped" in log
    assert f"203.0.113.7 GET {HOURS} 429" in log and f"203.0.113.8 GET {HOURS} 200" in log


@pytest.mark.parametrize("setting, message", [
    ("unix_socket_mode = 999", r"unix_socket_mode: must be permissions in octal"),
    ("unix_socket_mode = 1777", r"unix_socket_mode: must be permissions in octal"),
    ("unix_socket = /run/museum/museum.sock\ntrusted_proxy = 127.0.0.1",
     r"trusted_proxy: leave it empty with unix_socket"),
])
def test_unix_socket_settings_are_checked(setting, message):
    with pytest.raises(museum.ConfigError, match=message):
        museum.parse_config(f"[server]\n{setting}\n")


def test_demo_passwords_are_refused_on_a_unix_socket(tmp_path):
    """A socket is there for a proxy to publish the service: the shipped demo passwords
    must not go behind it."""
    result = subprocess.run(
        [sys.executable, "-m", "museum_cli", "serve", "--config", str(ROOT / "museum.ini")],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT),
             "MUSEUM_SERVER_UNIX_SOCKET": str(tmp_path / "museum.sock")})
    assert result.returncode == 2, result.stderr
    assert "demo password is still set; refusing to serve on unix_socket" in result.stderr
    assert not (tmp_path / "museum.sock").exists()


# -- docs/nginx.conf with Debian's nginx ---------------------------------------------------

def nginx_binary():
    return shutil.which("nginx", path=f"{os.environ.get('PATH', '')}:/usr/sbin")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def make_certificate(directory):
    """A self-signed certificate for NAME: (certificate path, key path)."""
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1", "-subj", f"/CN={NAME}",
                    "-addext", f"subjectAltName=DNS:{NAME}", "-keyout", str(key),
                    "-out", str(cert)], check=True, capture_output=True)
    return cert, key


def render_nginx(directory, sock, http_port, https_port, cert, key):
    """docs/nginx.conf with the test's ports and paths, inside a main config of its own;
    every swapped text must be in the shipped file."""
    text = (ROOT / "docs" / "nginx.conf").read_text()
    swaps = {"listen 80": f"listen 127.0.0.1:{http_port}",
             "listen 443": f"listen 127.0.0.1:{https_port}",
             "/run/museum/museum.sock": str(sock),
             "/var/log/nginx/museum.log": str(directory / "access.log"),
             f"/etc/letsencrypt/live/{NAME}/fullchain.pem": str(cert),
             f"/etc/letsencrypt/live/{NAME}/privkey.pem": str(key),
             "proxy_read_timeout 30s": "proxy_read_timeout 1s"}
    for old, new in swaps.items():
        assert old in text, old
        text = text.replace(old, new)
    (directory / "museum.conf").write_text(text)
    temp = directory / "temp"
    temp.mkdir()
    # Debian's nginx runs its workers as www-data, a member of the socket's group; here
    # they run as the test's user, who owns the socket (root's would be nobody otherwise).
    # The main part takes the settings the file's comments ask of /etc/nginx/nginx.conf.
    main = f"""
pid {directory}/nginx.pid;
error_log {directory}/error.log;
{"user root;" if os.geteuid() == 0 else ""}
{nginx_main_settings(text)}
http {{
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    access_log {directory}/other.log;
    include {directory}/museum.conf;
}}
"""
    (directory / "nginx.conf").write_text(main)
    return directory / "nginx.conf"


def nginx_main_settings(text):
    """The lines docs/nginx.conf's comments ask for in /etc/nginx/nginx.conf, uncommented."""
    block = re.search(r"cannot set them\), raise\n((?:#   .*\n)+)", text).group(1)
    settings = block.replace("#   ", "")
    assert "worker_connections" in settings and "worker_rlimit_nofile" in settings
    return settings


@contextmanager
def running_nginx(directory, config_path):
    """nginx in the foreground on `config_path`, stopped (SIGTERM) when the block ends."""
    error_log = directory / "error.log"
    process = subprocess.Popen([nginx_binary(), "-p", str(directory), "-c", str(config_path),
                                "-e", str(error_log), "-g", "daemon off;"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: (directory / "nginx.pid").exists() or process.poll() is not None,
                   timeout=10, what="nginx start")
        assert process.poll() is None, error_log.read_text()
        yield process
    finally:
        process.terminate()
        process.wait(timeout=10)


class Visitor(http.client.HTTPSConnection):
    """A browser reaching https://museum.example.org:PORT, whose name leads to 127.0.0.1:
    TLS with that name (SNI) and that Host, and the test certificate as its only authority."""

    def __init__(self, port, cert, server_name=NAME, source=None, timeout=30):
        context = ssl.create_default_context(cafile=str(cert))
        super().__init__(NAME, port, context=context, timeout=timeout)
        self.tls, self.server_name = context, server_name
        self.source = (source, 0) if source else None  # a loopback address to come from

    def connect(self):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout,
                                        source_address=self.source)
        self.sock = self.tls.wrap_socket(sock, server_hostname=self.server_name)


def https_request(port, cert, method, target, body=None, headers=None):
    connection = Visitor(port, cert)
    try:
        payload = json.dumps(body).encode() if body is not None else None
        all_headers = {"Content-Type": "application/json"} if payload else {}
        connection.request(method, target, body=payload, headers={**all_headers,
                                                                  **(headers or {})})
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


@pytest.fixture
def nginx_site(tmp_path, config_text):
    """`museum serve` on a unix socket with docs/security.md's [server] settings, behind
    docs/nginx.conf: (HTTP port, HTTPS port, certificate, museum server, nginx's log)."""
    if nginx_binary() is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx-light); "
                    ".ci/run installs it")
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is not installed, to make a test certificate")
    sock = tmp_path / "museum.sock"
    server_settings = security_md_socket_config().replace("/run/museum/museum.sock", str(sock))
    http_port, https_port = free_port(), free_port()
    cert, key = make_certificate(tmp_path)
    nginx_config = render_nginx(tmp_path, sock, http_port, https_port, cert, key)
    with running_server(tmp_path, config_text + server_settings) as server, \
            running_nginx(tmp_path, nginx_config):
        yield http_port, https_port, cert, server, tmp_path / "access.log"


def security_md_socket_config():
    """The `[server]` example of docs/security.md for nginx on the same machine."""
    text = (ROOT / "docs" / "security.md").read_text()
    block = re.search(r"```ini\n(\[server\]\nunix_socket = .*?)```", text, re.S).group(1)
    assert f"public_url = {PUBLIC}\n" in block
    return block


def test_the_api_works_through_nginx_with_public_links(nginx_site):
    _, https_port, cert, _, _ = nginx_site
    status, headers, body = https_request(https_port, cert, "GET", "/healthz")
    assert (status, json.loads(body)) == (200, {**museum.Health.ANSWER,
                                                   "outbox": {"failed": 0, "oldest": None}})
    assert headers["Server"] == "nginx"  # no version
    assert headers["Strict-Transport-Security"] == "max-age=31536000"
    days = open_days("", 1)
    for number in range(2):
        status, headers, body = https_request(https_port, cert, "POST", EVENTS,
                                              event_body(number, days), {**ADMIN, **FORWARDED})
        assert status == 201, body
        assert headers["Location"] == f"{PUBLIC}{EVENTS}/{json.loads(body)['eventId']}"
    status, headers, _ = https_request(https_port, cert, "GET", f"{EVENTS}?limit=1",
                                       headers={**VISITOR, **FORWARDED})
    assert status == 200
    assert headers["Link"] == f'<{PUBLIC}{EVENTS}?limit=1&page=2>; rel="next"'
    status, headers, _ = https_request(https_port, cert, "POST", EVENTS,
                                       {"name": "x" * 70_000}, ADMIN)
    assert status == 413 and headers["Server"] == "nginx"


def test_nginx_redirects_http_and_refuses_other_host_names(nginx_site):
    http_port, https_port, cert, _, _ = nginx_site
    plain = http.client.HTTPConnection("127.0.0.1", http_port, timeout=10)
    plain.request("GET", f"{HOURS}?startDate=2026-12-01", headers={"Host": NAME})
    response = plain.getresponse()
    assert response.status == 301
    assert response.headers["Location"] == f"{PUBLIC}{HOURS}?startDate=2026-12-01"
    plain.close()
    for host in ("evil.example", "127.0.0.1"):
        plain = http.client.HTTPConnection("127.0.0.1", http_port, timeout=10)
        plain.request("GET", HOURS, headers={"Host": host})
        with pytest.raises(http.client.RemoteDisconnected):  # 444: closed, unanswered
            plain.getresponse()
        plain.close()
    with pytest.raises(ssl.SSLError):  # TLS for another name: no certificate shown
        Visitor(https_port, cert, server_name="evil.example").connect()
    connection = Visitor(https_port, cert)
    connection.request("GET", HOURS, headers={**VISITOR, "Host": "evil.example"})
    with pytest.raises(http.client.RemoteDisconnected):
        connection.getresponse()
    connection.close()


def test_through_nginx_a_forged_forwarded_for_changes_nothing(nginx_site):
    """A client's own X-Forwarded-For is replaced by its address: it can neither get another
    address locked out nor escape its own lock-out; nginx's log keeps no user name, no URL."""
    _, https_port, cert, server, nginx_log = nginx_site
    email = "ada@example.org"
    for number in range(10):
        forged = {**basic("admin", f"{email}-{number}"), "X-Forwarded-For": f"192.0.2.{number}"}
        status = https_request(https_port, cert, "GET", f"{HOURS}?email={email}&n={number}",
                               headers=forged)[0]
        assert status == 401
    assert https_request(https_port, cert, "GET", HOURS, headers=ADMIN)[0] == 429
    museum_log = server.log()
    assert f"127.0.0.1 GET {HOURS} 429" in museum_log
    assert "192.0.2." not in museum_log and email not in museum_log

    def eleven_lines():  # nginx logs a request after answering it: the last may be on its way
        text = nginx_log.read_text()
        return text if len(text.splitlines()) >= 11 else None

    access = wait_until(eleven_lines, timeout=5, what="nginx's 11 access lines")
    lines = access.splitlines()
    assert len(lines) == 11 and all(line.startswith("127.0.0.1 [") for line in lines), access
    # Each ends with nginx's request id, which the service is sent as X-Request-Id.
    assert len({re.fullmatch(r".* ([0-9a-f]{32})", line).group(1) for line in lines}) == 11
    for leak in (email, "example.org", "email", "?", HOURS, "192.0.2.", "admin"):
        assert leak not in access


def test_nginx_answers_its_own_errors_as_problems(nginx_site):
    _, https_port, cert, server, _ = nginx_site
    status, headers, body = https_request(https_port, cert, "POST", EVENTS,
                                          {"name": "x" * 70_000}, ADMIN)
    assert problem(status, dict(headers), body)["status"] == 413

    # A burst from one address past the limit (100 at once, then 50 a second).
    connection = Visitor(https_port, cert)
    try:
        for _ in range(1000):
            connection.request("GET", "/healthz")
            response = connection.getresponse()
            body = response.read()
            if response.status != 200:
                break
    finally:
        connection.close()
    assert problem(response.status, dict(response.headers), body)["status"] == 429
    assert response.headers["Retry-After"] == "1"

    assert server.stop() == 0
    status, headers, body = https_request(https_port, cert, "GET", "/healthz")
    assert problem(status, dict(headers), body)["status"] == 502

    # A service that takes the connection and never answers: nginx gives up after
    # proxy_read_timeout (1 s in this test's copy of the file).
    sock = nginx_site[4].parent / "museum.sock"
    sock.unlink(missing_ok=True)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stuck:
        stuck.bind(str(sock))
        stuck.listen(8)
        status, headers, body = https_request(https_port, cert, "GET", "/healthz")
    assert problem(status, dict(headers), body)["status"] == 504
