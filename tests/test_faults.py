"""The database's disk fills up, turns read-only or disappears while a real server runs.

Writes then answer a 503 problem with Retry-After at once (no 500, no hang), reads keep
working where the file is still readable, `GET /healthz` says 503 while the database cannot
be reached or written, and everything recovers by itself, without a restart, when the cause
is gone.
Nothing acknowledged is lost and nothing refused is stored.

The faults are real: a 2 MiB tmpfs filled to the last byte (ENOSPC), the immutable flag on
the database and its WAL (EPERM on every write, as a read-only mount gives: root ignores
file modes, and a mount cannot be remounted read-only while files on it are open for
writing), and the database's directory moved away (a volume gone). Each needs root on
Linux and skips, saying why, where that is not allowed.
"""

import json
import os
import shutil
import subprocess
import uuid

import pytest

from conftest import ADMIN, VISITOR
from serving import problem, running_server, wait_until
from ticketing import EVENTS, PNG, TICKETS, check_store, event_body, open_days, ticket_body

FAST = 10  # seconds without a byte of the answer that count as a hang
RECOVERY = 20  # seconds allowed for the service to notice the cause is gone


def bounded_request(server, method, path, body=None, headers=ADMIN):
    """A request that fails the test if the server sends nothing for FAST seconds."""
    return server.request(method, path, body, headers, timeout=FAST)


def assert_unavailable(status, headers, data):
    assert status == 503, (status, data)
    problem(status, headers, data)
    assert int(headers["Retry-After"]) > 0


class Scenario:
    """A server with a few records, then a fault: tracks what was acknowledged and refused."""

    def __init__(self, server, db_path, config_text):
        self.server = server
        self.db_path = db_path
        self.days = open_days(config_text, 6)
        self.events = {}  # eventId -> acknowledged event
        self.tickets = {}  # ticketId -> (body, code)
        self.refused_names = []
        self.refused_keys = []

    def create_event(self, description_length=20):
        number = len(self.events) + len(self.refused_names)
        body = event_body(number, self.days[:3], eventDescription="x" * description_length)
        status, headers, data = bounded_request(self.server, "POST", EVENTS, body)
        if status == 201:
            self.events[json.loads(data)["eventId"]] = json.loads(data)
        else:
            assert_unavailable(status, headers, data)
            self.refused_names.append(body["name"])
        return status

    def buy_ticket(self):
        number = len(self.tickets) + len(self.refused_keys)
        body = ticket_body(number, self.days[number % len(self.days)])
        key = f"fault-{uuid.uuid4()}"
        status, headers, data = bounded_request(self.server, "POST", TICKETS, body,
                                              {**VISITOR, "Idempotency-Key": key})
        if status == 201:
            answer = json.loads(data)
            self.tickets[answer["ticketId"]] = (body, answer["confirmationCode"])
        else:
            assert_unavailable(status, headers, data)
            self.refused_keys.append(key)
        return status

    def refused_writes(self):
        """Every kind of write, each of which must be refused with 503."""
        event_id = next(iter(self.events))
        assert self.create_event() == 503
        assert self.buy_ticket() == 503
        assert_unavailable(*bounded_request(self.server, "PATCH", f"{EVENTS}/{event_id}",
                                          {"price": 99}))
        assert_unavailable(*bounded_request(self.server, "DELETE", f"{EVENTS}/{event_id}"))

    def reads_are_committed_or_unavailable(self):
        """A worker thread whose connection is open still reads the moved file; one that
        would open a connection is refused (sqlite would create an empty file)."""
        for event_id, event in self.events.items():
            status, headers, data = bounded_request(self.server, "GET", f"{EVENTS}/{event_id}",
                                                  headers=VISITOR)
            if status != 200:
                assert_unavailable(status, headers, data)
            else:
                assert json.loads(data) == event

    def reads_work(self, health=200):
        """Reads answer; health is `health` (503 while writes fail)."""
        status, _, data = bounded_request(self.server, "GET", f"{EVENTS}?startDate={self.days[0]}"
                                        f"&limit=30", headers=VISITOR)
        assert status == 200 and {event["eventId"] for event in json.loads(data)} == set(
            self.events)
        for event_id, event in self.events.items():
            status, _, data = bounded_request(self.server, "GET", f"{EVENTS}/{event_id}",
                                            headers=VISITOR)
            assert (status, json.loads(data)) == (200, event)
        ticket_id = next(iter(self.tickets))
        status, _, data = bounded_request(self.server, "GET", f"{TICKETS}/{ticket_id}/qr",
                                        headers=VISITOR)
        assert status == 200 and data.startswith(PNG)
        status, headers, data = bounded_request(self.server, "GET", "/healthz", headers={})
        if health == 503:
            assert_unavailable(status, headers, data)
        else:
            assert status == 200, data

    def recovers(self):
        """Writes succeed again without a restart (polled: the first may still fail)."""
        wait_until(lambda: self.create_event() == 201, RECOVERY, 0.2, "a write after recovery")
        for _ in range(8):  # then each of the server's threads writes
            assert self.buy_ticket() == 201
            assert self.create_event() == 201

    def summary(self, fault):
        return (f"{fault}: {len(self.refused_names) + len(self.refused_keys)} creations and "
                f"purchases refused with 503 (plus patches and cancels), "
                f"{len(self.events) + len(self.tickets)} acknowledged, 0 lost")

    def nothing_lost_nothing_extra(self):
        events, tickets = check_store(self.db_path)
        assert {event_id: (event, False) for event_id, event in self.events.items()} == events
        assert self.tickets == tickets
        log = self.server.log()
        assert "Traceback" not in log and " 500 " not in log


@pytest.fixture
def tiny_disk(tmp_path):
    """A 2 MiB tmpfs mounted for this test only."""
    mountpoint = tmp_path / "disk"
    mountpoint.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0755", "tmpfs",
                              str(mountpoint)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root with mount permission): "
                    f"{mounted.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        if subprocess.run(["umount", str(mountpoint)], capture_output=True).returncode:
            subprocess.run(["umount", "-l", str(mountpoint)], check=True)


def fill(directory):
    """Write a filler file until the file system has no byte left; return its path."""
    path = directory / "filler"
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(descriptor, b"\0" * 4096)
    except OSError as error:
        assert error.errno == 28, error  # ENOSPC
    try:
        while True:
            os.write(descriptor, b"\0")
    except OSError:
        pass
    finally:
        os.close(descriptor)
    return path


@pytest.mark.slow
def test_a_full_disk_refuses_writes_with_503_keeps_reads_and_recovers(
        tmp_path, tiny_disk, config_text):
    db_path = str(tiny_disk / "museum.sqlite3")
    with running_server(tmp_path, config_text, "--db", db_path) as server:
        scenario = Scenario(server, db_path, config_text)
        for _ in range(3):
            assert scenario.create_event() == 201
            assert scenario.buy_ticket() == 201
        filler = fill(tiny_disk)
        # The WAL may still have room for a write or two; then every write is refused.
        wait_until(lambda: scenario.create_event(5000) == 503, 30, 0,
                   "a refused write on the full disk")
        for _ in range(3):
            scenario.refused_writes()
        scenario.reads_work(health=503)
        filler.unlink()
        scenario.recovers()
        scenario.reads_work()
        scenario.nothing_lost_nothing_extra()
    print(scenario.summary("full disk"))


def immutable_flag_works(directory):
    """Whether `chattr +i` here makes writes to an already open file fail (ext4 does)."""
    probe = directory / "probe"
    with open(probe, "wb", buffering=0) as file:
        if subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode:
            return False
        try:
            file.write(b"x")
            return False
        except PermissionError:
            return True
        finally:
            subprocess.run(["chattr", "-i", str(probe)], check=True)


@pytest.fixture
def read_only(tmp_path):
    """`make(paths)` sets the immutable flag on `paths`, `undo()` clears it (also at the end)."""
    if shutil.which("chattr") is None or not immutable_flag_works(tmp_path):
        pytest.skip("needs root and a file system whose immutable flag (chattr +i) also stops "
                    "writes to open files, such as ext4")
    flagged = []

    class ReadOnly:
        @staticmethod
        def make(paths):
            subprocess.run(["chattr", "+i", *map(str, paths)], check=True)
            flagged.extend(paths)

        @staticmethod
        def undo():
            subprocess.run(["chattr", "-i", *map(str, flagged)], check=True)
            flagged.clear()

    yield ReadOnly
    if flagged:
        ReadOnly.undo()


@pytest.mark.slow
def test_a_read_only_database_refuses_writes_with_503_keeps_reads_and_recovers(
        tmp_path, read_only, config_text):
    db_path = str(tmp_path / "museum.sqlite3")
    with running_server(tmp_path, config_text) as server:
        scenario = Scenario(server, db_path, config_text)
        for _ in range(3):
            assert scenario.create_event() == 201
            assert scenario.buy_ticket() == 201
        # The -shm file is shared memory, not data: sqlite maps it, and it stays writable.
        read_only.make([db_path, db_path + "-wal"])
        for _ in range(3):
            scenario.refused_writes()
            scenario.reads_work(health=503)  # also opens connections while read-only
        read_only.undo()
        scenario.recovers()
        scenario.reads_work()
        scenario.nothing_lost_nothing_extra()
    print(scenario.summary("read-only"))


@pytest.mark.slow
def test_health_is_503_while_the_database_is_gone_and_200_when_it_is_back(
        tmp_path, config_text):
    volume = tmp_path / "volume"
    volume.mkdir()
    db_path = str(volume / "museum.sqlite3")
    with running_server(tmp_path, config_text, "--db", db_path) as server:
        scenario = Scenario(server, db_path, config_text)
        assert scenario.create_event() == 201 and scenario.buy_ticket() == 201
        assert server.request("GET", "/healthz")[0] == 200

        volume.rename(tmp_path / "elsewhere")  # the volume is gone ...
        volume.mkdir()  # ... and an empty mount point is left in its place
        status, headers, data = bounded_request(server, "GET", "/healthz", headers={})
        assert_unavailable(status, headers, data)
        scenario.refused_writes()
        scenario.reads_are_committed_or_unavailable()
        assert os.listdir(volume) == [], "no new, empty database was created in its place"

        volume.rmdir()
        (tmp_path / "elsewhere").rename(volume)
        wait_until(lambda: server.request("GET", "/healthz")[0] == 200, RECOVERY, 0.1,
                   "health 200 again")
        scenario.recovers()
        scenario.reads_work()
        scenario.nothing_lost_nothing_extra()
    print(scenario.summary("database gone"))


def test_a_damaged_database_file_answers_503_not_500_and_recovers(make_client, config,
                                                                   store, db_path):
    """sqlite reports a file that is not (or no longer) a database as DatabaseError, not
    OperationalError: that too is the database being unavailable. The connections that met
    it are dropped, so the service works again once the file is repaired."""
    client = make_client(config)
    event = client.post_json(EVENTS, event_body(1, ["2026-12-05"]), headers=ADMIN).json
    store.close()  # the next requests open fresh connections, as after a restart
    with open(db_path, "r+b") as file:
        header = file.read(100)
        file.seek(0)
        file.write(b"not a database, not at all. " * 3 + b"-" * 16)
    try:
        for path, headers in [("/healthz", {}), (f"{EVENTS}/{event['eventId']}", ADMIN)]:
            response = client.get(path, headers=headers, status=503)
            assert_unavailable(response.status_int, response.headers, response.body)
    finally:
        with open(db_path, "r+b") as file:
            file.write(header)
    client.get("/healthz", status=200)
    assert client.get(f"{EVENTS}/{event['eventId']}", headers=ADMIN, status=200).json == event
