"""The sales report: GET /v1.1/reports/sales (admin) as JSON or CSV, and `museum report`.
Dates follow conftest's NOW (Sunday 2026-11-22)."""

import csv
import io
import json
import re
from xml.etree import ElementTree

import pytest
from commands import museum_command
from conftest import ADMIN, DESK, GATE, TODAY, VISITOR, assert_problem
from ticketing import EVENTS, body, buy, create_event, sell_order

import museum

REPORT = "/v1.1/reports/sales"


@pytest.fixture
def priced(make_client, config_text):
    return make_client(museum.parse_config(config_text + "[tickets]\ngeneral_price = 8.5\n"))


def sell_a_mix(client):
    """Three general tickets today (one admitted, one void), two for an event on 5
    December, one of them void; returns the event."""
    general = [buy(client, body(ticketDate=TODAY)).json for _ in range(3)]
    client.post_json("/v1.1/admissions", {"confirmationCode": general[0]["confirmationCode"]},
                     headers=GATE, status=201)
    client.delete(f"/v1.1/tickets/{general[1]['ticketId']}", headers=ADMIN, status=204)
    event = create_event(client)
    tickets = [buy(client, body("event", eventId=event["eventId"])).json for _ in range(2)]
    client.delete(f"/v1.1/tickets/{tickets[0]['ticketId']}", headers=ADMIN, status=204)
    return event


def test_each_day_reports_general_entry_and_each_event(priced):
    event = sell_a_mix(priced)
    rows = priced.get(REPORT, params={"startDate": TODAY, "endDate": "2026-12-31"},
                      headers=ADMIN, status=200).json
    assert rows == [
        {"date": TODAY, "ticketType": "general", "eventId": None, "eventName": None,
         "sold": 3, "void": 1, "admitted": 1, "revenue": 17, "currency": "EUR",
         "doubleEntries": 0},
        {"date": "2026-12-05", "ticketType": "event", "eventId": event["eventId"],
         "eventName": event["name"], "sold": 2, "void": 1, "admitted": 0, "revenue": 12.5,
         "currency": "EUR", "doubleEntries": 0}]
    broken_down = priced.get(REPORT, params={"startDate": TODAY, "endDate": "2026-12-31",
                                             "breakdown": "true"}, headers=ADMIN,
                             status=200).json
    assert [row["categories"] for row in broken_down] == [
        [{"category": "adult", "sold": 3, "void": 1, "revenue": 17}],
        [{"category": "adult", "sold": 2, "void": 1, "revenue": 12.5}]]
    assert [row["channels"] for row in broken_down] == [
        [{"channel": "single", "sold": 3, "void": 1, "revenue": 17}],
        [{"channel": "single", "sold": 2, "void": 1, "revenue": 12.5}]]
    assert [{name: row[name] for name in rows[0]} for row in broken_down] == rows


def test_each_row_counts_its_tickets_by_category_and_by_channel(priced, store):
    """A family's web order (2 adults, 2 children), a desk order (1 child, then voided),
    one ticket sold alone; each ticket of an order at 10."""
    sell_order(store, ["adult", "adult", "child", "child"])
    desk = sell_order(store, ["child"], channel="desk", payment="cash", created_by="admin")
    store.void_order(desk["orderId"], "2026-11-22T12:00:00Z")
    buy(priced, body(ticketDate=TODAY))
    [row] = priced.get(REPORT, params={"breakdown": "true"}, headers=ADMIN, status=200).json
    assert (row["sold"], row["void"], row["revenue"]) == (6, 1, 48.5)
    assert row["categories"] == [
        {"category": "adult", "sold": 3, "void": 0, "revenue": 28.5},
        {"category": "child", "sold": 3, "void": 1, "revenue": 20}]
    assert row["channels"] == [
        {"channel": "desk", "sold": 1, "void": 1, "revenue": 0},
        {"channel": "single", "sold": 1, "void": 0, "revenue": 8.5},
        {"channel": "web", "sold": 4, "void": 0, "revenue": 40}]
    csv_rows = list(csv.DictReader(io.StringIO(priced.get(
        REPORT, params={"breakdown": "true"}, headers={**ADMIN, "Accept": "text/csv"},
        status=200).text)))
    assert {name: value for name, value in csv_rows[0].items() if ":" in name} == {
        "category:adult:sold": "3", "category:adult:void": "0",
        "category:adult:revenue": "28.5", "category:child:sold": "3",
        "category:child:void": "1", "category:child:revenue": "20",
        "channel:desk:sold": "1", "channel:desk:void": "1", "channel:desk:revenue": "0",
        "channel:single:sold": "1", "channel:single:void": "0",
        "channel:single:revenue": "8.5", "channel:web:sold": "4", "channel:web:void": "0",
        "channel:web:revenue": "40"}


def test_the_default_report_is_today(priced):
    sell_a_mix(priced)
    assert [row["date"] for row in priced.get(REPORT, headers=ADMIN, status=200).json] == [
        TODAY]


def test_the_report_as_csv_neutralises_formulas(client):
    event = client.post_json(EVENTS, {"name": "=HYPERLINK(\"x\")", "location": "Hall",
                                      "eventDescription": "Sums.", "dates": ["2026-12-05"],
                                      "price": 9.99}, headers=ADMIN, status=201).json
    buy(client, body("event", eventId=event["eventId"]))
    res = client.get(REPORT, params={"startDate": "2026-12-05"},
                     headers={**ADMIN, "Accept": "text/csv"}, status=200)
    assert res.content_type == "text/csv"
    assert "attachment" in res.headers["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(res.text)))
    assert rows == [
        ["date", "ticketType", "eventId", "eventName", "sold", "void", "admitted", "revenue",
         "currency", "doubleEntries"],
        ["2026-12-05", "event", event["eventId"], "'=HYPERLINK(\"x\")", "1", "0", "0", "9.99",
         "EUR", "0"]]


@pytest.mark.parametrize("name", ["+1", "-1", "@SUM(A1)", "\tx"])
def test_every_formula_start_is_neutralised(name):
    from museum_sales import report_csv

    row = {"date": TODAY, "ticketType": "event", "eventId": "x", "eventName": name, "sold": 1,
           "void": 0, "admitted": 0, "revenue": 1, "currency": "EUR", "doubleEntries": 0,
           "categories": [], "channels": []}
    assert list(csv.reader(io.StringIO(report_csv([row]))))[1][3] == "'" + name


@pytest.mark.parametrize("headers", [VISITOR, GATE])
def test_only_admins_read_the_report(client, headers):
    assert_problem(client.get(REPORT, headers=headers, status=403), 403)


def test_a_report_is_at_most_366_days(client):
    client.get(REPORT, params={"startDate": "2026-01-01", "endDate": "2027-01-01"},
               headers=ADMIN, status=200)
    res = client.get(REPORT, params={"startDate": "2026-01-01", "endDate": "2027-01-02"},
                     headers=ADMIN, status=400)
    assert_problem(res, 400, "endDate")


def test_museum_report_prints_the_same_as_json_and_csv(tmp_path, make_client, config_text,
                                                        db_path, store):
    event = sell_a_mix(make_client(museum.parse_config(config_text)))
    store.close()
    config = config_text + f"[storage]\nurl = {db_path}\n"
    done = museum_command(tmp_path, config, "report", "--from", TODAY, "--to", "2026-12-31")
    assert done.status == 0, done.err
    rows = json.loads(done.out)
    assert [(row["date"], row["eventId"], row["sold"]) for row in rows] == [
        (TODAY, None, 3), ("2026-12-05", event["eventId"], 2)]
    done = museum_command(tmp_path, config, "report", "--from", TODAY, "--to", "2026-12-31",
                          "--csv")
    assert done.status == 0 and done.out.splitlines()[0].startswith("date,ticketType,")
    assert len(done.out.splitlines()) == 3
    done = museum_command(tmp_path, config, "report", "--from", TODAY, "--to", TODAY,
                          "--breakdown")
    assert done.status == 0, done.err
    assert json.loads(done.out)[0]["channels"] == [
        {"channel": "single", "sold": 3, "void": 1, "revenue": 0}]


@pytest.mark.parametrize("dates", [("2026-12-02", "2026-12-01"), ("2026-01-01", "2027-01-02")])
def test_museum_report_refuses_a_bad_window(tmp_path, config_text, dates):
    done = museum_command(tmp_path, config_text, "report", "--from", dates[0], "--to", dates[1])
    assert done.status == 2 and "--to" in done.err


HOSTILE = ["a;=1+2;", "x,@SUM(A1)", 'b;"=2"', "c;-3", "\r=4", "ok\n+5", "d;\t=6"]


def test_no_cell_starts_a_formula_in_any_column_with_either_separator():
    """A spreadsheet reading the report with `;` (where the decimal mark is a comma) splits
    a value at each `;` in it, whatever quotes surround it: read blind to quotes, splitting
    at every `,`, `;` and line end, no cell of any column starts a formula."""
    from museum_sales import FORMULA_STARTS, REPORT_COLUMNS, report_csv

    text = report_csv([{**{name: value for name in REPORT_COLUMNS}, "categories": [],
                        "channels": []} for value in HOSTILE])
    cells = [cell.lstrip('"') for cell in re.split(r"[,;\r\n]", text)]
    assert [cell for cell in cells if cell.startswith(FORMULA_STARTS)] == []
    # Read as written, each value comes back whole, with a "'" before each cell start.
    rows = list(csv.reader(io.StringIO(text, newline="")))[1:]
    assert rows[0] == ["a;'=1+2;"] * len(REPORT_COLUMNS)
    assert [row[3] for row in rows] == ["a;'=1+2;", "x,'@SUM(A1)", 'b;"\'=2"', "c;'-3",
                                        "'\r'=4", "ok\n'+5", "d;'\t=6"]


def test_format_csv_is_the_csv_a_browser_link_downloads(priced):
    """`?format=csv` answers what `Accept: text/csv` does, whatever the browser accepts;
    `?format=json` answers JSON though CSV is preferred."""
    sell_a_mix(priced)
    by_accept = priced.get(REPORT, headers={**ADMIN, "Accept": "text/csv"}, status=200)
    linked = priced.get(REPORT, params={"format": "csv"},
                        headers={**ADMIN, "Accept": "text/html,*/*;q=0.8"}, status=200)
    assert linked.content_type == "text/csv"
    assert linked.headers["Content-Disposition"] == by_accept.headers["Content-Disposition"]
    assert linked.text == by_accept.text
    as_json = priced.get(REPORT, params={"format": "json"},
                         headers={**ADMIN, "Accept": "text/csv"}, status=200)
    assert as_json.content_type == "application/json"


@pytest.mark.parametrize("query", ["format=xml", "format=csv&format=json"])
def test_an_unknown_or_repeated_format_is_refused(client, query):
    assert_problem(client.get(f"{REPORT}?{query}", headers=ADMIN, status=400), 400, "format")


def test_the_chart_draws_the_tickets_sold_per_day_as_svg(priced):
    """One bar per day of the window with its count of tickets not void; the desk reads
    today's chart only, as it reads the report."""
    sell_a_mix(priced)
    rows = priced.get(REPORT, headers=ADMIN, status=200).json
    res = priced.get(f"{REPORT}/chart", headers=ADMIN, status=200)
    assert res.content_type == "image/svg+xml"
    svg = ElementTree.fromstring(res.body)
    bars = svg.findall("{http://www.w3.org/2000/svg}rect")
    assert [bar.find("{http://www.w3.org/2000/svg}title").text for bar in bars] == [
        f"{TODAY}: {sum(row['sold'] - row['void'] for row in rows)}"]
    assert_problem(priced.get(f"{REPORT}/chart", params={"startDate": "2026-12-01"},
                              headers=DESK, status=403), 403)


def test_an_empty_window_draws_an_empty_chart(client):
    res = client.get(f"{REPORT}/chart", params={"startDate": "2026-12-01",
                                                "endDate": "2026-12-31"},
                     headers=ADMIN, status=200)
    svg = ElementTree.fromstring(res.body)
    assert svg.findall("{http://www.w3.org/2000/svg}rect") == []
    assert "No tickets sold" in res.text
