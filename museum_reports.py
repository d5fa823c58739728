"""The reports: what was sold for each day of a window (`/v1.1/reports/sales`), as JSON
or CSV, and its chart as SVG (`/v1.1/reports/sales/chart`); the arrivals per hour of the
day as SVG (`/v1.1/reports/arrivals/chart`). The rows, the CSV and the counts are
museum_sales', the charts museum_charts'; this module serves them.
"""

import functools

import museum_sales
from museum_charts import arrivals_per_hour_svg, sales_per_day_svg
from museum_http import BAD_QUERY, Problem, date_window, json_response, parse_query
from museum_openapi import DATE_SCHEMA, Operation, query
from museum_validation import Validator
from museum_vocabulary import ADMIN_ROLE, DESK_ROLE

# `?format=`, for a link a browser follows: it cannot send `Accept: text/csv`.
REPORT_FORMATS = ("json", "csv")


class SalesReport:
    """What was sold for each day of a window (at most REPORT_DAYS_MAX days, by default
    today alone), with `breakdown=true` by category and channel too: JSON, or CSV when the
    client prefers `text/csv` or asks `format=csv`. The desk reads today's."""

    needed_roles = {"GET": DESK_ROLE}
    described = {"get": Operation("getSalesReport", "Reports", "The sales report", (
        query("startDate", "First day; defaults to today at the museum.", DATE_SCHEMA,
              "2027-10-01"),
        query("endDate", f"Last day; defaults to `startDate`, at most "
              f"{museum_sales.REPORT_DAYS_MAX - 1} days after it.", DATE_SCHEMA, "2027-10-31"),
        query("format", "`csv`: the CSV whatever `Accept` says, for a link a browser "
              "follows (as a download); `json`: JSON. Without it, `Accept` chooses.",
              {"type": "string", "enum": list(REPORT_FORMATS)}, "csv"),
        query("breakdown", "`true`: each row also counts its tickets by price category "
              "(`categories`) and by channel (`channels`); read from the tickets "
              "themselves, so it costs more than the report alone.",
              {"type": "string", "enum": ["true", "false"], "default": "false"}, "true")),
        {200: "SalesReport", 403: "NotTodaysReport"})}

    def __init__(self, store, today):
        self.store = store
        self.today = today

    def on_get(self, req, resp):
        validator = Validator()
        start, end = self.window(req, validator)
        wanted = parse_query(req, validator, "format", _format, None) or (
            "csv" if req.client_prefers(["application/json", "text/csv"]) == "text/csv"
            else "json")
        breakdown = parse_query(req, validator, "breakdown", functools.partial(
            Validator.choice, choices=("true", "false")), "false") == "true"
        rows = self.rows(req, validator, start, end, breakdown)
        if wanted == "csv":
            resp.content_type = "text/csv; charset=utf-8"
            resp.downloadable_as = f"sales-{start}-{end}.csv"
            resp.data = museum_sales.report_csv(rows).encode()
        else:
            json_response(resp, rows)

    def window(self, req, validator):
        """The report's first and last day, from the query."""
        return date_window(req, validator, self.today(), 1, museum_sales.REPORT_DAYS_MAX)

    def rows(self, req, validator, start, end, breakdown=False):
        """The report's rows from `start` to `end` (`breakdown`: by category and channel
        too), once the query is valid (400) and the user may read that window (403: the desk
        reads today's only)."""
        self.check_window(req, validator, start, end)
        return museum_sales.report_rows(self.store, start, end, breakdown)

    def check_window(self, req, validator, start, end):
        """Refuse an invalid query (400), and a window the user may not read (403: the desk
        reads today's only)."""
        validator.raise_if_invalid(BAD_QUERY)
        if req.context.user.role != ADMIN_ROLE and (start, end) != (self.today(),) * 2:
            raise Problem(403, museum_sales.DESK_READS_TODAY)


class SalesChart(SalesReport):
    """The tickets sold per day of the report's window, as an SVG image drawn by the
    service (the desk page shows it with no chart library)."""

    described = {"get": Operation("getSalesChart", "Reports", "The sales report's chart",
        SalesReport.described["get"].parameters[:2], {
            200: "SalesChart", 403: "NotTodaysReport"})}

    def on_get(self, req, resp):
        validator = Validator()
        start, end = self.window(req, validator)
        svg_response(resp, sales_per_day_svg(self.rows(req, validator, start, end)))


class ArrivalsChart(SalesReport):
    """The admissions of the window's tickets per hour of the day at the museum, as an SVG
    image drawn by the service, with the places of each hour's entry slots marked for one
    day of timed entry; the same window and roles as the sales report."""

    described = {"get": Operation("getArrivalsChart", "Reports", "Arrivals per hour, as a "
                                  "chart", SalesReport.described["get"].parameters[:2], {
                                      200: "SalesChart", 403: "NotTodaysReport"})}

    def __init__(self, store, today, live):
        super().__init__(store, today)
        self.live = live  # museum_config.LiveConfig: the time zone, hours and slots

    def on_get(self, req, resp):
        validator = Validator()
        start, end = self.window(req, validator)
        self.check_window(req, validator, start, end)
        config = self.live.config
        arrivals = museum_sales.arrivals_per_hour(self.store, start, end,
                                                  config["museum"]["timezone"])
        places, note = None, NO_PLACES_PER_HOUR["window"]
        if start == end:
            places = museum_sales.slot_places_per_hour(config, self.store, start)
            note = "" if places else NO_PLACES_PER_HOUR["day"]
        window = start.isoformat() if start == end else f"{start} to {end}"
        svg_response(resp, arrivals_per_hour_svg(f"Arrivals per hour, {window}", arrivals,
                                                 places, note))


# Why an arrivals chart marks no places: an hour has places of its own only with timed
# entry (its slots'), and a window of several days adds arrivals of different days.
NO_PLACES_PER_HOUR = {
    "window": "No places are marked: the window has several days.",
    "day": "No places are marked: the day has no entry slots with a capacity (general "
           "entry's capacity is the whole day's)."}


def svg_response(resp, svg):
    """`svg`, a chart drawn now, as the answer: never kept by a cache."""
    resp.content_type = "image/svg+xml; charset=utf-8"
    resp.cache_control = ["no-store"]
    resp.data = svg.encode()


def _format(validator, name, text):
    return validator.choice(name, text, REPORT_FORMATS)
