"""`museum:app` as another WSGI host serves it (gunicorn, waitress-serve, mod_wsgi): built
from the default config on its first request, as `museum serve` builds its app. It takes
the one-server lock of a sqlite database (shared by the host's workers, one process group),
migrates only as [storage] auto_migrate says (the workers one at a time), and folds sqlite's
write-ahead log into the file when the process exits.

`waitress-serve --call museum:waitress_app` serves the same app with SIGTERM made an
exit, as Ctrl-C is: waitress-serve leaves SIGTERM to its default action, which kills the
process before the access lines waiting are written (museum_access_log).

While it cannot be built (a database to migrate, a config error, another server on the
database), every request, /healthz too, is answered 503 problem+json and the log says why
once: never a host's HTML 500 with a traceback per request. It tries again every few
seconds, so that `museum migrate` run meanwhile is enough.
"""

import atexit
import json
import logging
import os
import threading
import time

import museum_locks
from museum_access_log import open_access_log
import storage
from museum_config import ConfigError, load_config, refuse_demo_passwords
from museum_services import open_configured_store, refuse_a_moved_database

log = logging.getLogger("museum")
RETRY_SECONDS = 5


class HostedApp:
    """A WSGI callable that builds the app with `build` (which returns it, or raises) on
    its first request, and answers 503 until it could."""

    def __init__(self, build):
        self.build = build
        self.app = None
        self._lock = threading.Lock()
        self._next_try = 0
        self._failure = None  # the message of the last failure, logged once

    def __call__(self, environ, start_response):
        app = self.app or self._built()
        if app is None:
            return self._unavailable(start_response)
        return app(environ, start_response)

    def _built(self):
        with self._lock:
            if self.app is None and time.monotonic() >= self._next_try:
                try:
                    self.app = self.build()
                except (ConfigError, storage.StorageError, museum_locks.Served, OSError) \
                        as error:
                    self._failed(error)
            return self.app

    def _failed(self, error):
        self._next_try = time.monotonic() + RETRY_SECONDS
        if str(error) != self._failure:
            self._failure = str(error)
            log.error("museum:app cannot serve, answering 503 until it can (trying again "
                      "every %d s): %s", RETRY_SECONDS, error)
        self._needs_migrating = isinstance(error, storage.SchemaBehind)

    def _unavailable(self, start_response):
        detail = ("The database needs migrating: run 'museum migrate'." if self._needs_migrating
                  else "The service cannot start: its log says why.")
        body = json.dumps({"type": "about:blank", "title": "Service Unavailable",
                           "status": 503, "detail": detail}).encode()
        start_response("503 Service Unavailable", [
            ("Content-Type", "application/problem+json"), ("Content-Length", str(len(body))),
            ("Retry-After", str(RETRY_SECONDS)), ("Cache-Control", "no-store")])
        return [body]


def build_from_default_config(create_app, set_log_level, exposed_on):
    """The app of the default config ($MUSEUM_CONFIG or ./museum.ini), made as `museum
    serve` makes it, for a host that may listen anywhere (`exposed_on`)."""
    config = load_config()
    set_log_level(config)
    refuse_a_moved_database(config)
    refuse_demo_passwords(config, exposed_on)  # before a database is opened, or made
    access = open_access_log(config)
    path = storage.sqlite_file(config["storage"]["url"])
    if path:  # kept open for the life of the process: the lock is the open file's
        claimed = museum_locks.claim_database(path, host_group=os.getpgrp())
        if claimed is not None:
            atexit.register(claimed.close)
    store = open_configured_store(config)
    atexit.register(store.close)  # sqlite: the last connection closed folds the WAL in
    return create_app(config, store=store, exposed_on=exposed_on, access=access,
                      erase_contacts=True)

