"""Email: a ticket's mail composed (plain text and HTML from templates, the ticket's PNG,
one calendar entry per visit) and handed to the SMTP server `[mail] url` names, with the
standard library's `email` and `smtplib` only. Knows nothing of HTTP or of the outbox
that decides when to send (museum_outbox)."""

import html
import smtplib
import ssl
import string
from datetime import datetime, time, timedelta, timezone
from email.message import EmailMessage
from email.utils import format_datetime
from importlib import resources
from pathlib import Path
from urllib.parse import unquote, urlsplit

from museum_config import ConfigError
from museum_ticket_image import TicketImages
from museum_vocabulary import TICKET_LABELS

SMTP_TIMEOUT = 30  # seconds a connection or a reply of the server may take
DEFAULT_PORTS = {"smtp": 25, "smtps": 465, "smtp+starttls": 587}
TEMPLATE_NAMES = ("ticket-subject.txt", "ticket.txt", "ticket.html")
VISIT_WITHOUT_SLOT = timedelta(hours=1)  # a timed ticket's calendar entry lasts this long


class MailFailed(Exception):
    """The SMTP server could not be reached or refused the mail; the message is its answer."""


# -- templates ---------------------------------------------------------------------------------

def load_templates(directory=""):
    """{name: string.Template} of TEMPLATE_NAMES: each from `directory` where it has a file of
    that name, else the shipped English one. `ConfigError` when `directory` is not one: a
    mistyped path would otherwise send the shipped wording unnoticed."""
    if directory and not Path(directory).is_dir():
        raise ConfigError(f"[mail] templates: {directory} is not a directory")
    shipped = resources.files("museum_mail_templates")
    templates = {}
    for name in TEMPLATE_NAMES:
        own = Path(directory, name) if directory else None
        source = own if own is not None and own.is_file() else shipped / name
        templates[name] = string.Template(source.read_text(encoding="utf-8"))
    return templates


# -- a ticket's mail -------------------------------------------------------------------------

def ticket_details(ticket):
    """(label, value) of what a visitor needs to know of the ticket, in order."""
    details = [("Ticket", TICKET_LABELS[ticket["ticketType"]])]
    if ticket["eventName"]:
        details.append(("Event", ticket["eventName"]))
    details.append(("Date", ticket["ticketDate"]))
    if ticket["entryTime"]:
        details.append(("Entry", ticket["entryTime"]))
    details.append(("Code", ticket["confirmationCode"]))
    return details


def compose_ticket_mail(message_id, ticket, sender, museum, secret, templates, zone, now):
    """The mail of `ticket` (as the store reads it back) to its buyer: plain text and HTML,
    the ticket's PNG and its calendar entry attached. `message_id` (the outbox row's id)
    makes a Message-ID a resend repeats, so a receiver can tell a resend from a new mail.
    `sender` holds `from` and `reply_to` of [mail]; `zone` is the museum's time zone
    (None: UTC), `now` an aware datetime."""
    details = ticket_details(ticket)
    values = {"museum": museum, "date": ticket["ticketDate"],
              "code": ticket["confirmationCode"]}
    mail = EmailMessage()
    mail["Subject"] = templates["ticket-subject.txt"].safe_substitute(values).strip()
    mail["From"] = sender["from"]
    mail["To"] = ticket["email"]
    if sender["reply_to"]:
        mail["Reply-To"] = sender["reply_to"]
    mail["Date"] = format_datetime(now)
    mail["Message-ID"] = f"<{message_id}@{sender['from'].rpartition('@')[2]}>"
    text = "\n".join(f"{label}: {value}" for label, value in details)
    mail.set_content(templates["ticket.txt"].safe_substitute(values, details=text))
    rows = "\n".join(f"<tr><th style=\"text-align: left; padding-right: 1em\">{label}</th>"
                     f"<td>{html.escape(value)}</td></tr>" for label, value in details)
    escaped = {key: html.escape(value) for key, value in values.items()}
    mail.add_alternative(templates["ticket.html"].safe_substitute(escaped, details=rows),
                         subtype="html")
    png, _ = TicketImages(secret).image(ticket)
    code = ticket["confirmationCode"]
    mail.add_attachment(png, maintype="image", subtype="png", filename=f"{code}.png")
    mail.add_attachment(visit_calendar(ticket, museum, zone, now).encode(), maintype="text",
                        subtype="calendar", params={"method": "PUBLISH"},
                        filename=f"{code}.ics")
    return mail


# -- the calendar entry (RFC 5545) -----------------------------------------------------------

def visit_calendar(ticket, museum, zone, now):
    """An iCalendar file of one event, the visit: the whole day, or an hour from the entry
    time of a timed ticket (in UTC, so no time zone block is needed). Lines end in CRLF and
    are folded at 75 octets; no ORGANIZER (RFC 5546 would make it an invitation to
    answer)."""
    day = datetime.fromisoformat(ticket["ticketDate"]).date()
    if ticket["entryTime"]:
        start = datetime.combine(day, time.fromisoformat(ticket["entryTime"]),
                                 zone or timezone.utc)
        when = [f"DTSTART:{_utc(start)}", f"DTEND:{_utc(start + VISIT_WITHOUT_SLOT)}"]
    else:
        when = [f"DTSTART;VALUE=DATE:{day:%Y%m%d}",
                f"DTEND;VALUE=DATE:{day + timedelta(days=1):%Y%m%d}"]
    summary = f"{museum}: {ticket['eventName'] or TICKET_LABELS[ticket['ticketType']]}"
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//museum service//tickets//EN",
             "METHOD:PUBLISH", "CALSCALE:GREGORIAN", "BEGIN:VEVENT",
             f"UID:{ticket['ticketId']}@museum-ticket", f"DTSTAMP:{_utc(now)}", *when,
             f"SUMMARY:{_ics_text(summary)}",
             f"DESCRIPTION:{_ics_text('Ticket ' + ticket['confirmationCode'])}",
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
