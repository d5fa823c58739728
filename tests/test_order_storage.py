"""The storage contract of orders, on sqlite and PostgreSQL: an order's tickets are written
together or not at all, holds count against capacity until confirmed, cancelled or ended
(with an injected clock), and the kept counts of places always equal a count made from the
tickets themselves."""

import random
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

import storage
from test_storage import backend, event, store, ticket  # noqa: F401 (fixtures)
from ticketing import fresh_code

DAY = "2026-12-01"
START = "2026-11-30T09:00:00Z"
HOLD_ENDS = "2026-11-30T09:15:00Z"
AFTER_HOLD = "2026-11-30T09:16:00Z"


def order(status="confirmed", expires_at=None, created_by="shop", **changes):
    return {"orderId": str(uuid.uuid4()), "orderCode": fresh_code("general"),
            "status": status, "channel": "web", "payment": None,
            "email": "family@example.org", "phone": None, "createdAt": START,
            "expiresAt": expires_at, "createdBy": created_by, **changes}


def held(**changes):
    return order(status="pending", expires_at=HOLD_ENDS, **changes)


def general(persons=1, soldAt=START, **changes):  # noqa: N803 (the ticket's field)
    return ticket(persons=persons, soldBy="shop", soldAt=soldAt, **changes)


def taken(store, now=START):
    return store.places_taken(DAY, DAY, now)


def test_an_order_writes_all_its_tickets_and_counts_their_persons(store):
    made = store.create_order(order(), [general(), general(persons=2, category="child")],
                              START, general_capacity=10)
    assert made["status"] == "confirmed"
    assert len(made["tickets"]) == 2
    assert store.get_order(made["orderId"], START)["tickets"] == made["tickets"]
    assert taken(store)["general"] == {DAY: 3}


def test_an_order_short_of_places_writes_nothing(store, backend):
    store.create_ticket(general(), general_capacity=3)
    the_order = order()
    with pytest.raises(storage.SoldOut) as refused:
        store.create_order(the_order, [general(), general(persons=2)], START,
                           general_capacity=3)
    assert refused.value.date == DAY and refused.value.event_id is None
    assert taken(store)["general"] == {DAY: 1}
    with pytest.raises(storage.NotFound):
        store.get_order(the_order["orderId"], START)
    assert backend.rows("SELECT count(*) FROM tickets") == [(1,)]


def test_a_full_slot_or_event_date_is_named(store):
    timed = [general(entryTime="10:00"), general(entryTime="10:00")]
    with pytest.raises(storage.SoldOut) as refused:
        store.create_order(order(), timed, START, slot_capacity=1)
    assert refused.value.entry_time == "10:00"
    night = event(capacity=2)
    store.create_event(night)
    tickets = [general(ticketType="event", eventId=night["eventId"], persons=3)]
    with pytest.raises(storage.SoldOut) as refused:
        store.create_order(order(), tickets, START)
    assert refused.value.event_id == night["eventId"]


def test_event_tickets_in_an_order_take_the_event_price_of_their_category(store):
    night = event(price=12.5, prices={"child": 5})
    store.create_event(night)
    made = store.create_order(order(), [
        general(ticketType="event", eventId=night["eventId"], category="adult"),
        general(ticketType="event", eventId=night["eventId"], category="child")], START)
    assert sorted(t["price"] for t in made["tickets"]) == [5, 12.5]


def test_a_hold_counts_until_it_ends_then_the_place_is_free(store):
    store.create_order(held(), [general(persons=2)], START, general_capacity=2)
    assert taken(store)["general"] == {DAY: 2}
    with pytest.raises(storage.SoldOut):
        store.create_ticket(general(), general_capacity=2)
    # After the hold's end, a read already sees the places free, before any write ...
    assert taken(store, AFTER_HOLD)["general"] == {DAY: 0}
    # ... and the next sale finds them free.
    store.create_ticket(general(soldAt=AFTER_HOLD), general_capacity=2)
    assert taken(store, AFTER_HOLD)["general"] == {DAY: 1}


def test_confirming_keeps_the_places_and_is_idempotent(store):
    made = store.create_order(held(), [general()], START, general_capacity=1)
    assert store.confirm_order(made["orderId"], START)["status"] == "confirmed"
    assert store.confirm_order(made["orderId"], START)["status"] == "confirmed"
    assert store.get_order(made["orderId"], AFTER_HOLD)["status"] == "confirmed"
    assert taken(store, AFTER_HOLD)["general"] == {DAY: 1}


def test_an_ended_hold_reads_expired_and_cannot_be_confirmed(store):
    made = store.create_order(held(), [general()], START)
    assert store.get_order(made["orderId"], AFTER_HOLD)["status"] == "expired"
    with pytest.raises(storage.HoldExpired):
        store.confirm_order(made["orderId"], AFTER_HOLD)
    with pytest.raises(storage.HoldExpired):
        store.cancel_order(made["orderId"], "shop", AFTER_HOLD)
    assert taken(store, AFTER_HOLD)["general"] == {DAY: 0}


def test_only_the_creator_cancels_and_only_a_pending_order(store):
    made = store.create_order(held(), [general(persons=2)], START)
    with pytest.raises(storage.NotFound):
        store.cancel_order(made["orderId"], "someone-else", START)
    cancelled = store.cancel_order(made["orderId"], "shop", START)
    assert cancelled["status"] == "cancelled"
    assert taken(store)["general"] == {DAY: 0}
    with pytest.raises(storage.NotAllowed):
        store.cancel_order(made["orderId"], "shop", START)
    with pytest.raises(storage.NotAllowed):
        store.confirm_order(made["orderId"], START)
    confirmed = store.create_order(order(), [general()], START)
    with pytest.raises(storage.NotAllowed):
        store.cancel_order(confirmed["orderId"], "shop", START)


def test_an_orders_key_replays_it_and_refuses_another_request(store):
    key = ("shop", "cart-1", "digest-1")
    made = store.create_order(order(), [general(), general()], START, idempotency=key)
    assert store.replayed_order(*key, START) == made
    assert store.create_order(order(), [general()], START, idempotency=key) == made
    assert taken(store)["general"] == {DAY: 2}
    with pytest.raises(storage.IdempotencyConflict):
        store.create_order(order(), [general()], START, idempotency=("shop", "cart-1", "x"))
    assert store.replayed_order("shop", "cart-2", "digest-1", START) is None
    store.create_ticket(general(), ("shop", "ticket-1", "digest-1"))
    with pytest.raises(storage.IdempotencyConflict):  # the key bought a single ticket
        store.replayed_order("shop", "ticket-1", "digest-1", START)


def test_an_order_counts_each_days_own_capacity_and_a_desk_ticket_without_email(store):
    later = "2026-12-02"
    tickets = [general(), general(ticketDate=later, email=None)]
    with pytest.raises(storage.SoldOut) as refused:
        store.create_order(order(), tickets, START, general_capacity={DAY: 1, later: 0})
    assert refused.value.date == later
    made = store.create_order(order(email=None), tickets, START,
                              general_capacity={DAY: 1, later: 1})
    assert [ticket["email"] for ticket in made["tickets"]] == ["visitor@example.org", ""]


def test_a_buyers_limit_counts_every_ticket_of_an_order(store):
    since = "2026-11-30T08:00:00Z"
    with pytest.raises(storage.LimitReached) as refused:
        store.create_order(order(), [general(), general(), general()],
                           START, purchase_limit=(2, since))
    assert refused.value.first is None
    store.create_order(order(), [general(), general()], START, purchase_limit=(2, since))
    with pytest.raises(storage.LimitReached) as refused:
        store.create_order(order(), [general()], START, purchase_limit=(2, since))
    assert refused.value.first == START


def test_voiding_an_order_frees_its_places_and_keeps_it_in_the_report(store):
    made = store.create_order(order(), [general(price=10), general(price=10, persons=2)],
                              START)
    assert store.void_order(made["orderId"], START) is True
    assert store.void_order(made["orderId"], START) is False
    assert store.get_order(made["orderId"], START)["status"] == "voided"
    assert taken(store)["general"] == {DAY: 0}
    (row,) = store.sales(DAY, DAY)
    assert (row["sold"], row["void"], row["revenue"]) == (2, 2, 0)
    with pytest.raises(storage.NotFound):
        store.void_order(str(uuid.uuid4()), START)


def brute_force_places(backend, now):
    """The places taken, counted from the tickets: those not void, less the holds ended."""
    rows = backend.rows(
        "SELECT t.type, t.event_id, t.entry_time, t.persons, o.status, o.expires_at "
        "FROM tickets t LEFT JOIN orders o ON o.id = t.order_id WHERE t.voided_at IS NULL")
    general, slots, events = 0, {}, {}
    for kind, event_id, entry_time, persons, status, expires_at in rows:
        if status == "pending" and expires_at <= now:
            continue
        if kind == "event":
            events[str(event_id)] = events.get(str(event_id), 0) + persons
        else:
            general += persons
            if entry_time:
                slots[entry_time] = slots.get(entry_time, 0) + persons
    return general, slots, events


def kept_places(store, now):
    places = store.places_taken(DAY, DAY, now)
    return (places["general"].get(DAY, 0),
            {slot: count for slot, count in places["slots"].get(DAY, {}).items() if count},
            {row["eventId"]: row["sold"] for row in places["events"] if row["sold"]})


@pytest.mark.parametrize("seed", range(3))
def test_kept_places_equal_a_count_from_the_tickets_after_any_mix(store, backend, seed):
    chance = random.Random(seed)
    night = event(capacity=6, dates=[DAY])
    store.create_event(night)
    minute, orders = 0, []

    def clock():
        return f"2026-11-30T{9 + minute // 60:02d}:{minute % 60:02d}:00Z"

    for _ in range(40):
        minute += chance.choice([0, 1, 5, 20])
        now = clock()
        action = chance.choice(["order", "hold", "confirm", "cancel", "void", "ticket"])
        try:
            if action in ("order", "hold"):
                tickets = [chance.choice([
                    general(persons=chance.randint(1, 3), soldAt=now),
                    general(persons=chance.randint(1, 2), entryTime="10:00", soldAt=now),
                    general(ticketType="event", eventId=night["eventId"], soldAt=now,
                            persons=chance.randint(1, 2))])
                    for _ in range(chance.randint(1, 4))]
                minute += 15
                expires = clock()
                minute -= 15
                made = store.create_order(
                    held(expiresAt=expires, createdAt=now) if action == "hold" else order(),
                    tickets, now, general_capacity=12, slot_capacity=4)
                orders.append(made["orderId"])
            elif action == "ticket":
                store.create_ticket(general(soldAt=now), general_capacity=12)
            elif orders:
                chosen = chance.choice(orders)
                {"confirm": lambda: store.confirm_order(chosen, now),
                 "cancel": lambda: store.cancel_order(chosen, "shop", now),
                 "void": lambda: store.void_order(chosen, now)}[action]()
        except (storage.SoldOut, storage.HoldExpired, storage.NotAllowed):
            pass
        assert kept_places(store, now) == brute_force_places(backend, now)


def test_concurrent_orders_on_two_instances_never_oversell_nor_split(backend):
    """16 orders of 2 to 4 tickets at once, through two stores on one database, for the
    last 7 places of an event date: at most 7 sold, each order whole or absent."""
    first, second = backend.open(), backend.open()
    night = event(capacity=7, dates=[DAY])
    first.create_event(night)
    chance = random.Random(7)
    orders = [(order(), [general(ticketType="event", eventId=night["eventId"])
                         for _ in range(chance.randint(2, 4))]) for _ in range(16)]

    def place(numbered):
        number, (the_order, tickets) = numbered
        try:
            (first if number % 2 else second).create_order(the_order, tickets, START)
            return len(tickets)
        except storage.SoldOut:
            return 0

    with ThreadPoolExecutor(max_workers=8) as pool:
        sold = list(pool.map(place, enumerate(orders)))
    assert 0 < sum(sold) <= 7
    assert backend.rows("SELECT count(*) FROM tickets") == [(sum(sold),)]
    for (the_order, tickets), count in zip(orders, sold):
        if count:
            assert len(first.get_order(the_order["orderId"], START)["tickets"]) == count
        else:
            with pytest.raises(storage.NotFound):
                first.get_order(the_order["orderId"], START)
    assert kept_places(first, START)[2] == {night["eventId"]: sum(sold)}


def test_an_orders_contact_is_erased_with_its_last_tickets_date(store):
    made = store.create_order(order(phone="+1 555-0100"), [
        general(), general(ticketDate="2026-12-05")], START)
    kept = store.create_order(order(), [general(ticketDate="2026-12-05")], START)
    # Before the last date: the ticket of the first date loses its email, the order keeps it.
    assert store.erase_contacts("2026-12-02", 10) == 1
    assert store.get_order(made["orderId"], START)["email"] == "family@example.org"
    assert store.erase_contacts("2026-12-06", 10) == 4
    erased = store.get_order(made["orderId"], START)
    assert (erased["email"], erased["phone"]) == (None, None)
    assert store.get_order(kept["orderId"], START)["email"] is None
    assert store.erase_contacts("2026-12-06", 10) == 0


def test_the_web_orders_of_an_email_are_counted_since_a_moment(store):
    """What [shop] orders_per_email_per_day counts, on every instance of the database."""
    store.create_order(order(createdAt="2026-11-30T08:00:00Z"), [general()], START)
    store.create_order(order(email="Family@EXAMPLE.org", status="pending",
                             expires_at=HOLD_ENDS), [general()], START)
    store.create_order(order(channel="desk"), [general()], START)
    store.create_order(order(email="other@example.org"), [general()], START)
    store.cancel_order(store.create_order(held(), [general()], START)["orderId"], "shop", START)
    assert store.web_orders_of("FAMILY@example.org", "2026-11-30T07:00:00Z") == \
        (3, "2026-11-30T08:00:00Z")
    assert store.web_orders_of("family@example.org", "2026-11-30T08:00:00Z") == (2, START)
    assert store.web_orders_of("nobody@example.org", "2026-11-30T07:00:00Z") == (0, None)
