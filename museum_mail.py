"""Email: a ticket's mail composed (plain text and HTML from templates, the ticket's PNG,
one calendar entry per visit) and handed to the SMTP server `[mail] url` names, with the
standard library's `email` and `smtplib` only. Knows nothing of HTTP or of the outbox
that decides when to send (museum_outbox)."""

import html
import smtplib
import ssl
import string
from dataclasses import dataclass
from datetime import datetime, time, timedelta, timezone
from email.message import EmailMessage
from email.utils import format_datetime
from importlib import resources
from pathlib import Path
from urllib.parse import unquote, urlsplit

from museum_config import ConfigError
from museum_ticket_image import TicketImages
from museum_ticket_page import PAGE_PATH

SMTP_TIMEOUT = 30  # seconds a connection or a reply of the server may take
DEFAULT_PORTS = {"smtp": 25, "smtps": 465, "smtp+starttls": 587}
TEMPLATE_NAMES = ("ticket-subject.txt", "tickets-subject.txt", "ticket.txt", "ticket.html")
VISIT_WITHOUT_SLOT = timedelta(hours=1)  # a timed ticket's calendar entry lasts this long
# The words of a ticket's details, by language, as the mail and its calendar entry show them.
WORDS = {
    "en": {"ticket": "Ticket", "event": "Event", "date": "Date", "entry": "Entry",
           "code": "Code", "category": "Category", "page": "Ticket page",
           "general": "General entry", "special": "Special event"},
    "de": {"ticket": "Ticket", "event": "Ausstellung", "date": "Datum", "entry": "Einlass",
           "code": "Code", "category": "Kategorie", "page": "Ticketseite",
           "general": "Eintritt", "special": "Sonderausstellung"},
}


@dataclass(frozen=True)
class MailSettings:
    """What every mail is composed with: `sender` ([mail]: "from", "reply_to"), the museum's
    name and language, the templates (`load_templates`), its time zone (None: UTC), the
    key that signs the tickets' QR codes and the service's public URL (the tickets' pages
    are linked on it; "" links none: a path alone leads nowhere from a mail)."""

    sender: dict
    museum: str
    language: str
    templates: dict
    zone: object
    secret: str
    public_url: str = ""


class MailFailed(Exception):
    """The SMTP server could not be reached or refused the mail; the message is its answer."""


# -- templates ---------------------------------------------------------------------------------

def load_templates(directory="", language="en"):
    """{name: string.Template} of TEMPLATE_NAMES: each from `directory` where it has a file of
    that name, else the shipped one in `language`. `ConfigError` when `directory` is not
    one: a mistyped path would otherwise send the shipped wording unnoticed."""
    if directory and not Path(directory).is_dir():
        raise ConfigError(f"[mail] templates: {directory} is not a directory")
    shipped = resources.files("museum_mail_templates") / language
    templates = {}
    for name in TEMPLATE_NAMES:
        own = Path(directory, name) if directory else None
        source = own if own is not None and own.is_file() else shipped / name
        templates[name] = string.Template(source.read_text(encoding="utf-8"))
    return templates


# -- a mail of one or several tickets --------------------------------------------------------

def ticket_details(ticket, words, public_url=""):
    """(label, value) of what a visitor needs to know of the ticket, in order, in `words`
    (one of WORDS), ending with its page's link on `public_url` when that is set."""
    kind = words["special"] if ticket["ticketType"] == "event" else words["general"]
    details = [(words["ticket"], kind)]
    if ticket["eventName"]:
        details.append((words["event"], ticket["eventName"]))
    if ticket.get("category"):
        details.append((words["category"], ticket["category"]))
    details.append((words["date"], ticket["ticketDate"]))
    if ticket["entryTime"]:
        details.append((words["entry"], ticket["entryTime"]))
    details.append((words["code"], ticket["confirmationCode"]))
    if public_url and ticket.get("pageToken"):
        details.append((words["page"], f"{public_url}{PAGE_PATH}/{ticket['pageToken']}"))
    return details


def compose_mail(message_id, address, tickets, settings, now):
    """The mail of `tickets` (as the store reads them back: one ticket's, or all of an
    order's) to `address`: plain text and HTML listing each ticket, each ticket's PNG and
    one calendar entry per visit attached. `message_id` (the outbox row's id) makes a
    Message-ID a resend repeats, so a receiver can tell a resend from a new mail.
    `settings` is a `MailSettings`; `now` an aware datetime."""
    words = WORDS[settings.language]
    details = [ticket_details(ticket, words, settings.public_url) for ticket in tickets]
    dates = sorted({ticket["ticketDate"] for ticket in tickets})
    values = {"museum": settings.museum, "date": ", ".join(dates),
              "code": tickets[0]["confirmationCode"], "count": str(len(tickets))}
    mail = EmailMessage()
    subject = "ticket-subject.txt" if len(tickets) == 1 else "tickets-subject.txt"
    mail["Subject"] = settings.templates[subject].safe_substitute(values).strip()
    mail["From"] = settings.sender["from"]
    mail["To"] = address
    if settings.sender["reply_to"]:
        mail["Reply-To"] = settings.sender["reply_to"]
    mail["Date"] = format_datetime(now)
    mail["Message-ID"] = f"<{message_id}@{settings.sender['from'].rpartition('@')[2]}>"
    text = "\n\n".join("\n".join(f"{label}: {value}" for label, value in ticket)
                        for ticket in details)
    mail.set_content(settings.templates["ticket.txt"].safe_substitute(values, details=text))
    rows = "\n<tr><td colspan=\"2\">&nbsp;</td></tr>\n".join(
        "\n".join(f"<tr><th style=\"text-align: left; padding-right: 1em\">{label}</th>"
                  f"<td>{_html_value(label, value, words)}</td></tr>" for label, value in ticket)
        for ticket in details)
    escaped = {key: html.escape(value) for key, value in values.items()}
    mail.add_alternative(settings.templates["ticket.html"].safe_substitute(escaped,
                                                                           details=rows),
                         subtype="html")
    images = TicketImages(settings.secret)
    for ticket in tickets:
        png, _ = images.image(ticket)
        mail.add_attachment(png, maintype="image", subtype="png",
                            filename=f"{ticket['confirmationCode']}.png")
    for visit in visits(tickets):
        mail.add_attachment(visit_calendar(visit, settings, words, now).encode(),
                            maintype="text", subtype="calendar",
                            params={"method": "PUBLISH"},
                            filename=f"{visit[0]['confirmationCode']}.ics")
    return mail


def _html_value(label, value, words):
    """A detail's value as HTML: the ticket page's link clickable, anything else as text."""
    escaped = html.escape(value)
    return f'<a href="{escaped}">{escaped}</a>' if label == words["page"] else escaped


def visits(tickets):
    """The tickets grouped by visit (date, entry time, event), in the order of the tickets:
    a family's four tickets for one slot are one entry in a calendar."""
    grouped = {}
    for ticket in tickets:
        visit = (ticket["ticketDate"], ticket["entryTime"], ticket["eventId"])
        grouped.setdefault(visit, []).append(ticket)
    return list(grouped.values())


# -- the calendar entry (RFC 5545) -----------------------------------------------------------

def visit_calendar(visit, settings, words, now):
    """An iCalendar file of one event, the visit of `visit`'s tickets (same date, entry time
    and event): the whole day, or an hour from the entry time of timed tickets (in UTC, so
    no time zone block is needed). Its UID is the first ticket's, so a resend updates the
    entry rather than adding one. Lines end in CRLF and are folded at 75 octets; no
    ORGANIZER (RFC 5546 would make it an invitation to answer)."""
    first = visit[0]
    day = datetime.fromisoformat(first["ticketDate"]).date()
    if first["entryTime"]:
        start = datetime.combine(day, time.fromisoformat(first["entryTime"]),
                                 settings.zone or timezone.utc)
        when = [f"DTSTART:{_utc(start)}", f"DTEND:{_utc(start + VISIT_WITHOUT_SLOT)}"]
    else:
        when = [f"DTSTART;VALUE=DATE:{day:%Y%m%d}",
                f"DTEND;VALUE=DATE:{day + timedelta(days=1):%Y%m%d}"]
    kind = words["special"] if first["ticketType"] == "event" else words["general"]
    summary = f"{settings.museum}: {first['eventName'] or kind}"
    codes = ", ".join(ticket["confirmationCode"] for ticket in visit)
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//museum service//tickets//EN",
             "METHOD:PUBLISH", "CALSCALE:GREGORIAN", "BEGIN:VEVENT",
             f"UID:{first['ticketId']}@museum-ticket", f"DTSTAMP:{_utc(now)}", *when,
             f"SUMMARY:{_ics_text(summary)}",
             f"DESCRIPTION:{_ics_text(words['ticket'] + ' ' + codes)}",
             "TRANSP:TRANSPARENT", "END:VEVENT", "END:VCALENDAR"]
    return "".join(f"{_folded(line)}\r\n" for line in lines)


def _utc(moment):
    return moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def _ics_text(value):
    """A TEXT value escaped as RFC 5545 3.3.11 says."""
    return (value.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
            .replace("\r\n", "\\n").replace("\n", "\\n"))


def _folded(line, limit=75):
    """`line` folded into pieces of at most `limit` octets (RFC 5545 3.1), never inside a
    UTF-8 character; each continuation starts with a space, which counts."""
    pieces, piece = [], ""
    for character in line:
        room = limit - (1 if pieces else 0)
        if len((piece + character).encode()) > room:
            pieces.append(piece)
            piece = ""
        piece += character
    return "\r\n ".join([*pieces, piece])


# -- sending -----------------------------------------------------------------------------------

def send_mail(url, mail):
    """Hand `mail` to the SMTP server of `url` (`[mail] url`); return its answer to the
    mail's data. `MailFailed` with the server's answer (or the connection's failure)
    otherwise: the outbox tries again later."""
    parts = urlsplit(url)
    port = parts.port or DEFAULT_PORTS[parts.scheme]
    try:
        if parts.scheme == "smtps":
            server = smtplib.SMTP_SSL(parts.hostname, port, timeout=SMTP_TIMEOUT,
                                      context=ssl.create_default_context())
        else:
            server = smtplib.SMTP(parts.hostname, port, timeout=SMTP_TIMEOUT)
        with server:
            if parts.scheme == "smtp+starttls":
                server.starttls(context=ssl.create_default_context())
            if parts.username:
                server.login(unquote(parts.username), unquote(parts.password or ""))
            refused = server.send_message(mail)
    except smtplib.SMTPRecipientsRefused as error:
        raise MailFailed(_answers(error.recipients.values())) from error
    except smtplib.SMTPResponseException as error:
        raise MailFailed(_answer(error.smtp_code, error.smtp_error)) from error
    except (smtplib.SMTPException, OSError) as error:
        raise MailFailed(f"{type(error).__name__}: {error}") from error
    if refused:
        raise MailFailed(_answers(refused.values()))
    return f"accepted by {parts.hostname}:{port}"


def _answer(code, text):
    return f"{code} {text.decode(errors='replace') if isinstance(text, bytes) else text}"


def _answers(pairs):
    return "; ".join(_answer(code, text) for code, text in pairs)
