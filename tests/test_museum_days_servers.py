"""The museum's day changes without a restart, on real `museum serve` processes: a day
closed through the API on one instance is seen by another on the same PostgreSQL database
at its next request, and `museum reload` under load from 16 clients drops no request and
serves the new hours from then on; a broken museum.ini at a reload keeps the config in use.
Dates follow the real clock (ticketing.open_days)."""

import json
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from commands import museum_command
from conftest import ADMIN, VISITOR
from serving import running_instances, running_server, wait_until
from ticketing import open_days

CLIENTS = 16
LOAD_SECONDS = 3  # of requests, the reload coming after the first second


def hours_on(server, day):
    """The day's entry in the server's opening hours, or None when it is closed."""
    status, _, data = server.request("GET", f"/v1.1/museum-hours?startDate={day}&limit=1",
                                     headers=VISITOR)
    assert status == 200, (status, data)
    listed = json.loads(data)
    return listed[0] if listed and listed[0]["date"] == day else None


def test_a_day_closed_on_one_instance_is_closed_on_the_other_at_once(
        tmp_path, config_text, postgres_url):
    day = open_days(config_text, 1, skip=2)[0]
    with running_instances(tmp_path, config_text, postgres_url, 2) as (first, second):
        assert hours_on(second, day) is not None
        ticket = {"ticketType": "general", "ticketDate": day, "email": "ada@example.org"}
        sold = json.loads(second.request("POST", "/v1.1/tickets", ticket, VISITOR)[2])
        status, _, data = first.request("PUT", f"/v1.1/museum-hours/{day}",
                                        {"closed": True, "note": "Storm"}, ADMIN)
        assert status == 200, data
        assert [each["ticketId"] for each in json.loads(data)["affectedTickets"]] == [
            sold["ticketId"]]
        # The very next request of the other instance: no cache to wait for.
        assert hours_on(second, day) is None
        status, _, data = second.request("GET", f"/v1.1/availability?startDate={day}"
                                                f"&endDate={day}", headers=VISITOR)
        assert json.loads(data)[0]["open"] is False
        assert second.request("POST", "/v1.1/tickets", ticket, VISITOR)[0] == 400
        assert first.request("DELETE", f"/v1.1/museum-hours/{day}", headers=ADMIN)[0] == 204
        assert hours_on(second, day) is not None


class Load:
    """CLIENTS threads asking the hours of one day until told to stop; every answer's
    status and hours, with when it was asked."""

    def __init__(self, server, day):
        self.server, self.day = server, day
        self.answers = []  # (time asked, status, timeOpen or None)
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def client(self):
        while not self.stop.is_set():
            asked = time.monotonic()
            status, _, data = self.server.request(
                "GET", f"/v1.1/museum-hours?startDate={self.day}&limit=1", headers=VISITOR)
            opens = json.loads(data)[0]["timeOpen"] if status == 200 else None
            with self.lock:
                self.answers.append((asked, status, opens))


def test_reload_under_load_drops_no_request_and_serves_the_new_hours(tmp_path, config_text):
    day = open_days(config_text, 1, skip=2)[0]
    with running_server(tmp_path, config_text) as server:
        server.log_in(VISITOR)
        load = Load(server, day)
        with ThreadPoolExecutor(CLIENTS) as pool:
            clients = [pool.submit(load.client) for _ in range(CLIENTS)]
            time.sleep(1)
            changed = config_text + f"[exceptions]\n{day} = 11:00-12:00\n"
            done = museum_command(tmp_path, changed, "reload", "--db",
                                  str(tmp_path / "museum.sqlite3"))
            assert done.status == 0, done.err
            assert f"(PID {server.process.pid})" in done.out
            wait_until(lambda: "reloaded" in server.log(), 10, what="the reload")
            reloaded = time.monotonic()
            time.sleep(LOAD_SECONDS - 1)
            load.stop.set()
            for each in clients:
                each.result()
        statuses = {status for _, status, _ in load.answers}
        after = {opens for asked, _, opens in load.answers if asked > reloaded}
        assert statuses == {200}, statuses
        assert after == {"11:00"}
        assert len(load.answers) > CLIENTS * 10
        assert hours_on(server, day)["timeClose"] == "12:00"
        assert server.log().count("wrong password") == 0


def test_a_broken_config_at_reload_keeps_the_one_in_use(tmp_path, config_text):
    day = open_days(config_text, 1, skip=2)[0]
    with running_server(tmp_path, config_text) as server:
        before = hours_on(server, day)
        broken = config_text + f"[exceptions]\n{day} = 11:00-10:00\n"
        done = museum_command(tmp_path, broken, "reload", "--db",
                              str(tmp_path / "museum.sqlite3"))
        assert done.status == 2
        assert done.err == (f"museum: {tmp_path / 'museum.ini'}: [exceptions] {day}: "
                            f"'11:00-10:00' closes before it opens")
        os.kill(server.process.pid, signal.SIGHUP)  # as logrotate or systemctl would
        wait_until(lambda: "reload refused" in server.log(), 10, what="the refusal")
        assert "[exceptions] " + day in server.log().split("reload refused")[1]
        assert hours_on(server, day) == before
        assert server.stop() == 0
