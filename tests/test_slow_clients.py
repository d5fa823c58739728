"""Slow clients against a real `museum serve` on 127.0.0.1: a request must arrive whole
within [server] request_timeout of its first byte (or of connecting), and within a second
while every connection slot is taken, when idle connections give way too; so connections
trickling bytes, or kept open doing nothing, cannot hold the slots and shut out a health
probe."""

import json
import socket
import threading
import time
from contextlib import contextmanager

import pytest

import museum
from serving import running_server, wait_until

HEALTHY = json.loads(museum.Health.ANSWER)

TIMEOUT = 2  # a short [server] request_timeout, so that a test of it finishes quickly
SLOW_CONFIG = f"[server]\nrequest_timeout = {TIMEOUT}\n"
ATTACK_SECONDS = 90  # the longest the slow clients keep at it, whatever happens
TRICKLE_EVERY = 0.5  # seconds between two bytes of each slow client


def connect(server):
    return socket.create_connection(("127.0.0.1", server.port), timeout=5)


# What a slow client sends when it connects, then every TRICKLE_EVERY seconds.
SLOW_CLIENTS = {
    "trickling": (b"GET /healthz HTTP/1.1\r\n", b"x"),  # a head that never ends
    "idle": (b"GET /healthz HTTP/1.1\r\nHost: museum\r\n\r\n", b""),  # one request, then kept
}


def closed_by_server(client):
    """Whether the server closed `client` (anything it answered is read and dropped)."""
    try:
        while client.recv(65536, socket.MSG_DONTWAIT):
            pass
        return True
    except BlockingIOError:
        return False
    except OSError:
        return True


@contextmanager
def slow_clients(server, count, kind):
    """`count` connections of the `kind` in SLOW_CLIENTS; each one the server closes is
    opened again at once. Ends with the block, or after ATTACK_SECONDS. Yields the count of
    connections the server closed so far (a list of one number, updated as it goes)."""
    first, then = SLOW_CLIENTS[kind]
    stop = threading.Event()
    closed = [0]

    def opened():
        client = connect(server)
        client.sendall(first)
        return client

    def sent(client):
        try:
            client.sendall(then)
            return True
        except OSError:
            return False

    def attack():
        clients = []
        deadline = time.monotonic() + ATTACK_SECONDS
        try:
            clients.extend(opened() for _ in range(count))
            while not stop.is_set() and time.monotonic() < deadline:
                for index, client in enumerate(clients):
                    if closed_by_server(client) or not sent(client):
                        client.close()  # and come back at once
                        closed[0] += 1
                        clients[index] = opened()
                stop.wait(TRICKLE_EVERY)
        except OSError:
            pass  # the server is gone: the test is over
        finally:
            for client in clients:
                client.close()

    attacker = threading.Thread(target=attack, daemon=True)
    attacker.start()
    try:
        yield closed
    finally:
        stop.set()
        attacker.join(timeout=30)


@pytest.mark.parametrize("kind", SLOW_CLIENTS)
def test_two_hundred_slow_connections_do_not_stop_a_health_probe(tmp_path, kind):
    # The default request_timeout; waitress's idle timeout long enough that only the
    # service's own rules can let the probe in within its minute.
    with running_server(tmp_path, "[server]\nchannel_timeout = 600\n") as server:
        with slow_clients(server, 200, kind) as closed:
            # Every connection slot is taken before the probe knocks.
            wait_until(lambda: "reached the connection limit" in server.log(), timeout=30,
                       what="the connection limit being reached")
            status, _, body = server.request("GET", "/healthz", timeout=60)
            assert (status, json.loads(body)) == (200, HEALTHY)
            assert closed[0] > 0  # the probe got in because slow clients were cut off


def test_a_request_still_arriving_after_the_timeout_is_cut_off(tmp_path):
    with running_server(tmp_path, SLOW_CONFIG) as server:
        silent = connect(server)  # says nothing at all
        slow = connect(server)
        slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: museum\r\n")

        def cut_off(client, keep_sending):
            try:
                if keep_sending:
                    client.sendall(b"X")
                client.settimeout(TRICKLE_EVERY)
                return client.recv(1024) == b""  # closed by the server, unanswered
            except TimeoutError:
                return False
            except ConnectionResetError:
                return True

        wait_until(lambda: cut_off(slow, keep_sending=True), timeout=30,
                   what="the trickling request being cut off")
        wait_until(lambda: cut_off(silent, keep_sending=False), timeout=30,
                   what="the silent connection being cut off")
        silent.close()
        slow.close()
        # A request that arrives in time is answered as ever, on a connection kept alive.
        connection = server.connection()
        try:
            for _ in range(2):
                connection.request("GET", "/healthz")
                response = connection.getresponse()
                assert (response.status, json.loads(response.read())) == (200, HEALTHY)
        finally:
            connection.close()
