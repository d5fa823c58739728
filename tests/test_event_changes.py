"""Changes without polling: event listings and reads carry a strong `ETag` and
answer 304 to `If-None-Match` while it holds; `updatedSince` lists the events created,
changed or cancelled since a moment, cancelled ones marked; a cancelled event's read answers
410 with what it was.

Transcripts against the app (conftest's `client`) on each backend: a listing's tag is the
database's count of event changes, and the change times come from the database's clock, so a
test that needs a moment between two changes reads the clock between them. A tag that held
through a change of what it tags, or matched another answer's, fails them.
"""

from datetime import datetime, timedelta, timezone

import pytest
import webtest

import museum
from conftest import ADMIN, VISITOR, assert_problem
from test_outbox import each_store, each_url  # noqa: F401 (fixtures)
from ticketing import EVENTS, UNKNOWN_ID

BODY = {"name": "Night at the Museum", "location": "Main hall",
        "eventDescription": "A guided tour by torchlight.", "dates": ["2026-12-05"], "price": 25}


def create(client, **changes):
    return client.post_json(EVENTS, {**BODY, **changes}, headers=ADMIN, status=201).json


def url(event):
    return f"{EVENTS}/{event['eventId']}"


def listing(client, params=(), status=200, tag=None):
    headers = {**VISITOR, **({"If-None-Match": tag} if tag else {})}
    return client.get(EVENTS, params=params, headers=headers, status=status)


def read(client, event, status=200, tag=None):
    headers = {**VISITOR, **({"If-None-Match": tag} if tag else {})}
    return client.get(url(event), headers=headers, status=status)


def changes(client, since, status=200, **params):
    return listing(client, {"updatedSince": since, **params}, status)


def a_moment_after_the_last_change():
    """Now, once the clock has moved past the millisecond of the change just made."""
    start = datetime.now(timezone.utc)
    while datetime.now(timezone.utc) - start < timedelta(milliseconds=2):
        pass
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


LONG_AGO = "2000-01-01T00:00:00Z"


@pytest.fixture
def store(each_store):
    """Every test of this file on sqlite and on PostgreSQL."""
    return each_store


# -- ETag and If-None-Match on the listing -------------------------------------------------

def test_a_listing_is_tagged_and_not_sent_again_while_nothing_changed(client):
    create(client)
    first = listing(client)
    tag = first.headers["ETag"]
    assert tag.startswith('"') and not tag.startswith("W/")  # strong
    again = listing(client, tag=tag, status=304)
    assert again.body == b"" and again.headers["ETag"] == tag
    assert listing(client, tag="*", status=304).headers["ETag"] == tag
    assert listing(client, tag=f'"other", {tag}', status=304)


@pytest.mark.parametrize("params", [{}, {"updatedSince": LONG_AGO}])
@pytest.mark.parametrize("change", ["create", "patch", "cancel"])
def test_every_change_of_an_event_changes_the_listings_tag(client, change, params):
    event = create(client)
    tag = listing(client, params).headers["ETag"]
    listing(client, params, 304, tag)
    if change == "create":
        create(client, name="Another")
    elif change == "patch":
        client.patch_json(url(event), {"price": 30}, headers=ADMIN, status=200)
    else:
        client.delete(url(event), headers=ADMIN, status=204)
    answer = listing(client, params, tag=tag, status=200)
    assert answer.headers["ETag"] != tag
    listing(client, params, 304, answer.headers["ETag"])


def test_the_listings_tag_changes_with_the_day(store, config, clock):
    """At midnight the default window moves on: yesterday's first page is not today's."""
    client = webtest.TestApp(museum.create_app(config, store=store, clock=clock), lint=True)
    create(client)
    tag = listing(client).headers["ETag"]
    clock.advance(days=1)
    assert listing(client, tag=tag, status=200).headers["ETag"] != tag


def test_each_page_and_window_has_its_own_tag(client):
    for name in ("A", "B", "C"):
        create(client, name=name)
    tags = {listing(client, params).headers["ETag"] for params in (
        {}, {"page": "2", "limit": "1"}, {"page": "1", "limit": "1"},
        {"startDate": "2026-12-06"}, {"endDate": "2026-12-31"}, {"updatedSince": LONG_AGO})}
    assert len(tags) == 6


def test_a_listing_stays_uncached_on_the_way(client):
    assert listing(client).headers["Cache-Control"] == "no-store"
    tag = listing(client).headers["ETag"]
    assert listing(client, tag=tag, status=304).headers["Cache-Control"] == "no-store"


# -- ETag and If-None-Match on the read ------------------------------------------------------

def test_a_read_is_tagged_and_not_sent_again_while_the_event_is_the_same(client):
    event = create(client)
    tag = read(client, event).headers["ETag"]
    assert not tag.startswith("W/")
    assert read(client, event, tag=tag, status=304).body == b""
    create(client, name="Another")  # another event: this one is the same
    assert read(client, event, tag=tag, status=304)
    client.patch_json(url(event), {"price": 30}, headers=ADMIN, status=200)
    changed = read(client, event, tag=tag, status=200)
    assert changed.json["price"] == 30 and changed.headers["ETag"] != tag


@pytest.mark.parametrize("change", [
    {"name": "Day at the Museum"}, {"location": "East wing"},
    {"eventDescription": "A guided tour by daylight."}, {"dates": ["2026-12-05", "2026-12-06"]},
    {"price": 25.5}, {"capacity": 40}])
def test_any_change_of_what_a_read_answers_changes_its_tag(client, change):
    event = create(client)
    tag = read(client, event).headers["ETag"]
    client.patch_json(url(event), change, headers=ADMIN, status=200)
    changed = read(client, event, tag=tag, status=200)
    assert changed.json == {**event, **change} and changed.headers["ETag"] != tag
    assert read(client, event, tag=changed.headers["ETag"], status=304).headers["ETag"] == \
        changed.headers["ETag"]


def test_a_read_answers_304_only_to_its_own_tag(client):
    event, other = create(client), create(client, name="Another")
    tag, others = (read(client, each).headers["ETag"] for each in (event, other))
    assert tag != others
    read(client, event, tag=others, status=200)
    # If-None-Match compares weakly (RFC 9110, section 13.1.2): W/ makes no difference.
    assert read(client, event, tag=f"W/{tag}", status=304).headers["ETag"] == tag
    read(client, event, tag=f"{others}, {tag}", status=304)
    read(client, event, tag="*", status=304)


# -- a cancelled event's read --------------------------------------------------------------

def test_a_cancelled_events_read_answers_410_with_what_it_was(client):
    event = create(client)
    client.patch_json(url(event), {"price": 30}, headers=ADMIN, status=200)
    tag = read(client, event).headers["ETag"]
    client.delete(url(event), headers=ADMIN, status=204)
    body = assert_problem(read(client, event, status=410, tag=tag), 410)
    assert body["event"] == {**event, "price": 30, "cancelled": True}


def test_an_unknown_event_is_still_404(client):
    assert_problem(client.get(f"{EVENTS}/{UNKNOWN_ID}", headers=VISITOR, status=404), 404)


def test_a_cancelled_event_is_still_not_changed_nor_cancelled_again(client):
    event = create(client)
    client.delete(url(event), headers=ADMIN, status=204)
    assert_problem(client.patch_json(url(event), {"price": 1}, headers=ADMIN, status=404), 404)
    assert_problem(client.delete(url(event), headers=ADMIN, status=404), 404)


# -- updatedSince ---------------------------------------------------------------------------

def test_changes_since_a_moment_include_new_changed_and_cancelled_events(client):
    before = create(client, name="Before")
    since = a_moment_after_the_last_change()
    created = create(client, name="Created")
    changed = create(client, name="Changed", dates=["2026-11-01"])  # in the past: not listed
    client.patch_json(url(changed), {"price": 5}, headers=ADMIN, status=200)
    cancelled = create(client, name="Cancelled")
    client.delete(url(cancelled), headers=ADMIN, status=204)
    answer = changes(client, since)
    assert [event["name"] for event in answer.json] == ["Created", "Changed", "Cancelled"]
    assert answer.headers["X-Total-Count"] == "3"
    by_name = {event.pop("name"): event for event in answer.json}
    assert by_name["Cancelled"]["cancelled"] is True
    assert "cancelled" not in by_name["Created"] and by_name["Changed"]["price"] == 5
    assert {event["eventId"] for event in answer.json} == {
        created["eventId"], changed["eventId"], cancelled["eventId"]}
    assert before["eventId"] not in {event["eventId"] for event in answer.json}


def test_asking_again_from_the_last_updated_at_misses_nothing(client):
    create(client, name="First")
    last = changes(client, LONG_AGO).json[-1]
    assert datetime.fromisoformat(last["updatedAt"]).tzinfo == timezone.utc
    create(client, name="Second")
    again = changes(client, last["updatedAt"]).json
    assert [event["name"] for event in again] == ["First", "Second"]


def test_updated_since_takes_any_offset_and_precision(client):
    create(client)
    moment = a_moment_after_the_last_change()
    create(client, name="Later")
    in_berlin = datetime.fromisoformat(moment).astimezone(timezone(timedelta(hours=1)))
    for text in (moment, in_berlin.isoformat(timespec="microseconds"),
                 moment.replace("+00:00", "Z")):
        assert [event["name"] for event in changes(client, text).json] == ["Later"]


def test_changes_page_and_are_tagged(client):
    for name in ("A", "B", "C"):
        create(client, name=name)
    # Changes of one millisecond are in the order of their ids: the whole listing says
    # which event the second page holds.
    whole = [event["name"] for event in changes(client, LONG_AGO).json]
    page = changes(client, LONG_AGO, page="2", limit="2")
    assert sorted(whole) == ["A", "B", "C"]
    assert [event["name"] for event in page.json] == whole[2:]
    assert page.headers["X-Total-Count"] == "3"
    tag = page.headers["ETag"]
    listing(client, {"updatedSince": LONG_AGO, "page": "2", "limit": "2"}, 304, tag)


@pytest.mark.parametrize("since", [
    "yesterday", "2026-11-22", "2026-11-22T10:00:00", "2026-11-22 10:00:00Z",
    "2026-13-01T00:00:00Z", "0001-01-01T00:00:00+01:00"])
def test_a_bad_updated_since_is_400_naming_it(client, since):
    assert_problem(changes(client, since, status=400), 400, "updatedSince")


@pytest.mark.parametrize("name", ["startDate", "endDate"])
def test_dates_do_not_go_with_updated_since(client, name):
    assert_problem(changes(client, LONG_AGO, status=400, **{name: "2026-12-01"}), 400, name)


def test_updated_since_given_twice_is_400(client):
    res = client.get(f"{EVENTS}?updatedSince={LONG_AGO}&updatedSince={LONG_AGO}",
                     headers=VISITOR, status=400)
    assert_problem(res, 400, "updatedSince")
