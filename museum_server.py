"""Serving the museum service with waitress: its settings from [server], a deadline for
each request to arrive, and a stop that answers every request already received.

Imported by `museum serve` and `museum mock` only: an app embedded in another WSGI host
needs none of it.
"""

import errno
import logging
import os
import signal
import socket
import struct
import threading
import time
from contextlib import nullcontext

import waitress
from waitress import wasyncore
from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer

import museum_locks
import storage

log = logging.getLogger("museum")

DRAIN_SECONDS = 10
LOOP_SECONDS = 0.2  # how soon the server loop notices a stop signal; and a late request
# Seconds a request may take to arrive, and a connection may stay idle between requests,
# while every connection slot is taken: others wait to be accepted, and a client that does
# not say what it wants within a second gives way. (A browser sends a request's head in the
# first packet after connecting, and opens a new connection when its idle one was closed.)
CROWDED_TIMEOUT = 1


class DeadlineChannel(HTTPChannel):
    """A waitress connection whose requests must arrive in time: all of a request, head and
    body, within [server] request_timeout seconds of its first byte (for a connection's first
    request, of connecting). waitress's own channel_timeout counts from the latest byte, so a
    client trickling a byte every few seconds held its connection, and one of the
    connection_limit slots, for ever: enough of them and no one else was accepted."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.request_started = time.monotonic()  # None while no request is partly received

    def received(self, data):
        if data and self.request_started is None:
            self.request_started = time.monotonic()
        handled = super().received(data)
        if self.request is None:  # every request begun has arrived whole
            self.request_started = None
        return handled

    def late(self, now, timeout):
        """Whether a request still arriving began more than `timeout` seconds ago (a request
        being answered is not cut off: `requests` holds it)."""
        return (self.request_started is not None and not self.requests
                and now - self.request_started > timeout)

    def idle(self, timeout):
        """Whether the connection waits for a next request, with nothing left to send, and
        was silent for more than `timeout` seconds (waitress's channel_timeout rule)."""
        return (self.request_started is None and not self.requests
                and not self.total_outbufs_len and time.time() - self.last_activity > timeout)


def close_late_channels(sockets, timeout):
    """Close every connection whose request has not arrived within `timeout` seconds; while
    the connection limit is reached, within CROWDED_TIMEOUT, and idle ones too. As waitress
    closes idle connections: the next turn of the loop closes them."""
    crowded = any(listener.in_connection_overflow for listener in _listeners(sockets))
    if crowded:
        timeout = min(timeout, CROWDED_TIMEOUT)
    now = time.monotonic()
    for each in list(sockets.values()):
        if isinstance(each, DeadlineChannel) and (
                each.late(now, timeout) or (crowded and each.idle(CROWDED_TIMEOUT))):
            each.will_close = True


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
    """Serve until SIGTERM or SIGINT, then stop as `drain` describes; on SIGHUP call
    `reload()` (`museum serve`'s re-reading of its config). `CannotServe` when the TCP
    port is taken."""
    sockets = {}  # waitress's socket map: the listening sockets and every connection
    try:
        server = waitress.create_server(wsgi_app, map=sockets,
                                        **waitress_settings(server_settings))
    except OSError as error:
        if error.errno != errno.EADDRINUSE:
            raise
        raise CannotServe(f"cannot listen on {server_settings['host']} port "
                          f"{server_settings['port']}: another process listens there "
                          f"(find it with: ss -ltnp 'sport = {server_settings['port']}')") \
            from None
    for listener in _listeners(sockets):  # one per address the host name resolves to
        listener.channel_class = DeadlineChannel
    # waitress warns of a task queue on every request that waits for a free thread: under
    # load that is half the requests, and the access log's durations already show it.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    stopping, reloading = threading.Event(), threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda signum, frame: stopping.set())
    # `museum reload` (and the logrotate configs of earlier versions) send SIGHUP: the config
    # is read again. The handler only asks; the loop reloads, where no lock can be held, and
    # requests go on in the worker threads. (The access log follows a moved file by itself.)
    signal.signal(signal.SIGHUP, lambda signum, frame: reloading.set())
    log.info("%s listening on %s (%s)", title, _address(server), what)
    # waitress's own run() loop, in turns short enough to notice the signals. (Its way,
    # SystemExit out of the loop, drops the requests still queued unanswered.)
    next_check = 0
    while not stopping.is_set():
        wasyncore.loop(timeout=LOOP_SECONDS, map=sockets, count=1)
        if time.monotonic() >= next_check:
            close_late_channels(sockets, server_settings["request_timeout"])
            next_check = time.monotonic() + LOOP_SECONDS
        if reloading.is_set():
            reloading.clear()
            if reload is not None:
                reload()
    drain(sockets)
    log.info("stopped")
    return 0


def drain(sockets, seconds=DRAIN_SECONDS):
    """Stop accepting connections, then go on serving until every request received is
    answered and its answer sent, for at most `seconds`; then stop the worker threads."""
    listeners = _listeners(sockets)
    for listener in listeners:
        # The plain socket close: waitress's own also closes the trigger by which the
        # worker threads wake this loop to send their answers.
        wasyncore.dispatcher.close(listener)
    log.info("stopping: answering the requests under way (at most %d s)", seconds)
    deadline = time.monotonic() + seconds
    while _answering(sockets) and time.monotonic() < deadline:
        wasyncore.loop(timeout=LOOP_SECONDS, map=sockets, count=1)
    listeners[0].task_dispatcher.shutdown(timeout=1)


def _listeners(sockets):
    return [each for each in list(sockets.values()) if isinstance(each, BaseWSGIServer)]


def _address(server):
    if server.effective_host == "unix":  # waitress's name for a unix socket's family
        return f"unix:{server.effective_port}"
    return f"http://{server.effective_host}:{server.effective_port}"


def _answering(sockets):
    return any(isinstance(each, HTTPChannel) and (each.requests or each.total_outbufs_len)
               for each in list(sockets.values()))


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
        settings.update(host=server_settings["host"], port=server_settings["port"])
    if proxy:
        settings["trusted_proxy"] = proxy
        settings["trusted_proxy_headers"] = {"x-forwarded-for", "x-forwarded-proto",
                                             "x-forwarded-host"}
    return settings
