"""The museum's days: the opening hours as served, and an admin changing one day.

A day's hours and general entry capacity follow the config's rule ([hours], [exceptions],
[capacity], [capacity_dates]) unless an admin changed that day through
`PUT /v1.1/museum-hours/{date}`: closed, other hours, another capacity. Those changes are
kept in the database and read back for the window each request asks about (one indexed
read, no cache), so the hours, the availability and the sales of every instance sharing
the database follow a change at once. The config itself is read through a LiveConfig,
which `museum reload` replaces.
"""

from datetime import date, timedelta
from itertools import islice

from museum_door import ticket_status
from museum_http import BAD_QUERY, json_response, paging, read_json, rfc3339, start_date, to_json
from museum_openapi import DATE_SCHEMA, Answer, Operation, anchored, trimmed_text
from museum_sales import days_as_set, ticket_view
from museum_validation import Field, Validator, check_fields, checked_by
from museum_vocabulary import ADMIN_ROLE, CAPACITY_MAX, TIME_OF_DAY, VISITOR_ROLE, minute_of_day

HOURS_HORIZON_DAYS = 366  # days from startDate on that the opening hours list
NOTE_MAX = 200
NOT_WITH_CLOSED = ("timeOpen", "timeClose", "capacity")  # a closed day has none of them
DAY_FIELDS = {
    "closed": Field(checked_by(Validator.boolean), {
        "type": "boolean", "description": "`true`: the museum is closed that day (then "
        "without `timeOpen`, `timeClose` and `capacity`). `false` is as if left out."}, True),
    "timeOpen": Field(checked_by(Validator.time_of_day), {
        "type": "string", "pattern": anchored(TIME_OF_DAY), "description": "The day's "
        "opening time, with `timeClose`; both left out: the configured hours."}, "10:00"),
    "timeClose": Field(checked_by(Validator.time_of_day), {
        "type": "string", "pattern": anchored(TIME_OF_DAY), "description": "The day's "
        "closing time, after `timeOpen`."}, "16:00"),
    "capacity": Field(checked_by(Validator.places), {
        "type": "integer", "minimum": 1, "maximum": CAPACITY_MAX, "description": "Places of "
        "general entry that day; left out: the configured capacity. Below the places "
        "already sold, it stops sales; the tickets sold stay valid."}, 200),
    "note": Field(checked_by(Validator.text, NOTE_MAX), trimmed_text(
        NOTE_MAX, "Why, for the staff; shown back to admins only. "), "Storm warning"),
}


def horizon_end(start, days):
    """The last of `days` days from `start`, or the calendar's last day."""
    try:
        return start + timedelta(days=days - 1)
    except OverflowError:
        return date.max


class MuseumHours:
    """The open days from startDate on, each with its hours: the config's, or the day's as
    an admin changed it."""

    needed_roles = {"GET": VISITOR_ROLE}
    shop_methods = ("GET",)  # [shop] enabled: anyone may read it
    described = {"get": Operation("getMuseumHours", "Operations", "Get museum hours",
                                  ("StartDate", "Page", "Limit"),
                                  {200: Answer("One page of open days.", "MuseumHours")})}

    def __init__(self, store, live, today):
        self.store = store
        self.live = live  # museum_config.LiveConfig
        self.today = today

    def on_get(self, req, resp):
        validator = Validator()
        start = start_date(req, validator, self.today())
        page, limit = paging(req, validator)
        validator.raise_if_invalid(BAD_QUERY)
        schedule, _ = days_as_set(self.live.config, self.store, start,
                                  horizon_end(start, HOURS_HORIZON_DAYS))
        days = islice(schedule.open_days(start, HOURS_HORIZON_DAYS), (page - 1) * limit,
                      page * limit)
        resp.data = to_json([{"date": day.isoformat(), "timeOpen": opens, "timeClose": closes}
                             for day, (opens, closes) in days])


DAY_PARAMETER = {"name": "date", "in": "path", "required": True, "schema": DATE_SCHEMA,
                 "example": "2027-10-29",
                 "description": "The day, today or later, in the museum's time zone."}


class MuseumDay:
    """One day changed by an admin: closed, other hours or another capacity, over the
    config's rule; and back to the rule."""

    needed_roles = {"PUT": ADMIN_ROLE, "DELETE": ADMIN_ROLE}
    described = {
        "put": Operation("changeMuseumDay", "Operations", "Close a day, or change its hours "
                         "or capacity", (DAY_PARAMETER,), {200: Answer(
                             "The day as changed, with the tickets it concerns.",
                             "MuseumDay")}, "MuseumDayChange"),
        "delete": Operation("restoreMuseumDay", "Operations", "Give a day back to the "
                            "configured hours and capacity", (DAY_PARAMETER,), {
                                204: Answer("The day follows the configuration again.",
                                            None)})}

    def __init__(self, store, live, today, clock):
        self.store = store
        self.live = live
        self.today = today
        self.clock = clock

    def on_put(self, req, resp, date):
        validator = Validator()
        day = self._day(validator, date)
        values = check_fields(read_json(req), DAY_FIELDS, validator)
        closed = self._check_change(validator, values)
        validator.raise_if_invalid()
        change = {"date": day.isoformat(), "closed": closed, **{
            name: values.get(name) for name in ("timeOpen", "timeClose", "capacity", "note")},
            "changedAt": rfc3339(self.clock()), "changedBy": req.context.user.name}
        tickets = self.store.set_day(change)
        schedule = self.live.config.schedule.with_changed_days([change])
        answer = {name: value for name, value in change.items() if value is not None}
        answer["affectedTickets"] = [ticket_view(ticket, ticket_status(ticket), True)
                                     for ticket in tickets
                                     if not admits(schedule, day, ticket)]
        json_response(resp, answer)

    def on_delete(self, req, resp, date):
        validator = Validator()
        day = self._day(validator, date)
        validator.raise_if_invalid()
        self.store.clear_day(day.isoformat())
        resp.status = 204

    def _day(self, validator, text):
        day = validator.date("date", text)
        if day and day < self.today():
            validator.error("date", "past", "must not be in the past")
        return day

    @staticmethod
    def _check_change(validator, values):
        """Whether the change closes the day; its other rules, as errors."""
        closed = values.get("closed") is True
        given = [name for name in NOT_WITH_CLOSED if name in values]
        if closed:
            for name in given:
                validator.error(name, "conflicts", "must not be given when closed is true")
        elif not given and values.get("closed", False) is False:  # not already refused
            validator.error("closed", "no-change", "must be true, unless timeOpen and "
                            "timeClose or capacity are given")
        elif "timeOpen" in values and "timeClose" not in values:
            validator.error("timeClose", "required", "is required with timeOpen")
        elif "timeClose" in values and "timeOpen" not in values:
            validator.error("timeOpen", "required", "is required with timeClose")
        opens, closes = values.get("timeOpen"), values.get("timeClose")
        if opens and closes and minute_of_day(opens) >= minute_of_day(closes):
            validator.error("timeClose", "hours-order", "must be after timeOpen")
        return closed


def admits(schedule, day, ticket):
    """Whether `day` as `schedule` has it still admits `ticket`: it is open, and a timed
    ticket's entry slot is one of the day's."""
    if schedule.hours_on(day) is None:
        return False
    if not ticket["entryTime"] or schedule.slot_minutes is None:
        return True
    return ticket["entryTime"] in schedule.slots_on(day)

