"""Contacts expire: the email and phone of a ticket are erased once its date is more than
[privacy] keep_contact_days past, daily by the service however it is run (`museum serve` or
`museum:app` under another WSGI host) and on demand by `museum purge-contacts`."""

import logging
import threading
import time
from contextlib import nullcontext
from datetime import timedelta

import museum_locks
import storage

log = logging.getLogger("museum")

CONTACT_BATCH = 500  # tickets erased per transaction: a few milliseconds of write lock
BATCH_PAUSE = 0.05  # seconds between batches, for the requests waiting to write
ERASE_EVERY = 24 * 3600


def erase_old_contacts(store, today, keep_days):
    """Erase the email and phone of the tickets dated more than `keep_days` days before
    `today`, one short transaction per batch so that requests go on between them; log and
    return how many were erased."""
    before = (today - timedelta(days=keep_days)).isoformat()
    total = 0
    while True:
        erased = store.erase_contacts(before, CONTACT_BATCH)
        total += erased
        if erased < CONTACT_BATCH:
            break
        time.sleep(BATCH_PAUSE)
    # Said once the files are scrubbed too, so that the line means the contacts are gone.
    if not store.scrub():
        log.warning("readers kept the database busy: erased contacts may stay in its "
                    "write-ahead log until the next erasure")
    log.info("erased the contacts of %d tickets dated before %s", total, before)
    return total


def erase_contacts_daily(store, url, today, keep_days):
    """Erase old contacts now and then once a day, on a thread of its own that dies with
    the process; `today` gives the museum's date.

    On sqlite one process per database erases, the one holding `PATH.erase.lock`; the
    others (several workers of one WSGI host) wait for the lock, so one of them takes over
    if that process ends. On PostgreSQL every instance erases: an erasure is idempotent
    (a contact erased twice is erased once) and each batch a short transaction, so the
    others' runs find nothing left and cost one indexed query each.
    """
    path = storage.sqlite_file(url)

    def run():
        with museum_locks.wait_for_lock(museum_locks.beside(path, "erase")) if path \
                else nullcontext():
            while True:
                try:
                    erase_old_contacts(store, today(), keep_days)
                except storage.StorageError as error:
                    log.warning("erasing old contacts failed, trying again in a day: %s",
                                error)
                time.sleep(ERASE_EVERY)

    threading.Thread(target=run, name="erase-contacts", daemon=True).start()
