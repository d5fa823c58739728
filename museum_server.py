"""Serving the museum service with waitress, through its public API only
(`waitress.create_server` and its documented options): its settings from [server], one
server per database, and a stop that lets the requests under way finish.

Slow clients and request deadlines are the TLS proxy's to stop (docs/nginx.conf reads each
request whole before passing it on); waitress itself only closes connections idle for
[server] channel_timeout. Imported by `museum serve` and `museum mock` only: an app
embedded in another WSGI host needs none of it.
"""

import errno
import logging
import os
import signal
import socket
import struct
import threading
from contextlib import nullcontext

import waitress

import museum_locks
import storage

log = logging.getLogger("museum")


class CannotServe(Exception):
    """Another server already serves the database, or the socket or port to listen on."""


def claim(config):
    """Make this process the one server of the config's database and unix socket, before
    it opens either: `CannotServe` naming the PID of the live server that has them. Serve
    inside the context this returns."""
    path = storage.sqlite_file(config["storage"]["url"])
    held = None
    if path:  # several instances share a PostgreSQL database by design
        try:
            held = museum_locks.claim_database(path)
        except OSError as error:  # its directory is missing or not writable
            raise storage.StorageError(f"{path}: cannot open the database: "
                                       f"{error.strerror}") from None
        except museum_locks.Served as served:
            raise CannotServe(str(served)) from None
    unix_socket = config["server"]["unix_socket"]
    if unix_socket:
        pid = _socket_server(unix_socket)
        if pid:
            raise CannotServe(f"{unix_socket} is already served by another process (PID "
                              f"{pid}); stop it first, or listen elsewhere (--host/--port)")
    return held or nullcontext()


def serving_pid(config):
    """The PID of the `museum serve` that holds the config's sqlite database or listens on
    its unix socket; None when no live one does, and on PostgreSQL over TCP, where nothing
    names it."""
    path = storage.sqlite_file(config["storage"]["url"])
    lock = f"{path}.serve.lock"
    if path and os.path.exists(lock):
        held = museum_locks.try_lock(lock)
        if held is None:  # a live server holds it
            return museum_locks.holder(lock)
        held.close()
    unix_socket = config["server"]["unix_socket"]
    return _socket_server(unix_socket) if unix_socket else None


def _socket_server(path):
    """The PID of the process listening on the unix socket `path`, or None when nobody
    answers there: then waitress replaces the file left behind."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            return None
        except OSError as error:  # not ours to probe, or not a socket
            raise CannotServe(f"{path}: cannot tell whether a server listens there "
                              f"({error.strerror})") from None
        # Linux gives the listener's pid, uid and gid of a unix socket's peer.
        credentials = probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                       struct.calcsize("3i"))
        return struct.unpack("3i", credentials)[0]


def run_server(wsgi_app, server_settings, title, what, reload=None):
    """Serve until SIGTERM or SIGINT, then stop as waitress does: no new request is
    served, those under way finish (for at most 5 s) and send their answers, and those
    still waiting for a thread are closed unanswered (nothing of them was done). On SIGHUP
    call `reload()` (`museum serve`'s re-reading of its config). `CannotServe` when the
    TCP port is taken."""
    settings = waitress_settings(server_settings)
    server = waitress.create_server(wsgi_app, **settings)
    # waitress warns of a task queue on every request that waits for a free thread: under
    # load that is half the requests, and the access log's durations already show it.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    # waitress stops on SystemExit or KeyboardInterrupt raised in its loop; a SIGTERM left
    # to its default would kill the process before the access lines waiting are written.
    signal.signal(signal.SIGTERM, _exit)
    signal.signal(signal.SIGINT, _exit)
    if reload is None:  # the mock: nothing to re-read, and no reason to die of it
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    else:
        _reload_on_sighup(reload)
    log.info("%s listening on %s (%s)", title, _address(settings), what)
    server.run()
    log.info("stopped")
    return 0


def _exit(signum, frame):
    raise SystemExit(0)


def _reload_on_sighup(reload):
    """`museum reload` (and the logrotate configs of earlier versions) send SIGHUP: the
    config is read again. The handler only asks; a thread of its own reloads, where no lock
    the interrupted main thread holds can be in the way, while requests go on."""
    asked = threading.Event()

    def reload_when_asked():
        while True:
            asked.wait()
            asked.clear()
            reload()

    threading.Thread(target=reload_when_asked, name="config-reload", daemon=True).start()
    signal.signal(signal.SIGHUP, lambda signum, frame: asked.set())


def _address(settings):
    if "unix_socket" in settings:
        return f"unix:{settings['unix_socket']}"
    host, port = settings["sockets"][0].getsockname()[:2]
    return f"http://{host}:{port}"


def listening_sockets(host, port):
    """A TCP socket bound to each address `host` resolves to, as waitress's `host` would
    bind, handed to it as its documented `sockets`: so the port a `port = 0` picked is
    known, and a port taken is told apart. `CannotServe` when the port is taken."""
    bound = []
    try:
        for family, kind, proto, _, address in socket.getaddrinfo(
                host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE):
            each = socket.socket(family, kind, proto)
            bound.append(each)
            each.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                each.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            each.bind((address[0], port, *address[2:]))
            port = each.getsockname()[1]  # with `port = 0`, every address on the one picked
    except OSError as error:
        for each in bound:
            each.close()
        if error.errno != errno.EADDRINUSE:
            raise
        raise CannotServe(f"cannot listen on {host} port {port}: another process listens "
                          f"there (find it with: ss -ltnp 'sport = {port}')") from None
    return bound


def waitress_settings(server_settings):
    # The body size is a backstop for memory and disk: the app answers bodies over BODY_LIMIT.
    settings = {name: server_settings[name] for name in
                ("threads", "connection_limit", "channel_timeout", "ident",
                 "max_request_header_size", "max_request_body_size")}
    settings["clear_untrusted_proxy_headers"] = True
    proxy = server_settings["trusted_proxy"]
    if server_settings["unix_socket"]:
        settings["unix_socket"] = server_settings["unix_socket"]
        settings["unix_socket_perms"] = format(server_settings["unix_socket_mode"], "o")
        # waitress gives every peer of a unix socket the address "localhost"; only processes
        # the socket's mode lets in can connect, and the one meant to is the proxy.
        proxy = "localhost"
    else:
        settings["sockets"] = listening_sockets(server_settings["host"], server_settings["port"])
    if proxy:
        settings["trusted_proxy"] = proxy
        settings["trusted_proxy_headers"] = {"x-forwarded-for", "x-forwarded-proto",
                                             "x-forwarded-host"}
    return settings
