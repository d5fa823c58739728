"""The access log: one line per request through the standard `logging` module, written in
blocks, and the middleware that names each request and writes its line.

A request's thread only queues its line's time and message. One write per line would cost
more than the rest of a cheap request (it hands the core to another thread on every line),
so, as nginx's `access_log ... buffer= flush=` does, a `QueueListener` thread wakes at the
latest every `flush` seconds, or as soon as BLOCK_LINES wait, and hands its handler every
line waiting as one log record, a block of stamped lines: made once per block, the record
and the handler's work cost next to nothing per line (benchmarks/access_log.py). The
handler is logging's own: a `WatchedFileHandler` for a file, which starts a new file when
logrotate moved the old one away (no signal needed), or a stream handler for stderr.
`flush = 0` writes each line at once, in the request's thread.

The lines waiting are written when the process exits (atexit), whatever serves the app:
`museum serve` stops on SIGTERM and SIGINT by exiting, gunicorn's workers exit, and so does
waitress-serve on SIGINT. A SIGTERM left to its default action kills the process without an
exit, as `waitress-serve museum:app` leaves it, losing the last `flush` seconds of lines:
`waitress-serve --call museum:waitress_app` makes SIGTERM an exit (docs/production.md).
A kill -9 loses at most the last `flush` seconds of lines. The application log (warnings,
errors) does not come here and stays unbuffered.
"""

import atexit
import contextvars
import functools
import itertools
import logging
import logging.handlers
import os
import queue
import re
import secrets
import sys
import threading
import time

from museum_config import ConfigError
from museum_http import loggable_address, loggable_path, loggable_word

BLOCK_LINES = 500  # lines waiting that wake the listener at once (about 64 KiB)
# A line is "<date> <time>,<ms> INFO museum.access: <message>", as the application log's
# (`%(asctime)s %(levelname)s %(name)s: %(message)s`) are.
LINE_LABEL = " INFO museum.access: "
log = logging.getLogger("museum")


def block_record(entries):
    """One log record whose message is the (time, message) `entries` as stamped lines."""
    text = "".join(f"{_second_stamp(int(created))},{int(created % 1 * 1000):03d}"
                   f"{LINE_LABEL}{message}\n" for created, message in entries)
    return logging.makeLogRecord({"name": "museum.access", "levelno": logging.INFO,
                                  "levelname": "INFO", "msg": text})


@functools.lru_cache(maxsize=4)
def _second_stamp(second):
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(second))


def _taken(lines):
    """Every (time, message) waiting in the queue `lines`, taken out, in order."""
    entries = []
    while True:
        try:
            entries.append(lines.get_nowait())
        except queue.Empty:
            return entries


class BlockListener(logging.handlers.QueueListener):
    """A QueueListener that hands its handler the lines in blocks, each one log record:
    every line waiting, once `flush_seconds` passed, BLOCK_LINES wait (`wake`) or the log
    stops."""

    def __init__(self, lines, handler, flush_seconds, wake):
        super().__init__(lines, handler)
        self.flush_seconds = flush_seconds
        self.wake = wake
        self._stopping = False

    def dequeue(self, block):
        while True:
            if not self._stopping:
                self.wake.wait(self.flush_seconds)
                self.wake.clear()
            stopping = self._stopping  # read first: what was queued before is taken below
            entries = _taken(self.queue)
            if entries:
                return block_record(entries)
            if stopping:
                return self._sentinel

    def enqueue_sentinel(self):
        """Stop once every line queued is handed on (the queue holds lines only)."""
        self._stopping = True
        self.wake.set()


class CurrentStderr(logging.StreamHandler):
    """To whatever `sys.stderr` is when a block is written: tests and hosts replace it."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


class PrivateFile(logging.handlers.WatchedFileHandler):
    """A WatchedFileHandler whose file, the first and each one after logrotate moved the
    last away, is readable by its owner only, as the service's other files are."""

    def __init__(self, path):
        _create_private(path)
        super().__init__(path, encoding="utf-8")

    def emit(self, record):
        _create_private(self.baseFilename)  # before the handler looks for a moved file
        super().emit(record)


def _create_private(path):
    """Create the file at `path` readable by its owner only (client addresses are personal
    data), unless it exists: `open` would give it the mode of the umask, 0644 outside
    systemd."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass


class AccessLogWriter:
    """The process's access log: to `file` (a path), or to whatever `sys.stderr` is when
    None, or to a stream (tests), in blocks every `flush_seconds` (0: each line at once).
    Made, it replaces the one made before, which writes what it had; its lines are written
    at exit, however the process exits."""

    def __init__(self, file=None, flush_seconds=1.0):
        if file is None:
            self.handler = CurrentStderr()
        elif isinstance(file, str):
            self.handler = PrivateFile(file)
        else:
            self.handler = logging.StreamHandler(file)
        self.handler.terminator = ""  # a block's lines end in their own line breaks
        self.lines = queue.SimpleQueue()
        self.listener = None  # None: each line is written by the thread that logs it
        _replace_installed(self)
        if flush_seconds:
            self.wake = threading.Event()
            self.listener = BlockListener(self.lines, self.handler, flush_seconds, self.wake)
            self.listener.start()
            atexit.register(self.close)

    def write(self, message):
        """Log `message` as one line, stamped with the time of this call."""
        self.lines.put((time.time(), message))
        # Checked after queueing: a line queued after `close` took the last ones is
        # written here, so none is left behind.
        if self.listener is None:
            self.write_waiting()
        elif self.lines.qsize() >= BLOCK_LINES and not self.wake.is_set():
            self.wake.set()  # (setting it costs a lock: not again while it waits to be seen)

    def write_waiting(self):
        entries = _taken(self.lines)
        if entries:
            self.handler.handle(block_record(entries))

    def close(self):
        """Write what is left; lines logged from now on are written at once."""
        listener = self.listener
        if listener is not None:
            atexit.unregister(self.close)
            listener.stop()
            self.listener = None
        self.write_waiting()


_installed = []  # the writer made last


def _replace_installed(writer):
    for previous in _installed:
        previous.close()
        previous.handler.close()
    _installed[:] = [writer]


def open_access_log(config):
    """The writer [log] asks for, or None when `access = off`."""
    settings = config["log"]
    destination = settings["access"]
    if destination == "off":
        return None
    try:
        return AccessLogWriter(None if destination == "stderr" else destination,
                               settings["flush"])
    except OSError as error:
        raise ConfigError(f"{config.source}: [log] access: cannot open {destination} "
                          f"({error.strerror})") from None


# ============================================================================================
# The middleware: each request's id and access line, and the headers every answer carries
# ============================================================================================

REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
_request_id = contextvars.ContextVar("request_id", default=None)
# A made id is this process's random prefix and a count: unique across processes and
# restarts, and cheaper than random bytes per request (next() on a count is atomic). Its
# hex digits are written as the letters a-p: no run of digits, which the access log keeps
# for nothing that could be a phone number.
_AS_LETTERS = str.maketrans("0123456789abcdef", "abcdefghijklmnop")
_ID_PREFIX = secrets.token_hex(4).translate(_AS_LETTERS)
_request_numbers = itertools.count()


class AccessLog:
    """Every request has an id, to follow it from the proxy's log line to the service's:
    a well-formed X-Request-Id from the client or proxy is kept, else one is made. It is
    echoed in the answer's X-Request-Id and named on every warning or error logged while
    the request is answered.

    Unless `writer` is None ([log] access = off), one line per request (waitress writes
    none) goes to that AccessLogWriter: address, method, path, status, duration and request
    id. Never headers, query strings or bodies, which may carry credentials or emails; path
    segments that are neither UUIDs nor plain words are logged as `*`, and ids cut to
    their first 8 characters (`loggable_path`). (One middleware for
    both: each one more is two more calls on every request.)"""

    def __init__(self, writer):
        self.writer = writer

    def process_request(self, req, resp):
        req.context.started = time.perf_counter()
        given = req.get_header("X-Request-Id")
        request_id = given if given and REQUEST_ID.fullmatch(given) \
            else _ID_PREFIX + format(next(_request_numbers), "08x").translate(_AS_LETTERS)
        req.context.request_id = request_id
        _request_id.set(request_id)

    def process_response(self, req, resp, resource, req_succeeded):
        resp.set_header("X-Request-Id", req.context.request_id)
        _request_id.set(None)
        if self.writer is not None:
            elapsed = (time.perf_counter() - req.context.started) * 1000
            path = loggable_path(req.path, req.uri_template)
            self.writer.write(f"{loggable_address(req.remote_addr)} {loggable_word(req.method)} "
                              f"{path} {resp.status_code} {elapsed:.1f}ms "
                              f"{req.context.request_id}")


class NameTheRequest(logging.Filter):
    """Ends a message logged while a request is answered with that request's id."""

    def filter(self, record):
        request_id = _request_id.get()
        if request_id is not None:
            record.msg = f"{record.msg} (request {request_id})"  # the id has no `%`
        return True


for _logger in (log, logging.getLogger("museum.storage")):
    _logger.addFilter(NameTheRequest())


class SafeHeaders:
    """No sniffing anywhere; JSON answers are never cached by browsers or proxies."""

    def process_response(self, req, resp, resource, req_succeeded):
        resp.set_header("X-Content-Type-Options", "nosniff")
        if resp.get_header("Cache-Control") is None:
            resp.set_header("Cache-Control", "no-store")
