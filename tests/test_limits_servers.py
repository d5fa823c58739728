"""A genuine ticket is always decided, on real `museum serve` processes: junk
scans and an animated QR (a stream of codes that are no tickets) freeze no gate, and the
typed-code limit and a visitor credential's purchases per hour hold for two instances on one
PostgreSQL database together."""

import json
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

import museum_door
from conftest import ADMIN, GATE, VISITOR
from serving import problem, running_instances, running_server

SECRET = "door-secret-of-the-limits-tests-0123456789"
ADMISSIONS = "/v1.1/admissions"
LIMIT = museum_door.TypedCodeLimit.LIMIT
# What a camera reads that is no ticket: links, a Wi-Fi code, a misread, someone's contact.
JUNK = ["https://example.org/menu", "WIFI:S:Museum;T:WPA;P:guest;;", "MUSEUM1:truncat",
        "MECARD:N:Lovelace,Ada;TEL:5550100;;", "4006381333931", "ticket-general-zzzzzz-zzzzz"]


def today():
    return datetime.now(timezone.utc).date().isoformat()


def sell(server):
    """A ticket for an event today (any hour of the day, any weekday): (QR text, code)."""
    event = {"name": "Late tour", "location": "Hall", "eventDescription": "Torches.",
             "dates": [today()], "price": 5}
    status, _, answer = server.request("POST", "/v1.1/special-events", event, ADMIN)
    assert status == 201, answer
    status, _, answer = server.request("POST", "/v1.1/tickets", {
        "ticketType": "event", "eventId": json.loads(answer)["eventId"],
        "ticketDate": today(), "email": "ada@example.org"}, ADMIN)
    assert status == 201, answer
    ticket = json.loads(answer)
    return (museum_door.qr_text(SECRET, ticket["ticketId"], ticket["confirmationCode"]),
            ticket["confirmationCode"])


def scan(server, text, headers=GATE):
    status, headers, data = server.request("POST", ADMISSIONS, {"code": text}, headers)
    return status, json.loads(data)


def type_code(server, code, headers=GATE):
    status, headers, data = server.request("POST", ADMISSIONS, {"confirmationCode": code},
                                           headers)
    return status, json.loads(data)


def config(config_text, auth=""):
    return f"{config_text}[tickets]\nqr_secret = {SECRET}\n[auth]\n{auth}"


def test_31_junk_scans_then_a_genuine_qr_is_admitted(tmp_path, config_text):
    with running_server(tmp_path, config(config_text)) as server:
        server.log_in(GATE, ADMIN)
        genuine, typed = sell(server), sell(server)
        outcomes = [scan(server, f"{JUNK[number % len(JUNK)]}{number}")
                    for number in range(31)]
        assert {(status, body["result"]) for status, body in outcomes} == {
            (422, "unreadable")}
        status, body = scan(server, genuine[0])
        assert (status, body["result"]) == (201, "admitted")
        status, body = type_code(server, typed[1])
        assert (status, body["result"]) == (201, "admitted")


def test_an_animated_qr_freezes_nothing(tmp_path, config_text):
    """100 different codes that are no ticket, as fast as one scanner sends them (an
    animated QR on a visitor's phone changes some 10 times a second): some junk, some shaped
    like a ticket's QR text but not signed by this museum. None is refused with 429, and a
    genuine QR and a genuine typed code are admitted right after."""
    with running_server(tmp_path, config(config_text)) as server:
        server.log_in(GATE, ADMIN)
        genuine, typed = sell(server), sell(server)
        forged_ticket = genuine[0].split(":")[1]
        frames = [f"{JUNK[number % len(JUNK)]}#{number}" if number % 2 else
                  f"MUSEUM1:{forged_ticket}:ticket-general-{number:06x}-00000:{'0' * 20}"
                  for number in range(100)]
        connection = server.connection()
        try:  # one connection, as the scanner page keeps one
            answered = []
            for frame in frames:
                connection.request("POST", ADMISSIONS, json.dumps({"code": frame}),
                                   {**GATE, "Content-Type": "application/json"})
                response = connection.getresponse()
                answered.append((response.status, json.loads(response.read())["result"]))
        finally:
            connection.close()
        assert set(answered) == {(422, "unreadable"), (422, "forged")}
        status, body = scan(server, genuine[0])
        assert (status, body["result"]) == (201, "admitted")
        status, body = type_code(server, typed[1])
        assert (status, body["result"]) == (201, "admitted")


def test_two_instances_enforce_one_typed_code_limit(tmp_path, config_text, postgres_url):
    with running_instances(tmp_path, config(config_text), postgres_url, 2) as servers:
        for server in servers:
            server.log_in(GATE, ADMIN)
        genuine, typed = sell(servers[0]), sell(servers[1])
        unknown = [type_code(servers[number % 2], f"ticket-event-{number:06x}-00000")[0]
                   for number in range(LIMIT)]
        assert unknown == [404] * LIMIT
        status, headers, data = servers[1].request(
            "POST", ADMISSIONS, {"confirmationCode": "ticket-event-ffffff-00000"}, GATE)
        assert problem(status, headers, data)["status"] == 429
        assert 0 < int(headers["Retry-After"]) <= museum_door.TypedCodeLimit.WINDOW
        # Refused on both: one limit. A QR text is decided all the same, and another user
        # (device) has a limit of its own.
        assert [type_code(server, typed[1])[0] for server in servers] == [429, 429]
        status, body = scan(servers[0], genuine[0])
        assert (status, body["result"]) == (201, "admitted")
        status, body = type_code(servers[0], typed[1], ADMIN)
        assert (status, body["result"]) == (201, "admitted")


def test_two_instances_enforce_one_purchase_limit(tmp_path, config_text, postgres_url):
    """16 purchases at once by one visitor credential, over two instances, with a limit of
    5 an hour: exactly 5 sold, every other one 429 with Retry-After."""
    auth = "visitor_tickets_per_hour = 5\n"
    with running_instances(tmp_path, config(config_text, auth), postgres_url, 2) as servers:
        for server in servers:
            server.log_in(VISITOR)
        purchase = {"ticketType": "event", "ticketDate": today(), "email": "ada@example.org"}
        _, _, answer = servers[0].request("POST", "/v1.1/special-events", {
            "name": "Late tour", "location": "Hall", "eventDescription": "Torches.",
            "dates": [today()], "price": 5}, ADMIN)
        purchase["eventId"] = json.loads(answer)["eventId"]

        def buy(number):
            status, headers, _ = servers[number % 2].request("POST", "/v1.1/tickets",
                                                             purchase, VISITOR)
            return status, headers.get("Retry-After")

        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(buy, range(16)))
    assert sorted(status for status, _ in answers) == [201] * 5 + [429] * 11
    assert all(0 < int(retry) <= 3600 for status, retry in answers if status == 429)
