"""Property-based fuzzing of every endpoint (hypothesis, through WebTest).

Each endpoint gets thousands of requests built from arbitrary JSON values, almost-valid
records with odd fields, raw bytes, deeply nested JSON, huge numbers, long strings, odd
Unicode (NUL, lone surrogates as JSON escapes, RTL and zero-width marks, combining marks,
astral characters), arbitrary query strings and arbitrary path segments (any byte, as
waitress hands them on), under either role. The answer is always a 2xx or a 4xx
application/problem+json, never a 5xx; and after fuzzed writes of every kind, the store holds
only records that pass the service's validation again (`ticketing.check_store`).

Runs are reproducible (`derandomize=True`): the same examples on every run.
`MUSEUM_FUZZ_EXAMPLES` sets the examples per endpoint (default 2000, as in CI).
"""

import http.cookiejar
import io
import json
import os
import uuid
from urllib.parse import quote

import pytest
import webtest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import museum
import storage
from conftest import ADMIN, NOW, VISITOR
from ticketing import PNG, check_store

pytestmark = pytest.mark.slow

EXAMPLES = int(os.environ.get("MUSEUM_FUZZ_EXAMPLES", "2000"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))

ENDPOINTS = [
    ("GET", "/healthz"),
    ("GET", "/v1.1/openapi.json"),
    ("GET", "/v1.1/museum-hours"),
    ("GET", "/v1.1/special-events"),
    ("POST", "/v1.1/special-events"),
    ("GET", "/v1.1/special-events/{event}"),
    ("PATCH", "/v1.1/special-events/{event}"),
    ("DELETE", "/v1.1/special-events/{event}"),
    ("POST", "/v1.1/tickets"),
    ("GET", "/v1.1/tickets/{ticket}/qr"),
]


# -- values --------------------------------------------------------------------------------

ODD = ["\0", "\u202e", "\u200f", "\u200b", "\ufeff", "\u2028", "\x7f", "\x1b[31m", "e\u0301",
       "\U0001F3DB", "\ud800", "\udfff", "\ud83c", "\\", '"', "%00", "\r\n", "\t", " ", "",
       "\uffff", "Ⅻ", "١٢٣"]
odd_text = st.lists(st.one_of(st.sampled_from(ODD), st.text(max_size=20)), max_size=6).map(
    "".join)
texts = st.one_of(st.text(max_size=60), odd_text, st.integers(0, 6000).map(lambda n: "x" * n),
                  st.sampled_from(["Night tour", "  Torchlit  ", "Ünïcödé hall"]))
huge_numbers = st.one_of(st.integers(min_value=-10**400, max_value=10**400),
                         st.floats(allow_nan=True, allow_infinity=True),
                         st.sampled_from([0, -0.0, 1e-320, 1_000_000, 1_000_000.0001, 2**63,
                                          -1, True, False]))
# Valid prices have at most 2 decimals: whole hundredths.
prices = st.integers(0, 100_000_000).map(lambda hundredths: hundredths / 100)
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), huge_numbers, texts),
    lambda inner: st.one_of(st.lists(inner, max_size=5),
                            st.dictionaries(texts, inner, max_size=5)),
    max_leaves=20)
days = st.dates().map(date_text := lambda day: day.isoformat())
near_days = st.integers(-3, 400).map(lambda offset: (NOW.date().toordinal() + offset)).map(
    lambda ordinal: type(NOW.date()).fromordinal(ordinal).isoformat())
date_values = st.one_of(near_days, days, texts, st.sampled_from(
    ["2026-02-29", "2028-02-29", "2026-13-01", "2026-1-1", "０２０２６-01-01",
     "2026-12-05T10:00"]))


def maybe(valid, invalid=json_values):
    return st.one_of(valid, valid, invalid)


def with_odd_fields(record):
    """A record with fields dropped, nulled, or added."""
    return st.tuples(record, st.sets(st.sampled_from(["drop", "null", "extra", "id"]),
                                     max_size=2), texts).map(_mangle)


def _mangle(args):
    record, changes, name = args
    record = dict(record)
    if record and "drop" in changes:
        record.pop(sorted(record)[len(name) % len(record)])
    if record and "null" in changes:
        record[sorted(record)[len(name) % len(record)]] = None
    if "extra" in changes:
        record[name] = name
    if "id" in changes:
        record["eventId"] = str(uuid.uuid4())
    return record


events = with_odd_fields(st.fixed_dictionaries({
    "name": maybe(texts), "location": maybe(texts), "eventDescription": maybe(texts),
    "dates": maybe(st.lists(maybe(near_days, date_values), min_size=1, max_size=8)),
    "price": maybe(st.one_of(st.integers(0, 1_000_000), prices), huge_numbers),
}))
# Ids that exist are drawn at request time (see `paths`), so tickets for real events happen.
tickets = with_odd_fields(st.fixed_dictionaries({
    "ticketType": maybe(st.sampled_from(["general", "event"]), texts),
    "ticketDate": maybe(near_days, date_values),
    "email": maybe(st.sampled_from(["ada@example.org", "a.b+c@muse.um.example", "x@y.z"]),
                   st.one_of(texts, odd_text.map(lambda t: t + "@example.org"))),
    "phone": maybe(st.sampled_from(["+44 20 7946 0958", "(555) 123-4567"]), texts),
    "eventId": maybe(st.just("EXISTING"), st.one_of(st.uuids().map(str), texts)),
}))


# Valid records, still with odd (but allowed) Unicode: RTL marks, combining, astral, CJK.
valid_texts = st.text(st.characters(blacklist_categories=("Cc", "Cs")), min_size=1,
                      max_size=40).filter(str.strip)
valid_events = st.fixed_dictionaries({
    "name": valid_texts, "location": valid_texts, "eventDescription": valid_texts,
    "dates": st.lists(near_days, min_size=1, max_size=5),
    "price": st.one_of(st.integers(0, 1_000_000), prices),
})
OPEN_DAYS = ["2026-11-24", "2026-11-25", "2026-11-27", "2026-12-01", "2027-06-05"]
valid_tickets = st.one_of(
    st.fixed_dictionaries({"ticketType": st.just("general"),
                           "ticketDate": st.sampled_from(OPEN_DAYS),
                           "email": st.sampled_from(["ada@example.org", "z@muse.example"])},
                          optional={"phone": st.sampled_from(["+44 20 7946 0958"])}),
    st.fixed_dictionaries({"ticketType": st.just("event"), "eventId": st.just("EXISTING"),
                           "ticketDate": st.sampled_from(["2026-12-05", "2026-12-06"]),
                           "email": st.just("grace@example.org")}),
)


def json_bytes(value):
    return json.dumps(value).encode()  # lone surrogates become \udXXX escapes


bodies = st.one_of(
    valid_events.map(json_bytes),
    valid_tickets.map(json_bytes),
    json_values.map(json_bytes),
    events.map(json_bytes),
    tickets.map(json_bytes),
    st.binary(max_size=300),
    st.integers(1, 40_000).map(lambda depth: b"[" * depth + b"]" * depth),
    st.integers(1, 3_000).map(lambda depth: b'{"name": ' + b'{"a": ' * depth + b"1"
                              + b"}" * depth + b"}"),
    st.integers(1, 6_000).map(lambda digits: b'{"price": 1' + b"0" * digits + b"}"),
    st.sampled_from([b'{"price": 1e400}', b'{"price": -1e400}', b"NaN", b"[Infinity]",
                     b'{"name": "\\ud800"}', b'{"name": "a\\u0000b"}', b"\xef\xbb\xbf{}",
                     b'{"name": "x", "name": "y"}', b"", b"null", b"0", b'"text"',
                     b"{" * 70_000]),
    st.integers(60_000, 70_000).map(lambda size: json_bytes({"name": "x" * size})),
)
content_types = st.sampled_from(["application/json", "application/json", "application/json",
                                 "application/merge-patch+json",
                                 "application/json; charset=latin-1",
                                 "text/plain", "", "application/x-www-form-urlencoded",
                                 "application/json\0"])
def percent(text, safe=""):
    """`text` %-escaped as UTF-8; a lone surrogate becomes the bytes it would encode to."""
    return quote(text.encode("utf-8", "surrogatepass"), safe=safe)


query_strings = st.one_of(
    st.just(""),
    st.dictionaries(st.sampled_from(["startDate", "endDate", "page", "limit", "other"]),
                    st.one_of(date_values, st.integers(-5, 10**12).map(str), texts),
                    max_size=4).map(lambda params: "&".join(
                        f"{name}={percent(value)}" for name, value in params.items())),
    st.text(max_size=80).map(lambda text: percent(text, safe="&=%+;,/?")),
    st.binary(max_size=80).map(lambda raw: raw.decode("latin-1")),
    st.sampled_from(["page=", "limit", "page=1&page=2", "startDate=2026-11-22&endDate=2026-11-21",
                     "limit=%ZZ", "limit=%00", "&&&", "=", "page=99999999999999999999"]),
)
segments = st.one_of(
    st.just("EXISTING"), st.just("EXISTING"), st.uuids().map(str),
    st.binary(min_size=0, max_size=60).map(lambda raw: raw.decode("latin-1")),
    st.text(max_size=40).map(lambda text: text.encode("utf-8", "surrogatepass").decode("latin-1")),
    st.sampled_from(["..", ".", "%2e%2e", "3FA85F64-5717-4562-B3FC-2C963F66AFA6",
                     "3fa85f64-5717-4562-b3fc-2c963f66afa6\n",
                     "00000000-0000-0000-0000-000000000000"]),
)


# -- the app under test ---------------------------------------------------------------------

class NoCookies(http.cookiejar.CookieJar):
    """Each request stands alone: a cookie jar reads a request's path as text, which a
    fuzzed path is not, so none is kept (the device cookie a sign-in answers)."""

    def add_cookie_header(self, request):
        pass

    def extract_cookies(self, response, request):
        pass


class Target:
    """One app over one sqlite file for the whole module; remembers ids it handed out."""

    def __init__(self, config, db_path):
        self.db_path = db_path
        self.store = storage.open_store(db_path)
        app = museum.create_app(config, store=self.store, clock=lambda: NOW)
        self.client = webtest.TestApp(app, cookiejar=NoCookies())
        self.ids = {"event": [], "ticket": []}
        for number in range(5):
            self.remember(self.request("POST", "/v1.1/special-events", "", json_bytes({
                "name": f"Seed {number}", "location": "Hall", "eventDescription": "Seed.",
                "dates": ["2026-12-05", "2026-12-06"], "price": 5}), "application/json", ADMIN))
            self.remember(self.request("POST", "/v1.1/tickets", "", json_bytes({
                "ticketType": "general", "ticketDate": "2026-11-24",
                "email": "seed@example.org"}), "application/json", ADMIN))

    def request(self, method, path, query, body, content_type, credentials, extra=None):
        """One request from a hand-built WSGI environ, so the path may hold any byte."""
        environ = {
            "REQUEST_METHOD": method, "PATH_INFO": path, "QUERY_STRING": query,
            "SERVER_NAME": "localhost", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "192.0.2.1", "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(body or b""), "CONTENT_LENGTH": str(len(body or b"")),
            "HTTP_AUTHORIZATION": credentials["Authorization"], "wsgi.version": (1, 0),
            "wsgi.errors": io.StringIO(), "wsgi.multithread": False,
            "wsgi.multiprocess": False, "wsgi.run_once": False,
        }
        if content_type:
            environ["CONTENT_TYPE"] = content_type
        for name, value in (extra or {}).items():
            environ["HTTP_" + name.upper().replace("-", "_")] = value
        return self.client.do_request(webtest.TestRequest(environ), status=None,
                                      expect_errors=True)

    def remember(self, response):
        if response.status_int == 201:
            answer = response.json
            self.ids["event" if "eventDescription" in answer else "ticket"].append(
                answer.get("ticketId") or answer["eventId"])
        return response

    def existing(self, kind, index):
        known = self.ids[kind]
        return known[index % len(known)]


@pytest.fixture(scope="module")
def target(tmp_path_factory, config_text):
    opened = Target(museum.parse_config(config_text),
                    str(tmp_path_factory.mktemp("fuzz") / "museum.sqlite3"))
    yield opened
    opened.store.close()


def assert_well_formed(method, path, response):
    status = response.status_int
    assert status < 500, (status, response.body[:500])
    assert 200 <= status < 300 or 400 <= status < 500, status
    content_type = response.headers.get("Content-Type", "")
    if status >= 400:
        assert content_type == "application/problem+json", response.headers
        problem = json.loads(response.body)
        assert problem["status"] == status and problem["title"] and problem["detail"], problem
    elif status == 204:
        assert response.body == b""
    elif path.endswith("/qr"):
        assert content_type == "image/png" and response.body.startswith(PNG)
    else:
        assert content_type == "application/json"
        json.loads(response.body)


def fill_in(text, target, index):
    """Replace EXISTING (in a path segment or an eventId) by an id that exists."""
    if "EXISTING" not in text:
        return text
    kind = "ticket" if "/tickets/" in text else "event"
    return text.replace("EXISTING", target.existing(kind, index))


# Everything but the method and path of one fuzzed request.
REQUEST = dict(
    segment=segments, query=query_strings, body=st.one_of(st.none(), bodies),
    content_type=content_types, as_admin=st.sampled_from([True, True, True, False]),
    index=st.integers(0, 10**6),
    key=st.one_of(st.none(), st.text(max_size=40).map(
        lambda text: text.encode("utf-8", "surrogatepass").decode("latin-1"))))


def send(target, method, template, segment, query, body, content_type, as_admin, index, key):
    """Send one fuzzed request to `target`; return (its path, the response)."""
    path = fill_in(template.format(event=segment, ticket=segment), target, index)
    if body is not None and b"EXISTING" in body:
        body = body.replace(b"EXISTING", target.existing("event", index).encode())
    if body is None and method in ("POST", "PATCH"):
        body = b"{}"
    response = target.request(method, path, query, body, content_type,
                              ADMIN if as_admin else VISITOR,
                              {"Idempotency-Key": key} if key is not None else None)
    return path, target.remember(response)


@pytest.mark.parametrize("method, template", ENDPOINTS,
                         ids=[f"{method} {path}" for method, path in ENDPOINTS])
@FUZZ
@given(**REQUEST)
def test_every_answer_is_2xx_or_a_4xx_problem(target, method, template, **request):
    path, response = send(target, method, template, **request)
    event(f"status {response.status_int}")  # see --hypothesis-show-statistics
    assert_well_formed(method, path, response)


WRITES = [(method, template) for method, template in ENDPOINTS if method != "GET"]


def test_the_store_holds_only_valid_records_after_fuzzed_writes(tmp_path, config_text):
    """Every kind of write fuzzed as above, on a store of its own, then the store read back."""
    target = Target(museum.parse_config(config_text), str(tmp_path / "museum.sqlite3"))

    @FUZZ
    @given(**REQUEST)
    def write(method, template, **request):
        send(target, method, template, **request)

    try:
        for method, template in WRITES:
            write(method, template)
    finally:
        target.store.close()
    events, tickets = check_store(target.db_path)
    print(f"after fuzzing: {len(events)} events and {len(tickets)} tickets stored, all valid; "
          f"{EXAMPLES} examples for each of {len(WRITES)} kinds of write")
    assert len(events) > 5 and len(tickets) > 5, "some fuzzed writes were valid and stored"
