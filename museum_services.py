"""What the app, the command line and the mock make from the config, each made here once:
the clock, new ids, the time and date in the museum's time zone, the store the config
names, and the secret that signs tickets' QR texts. Knows nothing of HTTP.
"""

import logging
import os
import secrets
import uuid
from contextlib import nullcontext
from datetime import datetime, timedelta, timezone

import museum_locks
import storage
from museum_config import ConfigError, storage_limits

log = logging.getLogger("museum")


def utc_now():
    return datetime.now(timezone.utc)


def new_uuid():
    return str(uuid.uuid4())


def museum_now(config, clock=utc_now):
    """A function giving the time at the museum, in its time zone ([museum] timezone; unset:
    the server's), by `clock`, which gives an aware datetime."""
    time_zone = config["museum"]["timezone"]
    return lambda: clock().astimezone(time_zone)


def museum_zone_name(config, now):
    """The IANA name of the museum's time zone ([museum] timezone); unset, the server's
    zone at `now()` as a fixed offset (Etc/GMT-1 is UTC+01:00), or UTC."""
    if config["museum"]["timezone"] is not None:
        return config["museum"]["timezone"].key
    hours, rest = divmod(int(now().utcoffset().total_seconds()), 3600)
    if hours == 0 or rest:
        return "UTC"
    return f"Etc/GMT{'-' if hours > 0 else '+'}{abs(hours)}"


def museum_today(config, clock=utc_now):
    """A function giving today's date at the museum (see museum_now)."""
    now = museum_now(config, clock)
    return lambda: now().date()


def qr_secret(config, store, create=True):
    """The secret signing tickets' QR texts: [tickets] qr_secret, else the one kept in the
    store, which every instance sharing the database reads. Made there on first use when
    `create`; without it, None while no ticket was sold."""
    return config["tickets"]["qr_secret"] or \
        store.setting("qr_secret", secrets.token_hex(32) if create else None)


def refuse_a_moved_database(config):
    """`ConfigError` naming both paths when the config's relative sqlite url names no file
    but, read as versions before 1.2 read it (from the working directory), names a museum
    database: going on would start a new, empty database beside the real one."""
    old = config.url_before_1_2
    path = storage.sqlite_file(config["storage"]["url"])
    if not old or not path or os.path.exists(path) or not storage.is_museum_database(old):
        return
    raise ConfigError(
        f"{config.source}: [storage] url names {os.path.abspath(path)}, which does not "
        f"exist; versions before 1.2 read that relative url from the working directory, "
        f"where the database is: {old}. Set url = {old} in {config.source} (nothing was "
        f"created)")


def existing_database(config):
    """The config's storage url, once it names a database that exists: a command that must
    not create one raises `ConfigError` (see `refuse_a_moved_database`) or
    `storage.DatabaseMissing`."""
    refuse_a_moved_database(config)
    url = config["storage"]["url"]
    storage.missing_database(url)
    return url


def open_configured_store(config, migrate=False, create=True):
    """The store the config's storage url names; a new database only when `create` (said
    in the log, with its absolute path), else `storage.DatabaseMissing`. A database of an
    older schema is migrated only when `migrate` or [storage] auto_migrate says so, and a
    sqlite one is backed up beside itself first; otherwise `storage.SchemaBehind` says how
    to migrate it."""
    refuse_a_moved_database(config)
    url, limits = config["storage"]["url"], storage_limits(config)
    if not create:
        storage.missing_database(url)
    path = storage.sqlite_file(url)
    new = path is not None and not os.path.exists(path)
    store = _opened_store(config, url, limits, migrate)
    if new:
        log.info("created a new database at %s", os.path.abspath(path))
    return store


def describe_database(config, store):
    """The database's absolute path (or its masked url) with its event and ticket counts,
    for the start-up line: two databases are told apart at a glance."""
    url = config["storage"]["url"]
    path = storage.sqlite_file(url)
    totals = store.totals()
    return (f"database {os.path.abspath(path) if path else storage.display_url(url)}: "
            f"{totals['events']} events, {totals['tickets']} tickets")


def _opened_store(config, url, limits, migrate):
    try:
        return storage.open_store(url, migrate=False, limits=limits)
    except storage.SchemaBehind:
        if not (migrate or config["storage"]["auto_migrate"]):
            raise
    # Several processes may start together on an old database (a WSGI host's workers): one
    # migrates, the others wait for it here, then find the database migrated.
    path = storage.sqlite_file(url)
    with museum_locks.wait_for_lock(museum_locks.beside(path, "migrate")) if path \
            else nullcontext():
        try:
            return storage.open_store(url, migrate=False, limits=limits)
        except storage.SchemaBehind as behind:
            _back_up_before_migrating(config, url, behind.version)
        return storage.open_store(url, limits=limits)


def _back_up_before_migrating(config, url, version):
    """The copy a rollback needs, erased of the contacts the service would have erased by
    now: it is not erased later."""
    today = museum_today(config)()
    erase_before = today - timedelta(days=config["privacy"]["keep_contact_days"])
    try:
        copy = storage.backup_beside(url, version, today.isoformat(), erase_before.isoformat())
        log.info("backed up the database at schema version %d to %s before migrating it",
                 version, copy)
    except storage.Unsupported as reason:
        log.warning("migrating the database from schema version %d without a backup made "
                    "by the service: %s", version, reason)
