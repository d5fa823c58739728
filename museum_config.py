"""The museum service's settings: the schema of museum.ini (each option's default, check
and help), its parsing and precedence, the opening-hours schedule and general entry
capacity it describes, a running app's live config, and the demo-password rule.

Kept apart from museum.py because it has a life of its own (the CLI's help, the shipped
file's tests) and knows nothing of HTTP. The password hashes and device keys of [users]
are museum_credentials'; the words shared with the rest of the service, museum_vocabulary's.
"""

import configparser
import ipaddress
import logging
import os
import re
import stat
from dataclasses import dataclass, field, fields, replace
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from museum_categories import parse_categories
from museum_credentials import (DEMO_PASSWORD, DEMO_PASSWORD_HASHES, User, check_password,
                                hash_is_readable, is_weak)
from museum_vocabulary import (CAPACITY_MAX, CURRENCY, DATE, MAIL_LANGUAGES, PRICE_MAX, ROLES,
                               minute_of_day, number_of_places, price_in_hundredths,
                               time_of_day)
from storage import Limits, sqlite_path

log = logging.getLogger("museum")


# ============================================================================================
# Configuration
# ============================================================================================

class ConfigError(Exception):
    """A config value is wrong; the message names the file, section and key."""


WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
TIME_RANGE = re.compile(r"(\d\d):(\d\d)-(\d\d):(\d\d)")


def _text(value):
    return value


def _positive_int(value):
    number = int(value)
    if number < 1:
        raise ValueError("must be a whole number >= 1")
    return number


def _boolean(value):
    states = configparser.ConfigParser.BOOLEAN_STATES  # true/false, yes/no, on/off, 1/0
    if value.lower() not in states:
        raise ValueError(f"must be true or false, not {value!r}")
    return states[value.lower()]


def _seconds(value):
    number = float(value)
    if not 0 <= number <= 3600:
        raise ValueError("must be a number of seconds from 0 to 3600")
    return number


def _timeout(value):
    number = float(value)
    if not 0 < number <= 600:
        raise ValueError("must be a number of seconds above 0, at most 600")
    return number


LOG_LEVELS = ("debug", "info", "warning", "error")


def _log_level(value):
    if value.lower() not in LOG_LEVELS:
        raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}, not {value!r}")
    return value.upper()  # as the logging module names it


def _language(value):
    if value not in MAIL_LANGUAGES:
        raise ValueError(f"must be one of {', '.join(MAIL_LANGUAGES)}, not {value!r}")
    return value


def _port(value):
    number = int(value)
    if not 0 <= number <= 65535:
        raise ValueError("must be a port number 0..65535")
    return number


def _ip_address_or_empty(value):
    # One exact address: waitress compares it with the peer's address as a string, and a
    # wildcard would let any client forge the X-Forwarded-* headers.
    if not value:
        return ""
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        raise ValueError(f"must be exactly one IP address (v4 or v6), not {value!r}") from None


def _socket_mode(value):
    # Octal like chmod's; write permission on a socket is what lets a process connect.
    try:
        mode = int(value, 8)
    except ValueError:
        mode = -1
    if not 0 <= mode <= 0o777:
        raise ValueError(f"must be permissions in octal such as 660, not {value!r}")
    return mode


def _public_url(value):
    # The Link and Location headers are built on it: a base to which a path is appended.
    if not value:
        return ""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname or "?" in value \
            or "#" in value:
        raise ValueError(f"must be an http(s) URL such as https://museum.example.org, without "
                         f"query or fragment, not {value!r}")
    return value.rstrip("/")


QR_SECRET_MIN_LENGTH = 32


def _qr_secret(value):
    if value and len(value) < QR_SECRET_MIN_LENGTH:
        raise ValueError(f"must be at least {QR_SECRET_MIN_LENGTH} characters (or empty: "
                         f"generated at first start)")
    return value


def _time_zone(value):
    if not value:
        return None
    try:
        return ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {value!r} (use an IANA name such as Europe/Paris)")


def _opening_hours(value):
    """`closed` or `HH:MM-HH:MM` -> None or ("HH:MM", "HH:MM")."""
    if value.lower() == "closed":
        return None
    match = TIME_RANGE.fullmatch(value)
    if not match:
        raise ValueError(f"{value!r} is neither 'closed' nor a range like 09:00-18:00")
    hours_open, minutes_open, hours_close, minutes_close = map(int, match.groups())
    if max(hours_open, hours_close) > 23 or max(minutes_open, minutes_close) > 59:
        raise ValueError(f"{value!r} is not a valid time of day")
    if (hours_open, minutes_open) >= (hours_close, minutes_close):
        raise ValueError(f"{value!r} closes before it opens")
    return value[:5], value[6:]


def _currency(value):
    if not CURRENCY.fullmatch(value):
        raise ValueError(f"must be an ISO 4217 code of three capital letters such as EUR, "
                         f"not {value!r}")
    return value


def _price(value):
    """A price (museum_vocabulary.price_in_hundredths) -> whole hundredths, read as a
    Decimal so that it stays exact (never a float)."""
    try:
        return price_in_hundredths(Decimal(value))
    except (InvalidOperation, ValueError):
        raise ValueError(f"must be a price from 0 to {PRICE_MAX} with at most 2 decimals, "
                         f"not {value!r}") from None


def _places(value):
    """A number of places (museum_vocabulary.number_of_places) in digits; empty or
    `unlimited`: None."""
    if value in ("", "unlimited"):
        return None
    digits = value.isascii() and value.isdigit()  # int() would take "+5", " 5" or "5_000"
    try:
        return number_of_places(int(value) if digits else value)  # text is no number
    except ValueError:
        raise ValueError(f"must be a number of places from 1 to {CAPACITY_MAX}, or "
                         f"'unlimited', not {value!r}") from None


SLOT_MINUTES_MIN, SLOT_MINUTES_MAX = 5, 1440


def _slot_minutes(value):
    """The length of an entry slot in minutes; empty: no timed entry (None)."""
    if not value:
        return None
    if not (value.isascii() and value.isdigit()
            and SLOT_MINUTES_MIN <= int(value) <= SLOT_MINUTES_MAX):
        raise ValueError(f"must be a number of minutes from {SLOT_MINUTES_MIN} to "
                         f"{SLOT_MINUTES_MAX}, or empty (no timed entry), not {value!r}")
    return int(value)


PURCHASES_PER_HOUR_MAX = 100_000


def _purchases_per_hour(value):
    """A number of purchases an hour, 1 to PURCHASES_PER_HOUR_MAX; empty: no limit (None)."""
    if not value:
        return None
    if not (value.isascii() and value.isdigit()
            and 1 <= int(value) <= PURCHASES_PER_HOUR_MAX):
        raise ValueError(f"must be a number of tickets from 1 to {PURCHASES_PER_HOUR_MAX}, "
                         f"or empty (no limit), not {value!r}")
    return int(value)


DEFAULT_PORTS = {"http": 80, "https": 443}


def _origins(value):
    """Web origins separated by spaces or commas -> a tuple of each as a browser writes it
    in its Origin header (scheme://host, a port only when not the scheme's own), so that
    the comparison is of exact strings. No wildcard: each origin is named."""
    origins = []
    for text in value.replace(",", " ").split():
        parts = urlsplit(text)
        try:
            port = parts.port
        except ValueError:
            port = -1
        if parts.scheme not in DEFAULT_PORTS or not parts.hostname or parts.username \
                or port == -1 or parts.path not in ("", "/") or parts.query or parts.fragment:
            raise ValueError(f"{text!r} is not a web origin such as https://museum.example.org "
                             f"(scheme, host and port only)")
        port_part = "" if port in (None, DEFAULT_PORTS[parts.scheme]) else f":{port}"
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        origins.append(f"{parts.scheme}://{host}{port_part}")
    return tuple(dict.fromkeys(origins))


def _minutes(value):
    if not (value.isascii() and value.isdigit() and int(value) <= 1440):
        raise ValueError(f"must be a number of minutes from 0 to 1440, not {value!r}")
    return int(value)


HOLD_MINUTES_MAX = 1440


def _hold_minutes(value):
    if not (value.isascii() and value.isdigit() and 1 <= int(value) <= HOLD_MINUTES_MAX):
        raise ValueError(f"must be a number of minutes from 1 to {HOLD_MINUTES_MAX}, "
                         f"not {value!r}")
    return int(value)


MAIL_SCHEMES = ("smtp", "smtps", "smtp+starttls")


def _mail_url(value):
    """`smtp://`, `smtps://` or `smtp+starttls://[user:password@]host[:port]`; empty: no
    email is sent."""
    if not value:
        return ""
    parts = urlsplit(value)
    try:
        parts.port
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in MAIL_SCHEMES or not parts.hostname \
            or parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError("must be smtp://, smtps:// or smtp+starttls://[user:password@]host"
                         "[:port], or empty (no email)")
    return value


def _email_address_or_empty(value):
    if value and not re.fullmatch(r"[^@\s<>]+@[^@\s<>]+", value):
        raise ValueError(f"must be an email address such as tickets@museum.example.org, "
                         f"not {value!r}")
    return value


@dataclass(frozen=True)
class Option:
    default: str
    parse: callable
    help: str


# The one description of every fixed option: it checks files, fills defaults and renders help.
SCHEMA = {
    "server": {
        "host": Option("127.0.0.1", _text, "address to listen on; 127.0.0.1 keeps the service "
                       "on this machine (put a TLS proxy in front to publish it)"),
        "port": Option("8080", _port, "TCP port to listen on (0 picks a free one)"),
        "threads": Option("4", _positive_int, "worker threads answering requests"),
        "connection_limit": Option("100", _positive_int, "open connections accepted at once"),
        "channel_timeout": Option("30", _positive_int,
                                  "seconds an idle or stalled connection is kept open"),
        "request_timeout": Option("10", _positive_int,
                                  "no longer used, accepted so that configs setting it still "
                                  "load: slow clients are the TLS proxy's to stop "
                                  "(docs/nginx.conf)"),
        "max_request_header_size": Option("65536", _positive_int,
                                          "bytes of request line and headers (more: 431)"),
        "max_request_body_size": Option("1048576", _positive_int,
                                        "bytes of body waitress buffers (more: 413); the API "
                                        "itself takes JSON bodies up to 65536"),
        "ident": Option("museum", _text, "the Server header sent with every response"),
        "trusted_proxy": Option("", _ip_address_or_empty, "IP address of a reverse proxy whose "
                                "X-Forwarded-* headers are trusted (empty: none)"),
        "unix_socket": Option("", _text, "path of a unix socket to listen on instead of host "
                              "and port, for a proxy on this machine; whoever may connect to "
                              "it is trusted as the proxy (empty: TCP)"),
        "unix_socket_mode": Option("660", _socket_mode, "permissions of the unix socket, in "
                                   "octal: who may connect (its owner and group by default)"),
        "public_url": Option("", _public_url, "the URL clients reach the service at, such as "
                             "https://museum.example.org; Link and Location headers are built "
                             "on it, never on the Host a client sent (empty: from the request)"),
    },
    "storage": {
        "url": Option("museum.sqlite3", _text, "sqlite database file (or sqlite:///path; a "
                      "relative path is taken from the config file's directory), or "
                      "postgresql://user@host/dbname to share one database between instances"),
        "auto_migrate": Option("false", _boolean, "migrate a database of an older version at "
                               "start as 'museum serve --migrate' does (sqlite: after a backup "
                               "beside it); a new database is always set up"),
        "busy_timeout": Option(f"{Limits.busy_timeout:g}", _timeout, "sqlite: seconds a write "
                               "waits while another process holds the database's write lock "
                               "(then 503)"),
        "pool_size": Option(f"{Limits.pool_size}", _positive_int, "PostgreSQL: connections "
                            "per process at most (allow max_connections for every instance)"),
        "pool_timeout": Option(f"{Limits.pool_timeout:g}", _timeout, "PostgreSQL: seconds a "
                               "request waits for a connection (then 503), also while the "
                               "server is down"),
        "connect_timeout": Option(f"{Limits.connect_timeout:g}", _timeout, "PostgreSQL: "
                                  "seconds a new connection may take (libpq's minimum: 2; "
                                  "the url or PGCONNECT_TIMEOUT win)"),
    },
    "museum": {
        "name": Option("Museum", _text, "the museum's name, as a shop shows it (GET /museum) "
                       "and the mails to visitors give it"),
        "timezone": Option("", _time_zone, "IANA time zone that defines 'today' (empty: the "
                           "server's local zone)"),
        "currency": Option("EUR", _currency, "ISO 4217 code of the currency prices are in; "
                           "each ticket keeps the one it was sold in"),
        "language": Option("en", _language, "language of the mails to visitors: en "
                           "(English) or de (German)"),
    },
    "mail": {
        "url": Option("", _mail_url, "SMTP server that sends the tickets to their buyers: "
                      "smtp://, smtps:// (TLS) or smtp+starttls://, with user and password "
                      "(smtps://user:password@smtp.example.org); empty: no email is sent"),
        "from": Option("", _email_address_or_empty, "the mails' sender address (required "
                       "with url)"),
        "reply_to": Option("", _email_address_or_empty, "where visitors' replies go (empty: "
                           "to the sender)"),
        "templates": Option("", _text, "directory of the museum's own mail templates, each "
                            "replacing the shipped one of its name (empty: the shipped "
                            "ones of [museum] language)"),
    },
    "webhooks": {
        "allow_private": Option("false", _boolean, "let webhook receivers be on loopback, "
                                "private or link-local addresses (a receiver on this "
                                "machine or network; off, no one can point the service at "
                                "them)"),
    },
    "tickets": {
        "qr_secret": Option("", _qr_secret, "key that signs ticket QR codes, 32 characters or "
                            "more (empty: generated at first start and kept in the database)"),
        "general_price": Option("0", _price, "price of a general entry ticket, at most 2 "
                                "decimals; each ticket keeps the price it was sold at"),
    },
    "privacy": {
        "keep_contact_days": Option("30", _positive_int, "days after a ticket's date that its "
                                    "buyer's email and phone are kept; then they are erased"),
    },
    "auth": {
        "max_failures": Option("10", _positive_int, "wrong passwords for one user name from "
                               "one address (an IPv6 /64) before that pair is locked out"),
        "max_address_failures": Option("100", _positive_int, "wrong passwords from one "
                                       "address, whatever the names, before it is locked out"),
        "failure_window": Option("60", _positive_int, "seconds over which failures count, "
                                 "and a wrong credential is answered without a new check"),
        "lockout": Option("300", _positive_int, "seconds a locked-out pair or address gets "
                          "429 for passwords not verified before"),
        "visitor_tickets_per_hour": Option("", _purchases_per_hour, "tickets each visitor "
                                           "credential may buy within any hour, on all "
                                           "instances together (empty: no limit); set it "
                                           "for any credential a browser or partner holds"),
    },
    "shop": {
        "enabled": Option("false", _boolean, "true: anyone may read the hours, events, places "
                          "and prices and create orders on the web channel without "
                          "credentials (docs/security.md); false: every call needs a user"),
        "orders_per_hour": Option("10", _positive_int, "orders without credentials that one "
                                  "client address (an IPv6 /64) may create within an hour, "
                                  "counted by each instance (then 429)"),
        "orders_per_email_per_day": Option("5", _positive_int, "orders without credentials "
                                           "for one email within 24 hours, on all instances "
                                           "together (then 429)"),
        "max_tickets": Option("10", _positive_int, "tickets one order without credentials may "
                              "hold at most (more: 400)"),
        "allowed_origins": Option("", _origins, "web origins, such as "
                                  "https://www.museum.example.org, whose pages may call the "
                                  "shop's operations from a browser (CORS); empty: none"),
        "pay_at_desk": Option("false", _boolean, "true: the booking page (/shop) also offers "
                              "priced categories, paid at the desk; false: only free ones"),
    },
    "capacity": {
        "general_per_day": Option("", _places, "general entry tickets sold for each open day "
                                  "(empty: unlimited); [capacity_dates] overrides single days"),
        "general_per_slot": Option("", _places, "general entry tickets sold for each entry "
                                   "slot of a day, with [hours] slot_minutes (empty: "
                                   "unlimited)"),
    },
    "door": {
        "early_minutes": Option("15", _minutes, "minutes before its entry slot that a timed "
                                "ticket is admitted (earlier: too-early)"),
    },
    "orders": {
        "hold_minutes": Option("15", _hold_minutes, "minutes an order made with \"hold\": "
                               "true keeps its places while the visitor pays; unconfirmed "
                               "by then, they are free again"),
    },
    "log": {
        "access": Option("stderr", _text, "where the access log goes: stderr, off, or a file "
                         "path (appended to)"),
        "flush": Option("1", _seconds, "seconds access lines may wait in memory to be "
                        "written together (a kill -9 loses at most these); 0: each at once"),
        "level": Option("info", _log_level, "least severe message of the application log "
                        "written: debug, info, warning or error (the access log: see access)"),
    },
    "hours": {
        **{day: Option("closed" if day == "monday" else "10:00-16:00" if day == "friday"
                       else "09:00-18:00", _opening_hours, f"{day}: 'closed' or HH:MM-HH:MM")
           for day in WEEKDAYS},
        "slot_minutes": Option("", _slot_minutes, "timed entry: minutes of each entry slot, "
                               "cut from each day's opening time; a general ticket then names "
                               "its entryTime (empty: no timed entry)"),
    },
}
# Sections whose keys are names or dates chosen by the museum.
FREE_SECTIONS = ("users", "exceptions", "capacity_dates", "categories")


@dataclass(frozen=True)
class Schedule:
    """Weekly opening hours plus dated exceptions; each day is None (closed) or (open, close)."""

    weekly: tuple
    exceptions: dict = field(default_factory=dict)
    slot_minutes: int = None  # timed entry: the length of each entry slot (None: none)

    def hours_on(self, day):
        return self.exceptions.get(day, self.weekly[day.weekday()])

    def with_changed_days(self, days):
        """This schedule with the hours of `days` (the store's day dicts, set by an admin
        through the API) over its own: a closed day, or other hours."""
        hours = {date.fromisoformat(day["date"]):
                 None if day["closed"] else (day["timeOpen"], day["timeClose"])
                 for day in days if day["closed"] or day["timeOpen"]}
        return replace(self, exceptions={**self.exceptions, **hours}) if hours else self

    def open_days(self, start, count):
        """Yield (day, (open, close)) of each open day among the `count` days from `start`
        (fewer where the calendar ends)."""
        for offset in range(count):
            try:
                day = start + timedelta(days=offset)
            except OverflowError:
                return
            hours = self.hours_on(day)
            if hours:
                yield day, hours

    def slots_on(self, day):
        """The entry slots of `day` as "HH:MM" texts, every slot_minutes from opening time,
        each starting before closing; () when the day is closed or there is no timed entry."""
        hours = self.hours_on(day)
        if hours is None or self.slot_minutes is None:
            return ()
        opening, closing = (minute_of_day(text) for text in hours)
        return tuple(time_of_day(minute)
                     for minute in range(opening, closing, self.slot_minutes))


@dataclass(frozen=True)
class GeneralCapacity:
    """Places of general entry per day: the usual number plus dated overrides; None is
    unlimited."""

    per_day: int = None
    dates: dict = field(default_factory=dict)
    per_slot: int = None  # places of each entry slot, with timed entry (None: unlimited)

    def on(self, day):
        return self.dates.get(day, self.per_day)

    def with_changed_days(self, days):
        """These places with the capacity of `days` (the store's day dicts) where set."""
        places = {date.fromisoformat(day["date"]): day["capacity"]
                  for day in days if day["capacity"] is not None}
        return replace(self, dates={**self.dates, **places}) if places else self


@dataclass(frozen=True)
class Config:
    settings: dict
    users: dict
    schedule: Schedule
    source: str = "built-in defaults"
    capacity: GeneralCapacity = GeneralCapacity()
    path: str | None = None  # the file read, if any (load_config)
    # The file's relative [storage] url as versions before 1.2 read it, from the working
    # directory ("" when the file gives none, or an absolute one, or a flag overrides it).
    url_before_1_2: str = ""
    categories: tuple = ()  # museum_categories.Category of [categories], the default first

    def __getitem__(self, section):
        return self.settings[section]


# What a reload applies (every option of a section named alone); the other options keep
# their value until a restart. [users], [exceptions], [capacity_dates] and [categories] are
# reloaded too.
RELOADABLE = ("hours", "capacity", "orders", ("tickets", "general_price"), ("museum", "currency"),
              ("museum", "name"), ("log", "level"))


def needs_restart(old, new):
    """The options ("[section] key") whose change from config `old` to `new` a reload
    does not apply."""
    return [f"[{section}] {key}" for section, options in SCHEMA.items() for key in options
            if section not in RELOADABLE and (section, key) not in RELOADABLE
            and old[section][key] != new[section][key]]


class LiveConfig:
    """The config a running app serves by, which a reload replaces whole.

    Resources read `config` once per request: replacing it is one reference assignment,
    atomic, so no request takes a lock for it and each sees one config or the other,
    never a mix. Followers (the sign-in's accounts) take the new config first."""

    def __init__(self, config):
        self.config = config
        self._followers = []

    def follow(self, take):
        """Call `take(config)` with each new config, before requests see it."""
        self._followers.append(take)

    def replace(self, new, exposed_on):
        """Serve by `new` from now on, as a server reachable `exposed_on` (see
        check_passwords, whose ConfigError leaves the config in use as it is). Returns the
        changed options that need a restart (`needs_restart`), which keep their value."""
        check_passwords(new, exposed_on)
        for take in self._followers:
            take(new)
        old, self.config = self.config, new
        return needs_restart(old, new)


def parse_config(text="", source="<text>", environ=None, overrides=None, directory=None):
    """Build a `Config` from INI text; `MUSEUM_<SECTION>_<KEY>` variables and `overrides`
    ({(section, key): raw value}) win over the file, in that order. A relative database
    path in the text is taken from `directory`, the file's (None: left as it is)."""
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.optionxform = str  # user names keep their case
    try:
        parser.read_string(text, source=source)
    except configparser.Error as error:
        raise ConfigError(f"{source}: {error.message.splitlines()[0]}") from None
    for section in parser.sections():
        if section not in SCHEMA and section not in FREE_SECTIONS:
            raise ConfigError(f"{source}: unknown section [{section}]")
    raw = {section: dict(parser[section]) if parser.has_section(section) else {}
           for section in SCHEMA}
    written = raw["storage"].get("url", "").strip()
    if directory is not None and written:
        raw["storage"]["url"] = _beside(directory, written)
    beside = raw["storage"].get("url")
    for section, key in _environment_overrides(environ or {}):
        raw[section][key] = environ[f"MUSEUM_{section}_{key}".upper()]
    for (section, key), value in (overrides or {}).items():
        raw[section][key] = value
    relative = beside != written and raw["storage"].get("url") == beside
    settings = {section: _parse_section(source, section, options, raw[section])
                for section, options in SCHEMA.items()}
    if settings["server"]["unix_socket"] and settings["server"]["trusted_proxy"]:
        # waitress names every peer of a unix socket "localhost": no address would match.
        raise ConfigError(f"{source}: [server] trusted_proxy: leave it empty with unix_socket "
                          f"(whoever may connect to the socket is trusted as the proxy)")
    if settings["capacity"]["general_per_slot"] and not settings["hours"]["slot_minutes"]:
        raise ConfigError(f"{source}: [capacity] general_per_slot: set [hours] slot_minutes "
                          f"too (the slots it limits), or leave it empty")
    if settings["mail"]["url"] and not settings["mail"]["from"]:
        raise ConfigError(f"{source}: [mail] from: give the mails' sender address with url")
    users = _parse_users(source, parser["users"] if parser.has_section("users") else {})
    exceptions = _parse_dated(source, "exceptions", _opening_hours, parser)
    schedule = Schedule(tuple(settings["hours"][day] for day in WEEKDAYS), exceptions,
                        settings["hours"]["slot_minutes"])
    capacity = GeneralCapacity(settings["capacity"]["general_per_day"],
                               _parse_dated(source, "capacity_dates", _places, parser),
                               settings["capacity"]["general_per_slot"])
    return Config(settings, users, schedule, source, capacity, url_before_1_2=(
        os.path.abspath(sqlite_path(written)) if relative else ""),
        categories=_parse_categories(source, parser, settings["tickets"]["general_price"]))


def _parse_categories(source, parser, general_price):
    entries = parser["categories"] if parser.has_section("categories") else {}
    try:
        return parse_categories({name: value.strip() for name, value in entries.items()},
                                _price, general_price)
    except ValueError as error:
        raise ConfigError(f"{source}: [categories] {error}") from None


def _beside(directory, url):
    """A sqlite file path (or sqlite:///path) in a config file, relative to the file's
    directory when not absolute: a service's working directory is rarely its config's.
    `:memory:` and other kinds of url stay as they are."""
    scheme, separator, rest = url.partition("://")
    if separator and scheme.lower() != "sqlite":
        return url
    path = rest.removeprefix("/") if separator else url
    if path in ("", ":memory:") or os.path.isabs(path):
        return url
    path = os.path.join(directory, path)
    return f"{scheme}:///{path}" if separator else path


def storage_limits(config):
    """The [storage] waits and sizes, for `storage.open_store`."""
    return Limits(**{limit.name: config["storage"][limit.name] for limit in fields(Limits)})


def _environment_overrides(environ):
    for section, options in SCHEMA.items():
        for key in options:
            if f"MUSEUM_{section}_{key}".upper() in environ:
                yield section, key


def _parse_section(source, section, options, values):
    parsed = {}
    for key in values:
        if key not in options:
            raise ConfigError(f"{source}: [{section}] {key}: unknown option")
    for key, option in options.items():
        value = values.get(key, option.default).strip()
        try:
            parsed[key] = option.parse(value)
        except ValueError as error:
            raise ConfigError(f"{source}: [{section}] {key}: {error}") from None
    return parsed


def _parse_users(source, entries):
    users = {}
    for name, value in entries.items():
        role, _, password_hash = value.strip().partition(":")
        if role not in ROLES:
            raise ConfigError(f"{source}: [users] {name}: role must be one of "
                              f"{', '.join(ROLES)}, as 'role:hash'")
        if not hash_is_readable(password_hash):
            raise ConfigError(f"{source}: [users] {name}: unreadable password hash "
                              f"(make one with 'museum hash-password')")
        users[name] = User(name, role, password_hash)
    return users


def _parse_dated(source, section, parse, parser):
    """{date: parse(value)} of a section whose keys are dates, such as [exceptions]."""
    entries = parser[section] if parser.has_section(section) else {}
    dated = {}
    for key, value in entries.items():
        try:
            day = date.fromisoformat(key) if DATE.fullmatch(key) else None
            if day is None:
                raise ValueError("is not a date YYYY-MM-DD")
            dated[day] = parse(value.strip())
        except ValueError as error:
            raise ConfigError(f"{source}: [{section}] {key}: {error}") from None
    return dated


def load_config(path=None, environ=None, overrides=None):
    """Read the config file: `path`, else `$MUSEUM_CONFIG`, else ./museum.ini if present
    (built-in defaults when absent)."""
    environ = os.environ if environ is None else environ
    path = path or environ.get("MUSEUM_CONFIG")
    if path is None and not os.path.exists("museum.ini"):
        return parse_config("", "built-in defaults", environ, overrides)
    path = path or "museum.ini"
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read the config file ({error})") from None
    config = parse_config(text, path, environ, overrides, os.path.dirname(os.path.abspath(path)))
    return replace(config, path=path)


def warn_if_readable_by_others(config):
    """Log a warning when the config file holds secrets (password hashes or key digests,
    other than the demo ones everybody knows, or the QR secret) and its group or other users
    may read it: whoever reads it can test passwords offline and forge tickets."""
    secrets_held = []
    if any(user.password_hash not in DEMO_PASSWORD_HASHES for user in config.users.values()):
        secrets_held.append("password hashes")
    if config["tickets"]["qr_secret"]:
        secrets_held.append("the QR secret")
    if not (config.path and secrets_held):
        return
    mode = stat.S_IMODE(os.stat(config.path).st_mode)
    if mode & 0o044:
        log.warning("%s can be read by other users (mode %04o): it holds %s; make it "
                    "private with: chmod 600 %s", config.path, mode,
                    " and ".join(secrets_held), config.path)


def help_for_config():
    """The config reference, from the schema."""
    lines = []
    for section, options in SCHEMA.items():
        lines.append(f"[{section}]")
        lines += [f"  {key} = {option.default:<14} {option.help}" for key, option in options.items()]
    lines += ["[users]", f"  NAME = ROLE:HASH  role {', '.join(ROLES)}; hash from 'museum "
              "hash-password', or a device key's digest (new devices: 'museum add-device')",
              "[exceptions]", "  YYYY-MM-DD = closed | HH:MM-HH:MM  dated exceptions to [hours]",
              "[capacity_dates]", "  YYYY-MM-DD = PLACES | unlimited  dated exceptions to "
              "[capacity] general_per_day",
              "[categories]", "  NAME = LABEL | PRICE | persons: N | note: TEXT  a price "
              "category (price left out: general_price); none: one, adult"]
    return "\n".join(lines)


# ============================================================================================
# The demo password: where the service may run with it
# ============================================================================================

def where_exposed(server_settings):
    """Where a server with these [server] settings is reachable from other machines, for
    the demo-password rule of `check_passwords`; None for a loopback development run."""
    proxy = server_settings["trusted_proxy"]
    if proxy:  # whatever the host, the proxy publishes the service
        return f"behind the proxy trusted_proxy = {proxy}"
    if server_settings["unix_socket"]:  # a socket is there for a proxy to publish it
        return f"on unix_socket = {server_settings['unix_socket']}"
    if not is_loopback(server_settings["host"]):
        return f"on {server_settings['host']}"
    return None


def is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def refuse_demo_passwords(config, exposed_on):
    """`check_passwords`' ConfigError, without its warnings (`museum serve` asks before it
    opens, or creates, a database); return the users with the demo password.

    Where the service is exposed and no shipped hash is found, every hash is checked against
    the demo password, so a freshly made one is refused too (about a second per password at
    full strength, at start only; a device key's digest costs microseconds). On loopback
    only the shipped hashes are recognised, and nothing is hashed."""
    demo = [user.name for user in config.users.values()
            if user.password_hash in DEMO_PASSWORD_HASHES]
    if exposed_on and not demo:
        demo = [user.name for user in config.users.values()
                if check_password(DEMO_PASSWORD, user.password_hash)]
    if demo and exposed_on:
        raise ConfigError(f"{config.source}: [users] {', '.join(demo)}: the demo password is "
                          f"still set; refusing to serve {exposed_on}. Set new passwords with "
                          f"'museum hash-password' first.")
    return demo


def check_passwords(config, exposed_on):
    """The demo-password rule, in one place. While any user still has the demo password,
    the service runs only as a loopback development run: `exposed_on` says where else it
    would be served (such as "on 0.0.0.0"), and then those users are a ConfigError naming
    them; None states a loopback development run, where they are a warning. The app cannot
    see where it is served: under gunicorn, mod_wsgi or waitress-serve, or behind a reverse
    proxy, a demo password would reach the network, so only the caller can state it. Hashes
    weaker than new ones are a warning either way."""
    demo = refuse_demo_passwords(config, exposed_on)
    if demo:
        log.warning("demo password in use for %s: fine on this machine, replace it before "
                    "publishing the service", ", ".join(demo))
    weak = [user.name for user in config.users.values() if is_weak(user.password_hash)]
    if weak:
        log.warning("password hash weaker than scrypt N=2^17, r=8, p=1 for %s: make new "
                    "ones with 'museum hash-password'", ", ".join(weak))
    return demo
