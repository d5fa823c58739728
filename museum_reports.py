"""The reports: what was sold for each day of a window (`/v1.1/reports/sales`), as JSON
or CSV. The rows and the CSV are museum_sales'; this module serves them.
"""

import functools

import museum_sales
from museum_http import BAD_QUERY, Problem, date_window, json_response, parse_query
from museum_openapi import DATE_SCHEMA, Operation, query
from museum_validation import Validator
from museum_vocabulary import ADMIN_ROLE, DESK_ROLE


class SalesReport:
    """What was sold for each day of a window (at most REPORT_DAYS_MAX days, by default
    today alone), with `breakdown=true` by category and channel too: JSON, or CSV when the
    client prefers `text/csv`. The desk reads today's."""

    needed_roles = {"GET": DESK_ROLE}
    described = {"get": Operation("getSalesReport", "Reports", "The sales report", (
        query("startDate", "First day; defaults to today at the museum.", DATE_SCHEMA,
              "2027-10-01"),
        query("endDate", f"Last day; defaults to `startDate`, at most "
              f"{museum_sales.REPORT_DAYS_MAX - 1} days after it.", DATE_SCHEMA, "2027-10-31"),
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
        start, end = date_window(req, validator, self.today(), 1, museum_sales.REPORT_DAYS_MAX)
        breakdown = parse_query(req, validator, "breakdown", functools.partial(
            Validator.choice, choices=("true", "false")), "false") == "true"
        validator.raise_if_invalid(BAD_QUERY)
        if req.context.user.role != ADMIN_ROLE and (start, end) != (self.today(),) * 2:
            raise Problem(403, museum_sales.DESK_READS_TODAY)
        rows = museum_sales.report_rows(self.store, start, end, breakdown)
        if req.client_prefers(["application/json", "text/csv"]) == "text/csv":
            resp.content_type = "text/csv; charset=utf-8"
            resp.downloadable_as = f"sales-{start}-{end}.csv"
            resp.data = museum_sales.report_csv(rows).encode()
        else:
            json_response(resp, rows)
