"""What the app, the command line and the mock make from the config, each made here once:
the clock, new ids, the time and date in the museum's time zone, the store the config
names, and the secret that signs tickets' QR texts. Knows nothing of HTTP.
"""

import logging
import secrets
import uuid
from datetime import datetime, timezone

import storage
from museum_config import storage_limits

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


def open_configured_store(config, migrate=False):
    """The store the config's storage url names. A database of an older schema is migrated
    only when `migrate` or [storage] auto_migrate says so, and a sqlite one is backed up
    beside itself first; otherwise `storage.SchemaBehind` says how to migrate it."""
    url, limits = config["storage"]["url"], storage_limits(config)
    try:
        return storage.open_store(url, migrate=False, limits=limits)
    except storage.SchemaBehind as behind:
        if not (migrate or config["storage"]["auto_migrate"]):
            raise
        try:
            copy = storage.backup_beside(url, behind.version)
            log.info("backed up the database at schema version %d to %s before migrating it",
                     behind.version, copy)
        except storage.Unsupported as reason:
            log.warning("migrating the database from schema version %d without a backup made "
                        "by the service: %s", behind.version, reason)
        return storage.open_store(url, limits=limits)
