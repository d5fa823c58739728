"""The access log: one line per request, collected in memory and written in blocks, and
the middleware that names each request and writes its line.

One write per request costs more than the rest of a cheap request (it hands the core to
another thread on every line), so, as nginx's `access_log ... buffer= flush=` does, lines
wait in memory and a flusher thread writes them together: at the latest every `flush`
seconds, or at once when BUFFER_BYTES have gathered. A clean stop writes what is left; a
kill -9 loses at most the last `flush` seconds of lines. `flush = 0` writes every line at
once. The application log (warnings, errors) does not come here and stays unbuffered.
A file is reopened on SIGHUP, so that logrotate can rename it.
"""

import atexit
import contextvars
import functools
import itertools
import logging
import re
import secrets
import sys
import threading
import time
import weakref

from museum_auth import client_ip
from museum_config import UUID_TEXT, ConfigError

BUFFER_BYTES = 64 * 1024
# A line is "<date> <time>,<ms><LABEL><message>\n", like the application log's lines.
LABEL = " INFO museum.access: "
STAMP_BYTES = len("2026-11-23 07:35:48,123") + len(LABEL) + len("\n")  # added to a message
log = logging.getLogger("museum")


class AccessLogWriter:
    """Writes access lines to `file`, or to whatever `sys.stderr` is when None."""

    def __init__(self, file=None, flush_seconds=1.0):
        self.file = file
        if file is not None:
            _file_writers.add(self)
        self.flush_seconds = flush_seconds
        self._waiting = []  # (time, message) of the lines not yet written
        self._size = 0
        self._buffering = flush_seconds > 0
        self._lock = threading.Lock()  # guards the lines waiting and `_buffering`
        self._write_lock = threading.Lock()  # one writer at a time keeps the lines in order
        self._stopping = threading.Event()
        self._flusher = None
        if self._buffering:
            self._flusher = threading.Thread(target=self._flush_regularly, daemon=True,
                                             name="access-log-flusher")
            self._flusher.start()
            # Whoever serves the app (`museum serve` after its drain, or another WSGI
            # host) just exits: the lines still waiting are written then.
            atexit.register(self.close)

    def write(self, message):
        """Log `message` as one line, stamped with the time of this call."""
        entry = (time.time(), message)
        with self._lock:
            buffered = self._buffering
            if buffered:
                self._waiting.append(entry)
                self._size += len(message) + STAMP_BYTES
                full = self._size >= BUFFER_BYTES
        if not buffered:
            with self._write_lock:
                self._write_block([entry])
        elif full:
            self.flush()

    def flush(self):
        """Write every line waiting, in the order they were logged."""
        with self._write_lock:
            with self._lock:
                entries, self._waiting, self._size = self._waiting, [], 0
            if entries:
                self._write_block(entries)

    def close(self):
        """Stop the flusher and write what is left; lines logged after this are written
        at once."""
        with self._lock:
            self._buffering = False
        if self._flusher is not None:
            self._stopping.set()
            self._flusher.join()
            self._flusher = None
            atexit.unregister(self.close)
        self.flush()

    def reopen(self):
        """Write the lines waiting, then go on in a new file at the same path: after
        logrotate renamed the old one, the next lines start the new one."""
        with self._write_lock:
            with self._lock:
                entries, self._waiting, self._size = self._waiting, [], 0
            if entries:
                self._write_block(entries)
            try:
                reopened = open(self.file.name, "a", encoding="utf-8")
            except OSError as error:
                log.error("access log: cannot reopen %s, writing on to the old file: %s",
                          self.file.name, error.strerror)
                return
            self.file, old = reopened, self.file
            old.close()

    def _flush_regularly(self):
        while not self._stopping.wait(self.flush_seconds):
            self.flush()

    def _write_block(self, entries):
        stream = self.file or sys.stderr  # tests and other hosts may replace sys.stderr
        try:
            stream.write("".join(_stamped(entries)))
            stream.flush()
        except (OSError, ValueError) as error:  # ValueError: the stream was closed
            log.error("access log: %d line(s) lost: %s", len(entries), error)


def _stamped(entries):
    """Each (time, message) as a line stamped like the application log's lines. Stamping
    here, when a block is written, leaves the request thread only a `time.time()`; the
    date and time are formatted once per second of a block."""
    second = stamp = None
    for now, message in entries:
        if int(now) != second:
            second = int(now)
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(second))
        yield f"{stamp},{int(now % 1 * 1000):03d}{LABEL}{message}\n"


# Writers to files, which SIGHUP reopens: waitress's server loop knows no app's writer.
_file_writers = weakref.WeakSet()


def reopen_files():
    """Reopen every access log file (`museum serve` on SIGHUP, as logrotate asks); return
    how many there were."""
    writers = list(_file_writers)
    for writer in writers:
        writer.reopen()
    return len(writers)


def open_access_log(config):
    """The writer [log] asks for, or None when `access = off`."""
    settings = config["log"]
    destination = settings["access"]
    if destination == "off":
        return None
    file = None
    if destination != "stderr":
        try:
            file = open(destination, "a", encoding="utf-8")
        except OSError as error:
            raise ConfigError(f"{config.source}: [log] access: cannot open {destination} "
                              f"({error.strerror})") from None
    return AccessLogWriter(file, settings["flush"])


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
    segments that are neither UUIDs nor plain words are logged as `*`. (One middleware for
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
            self.writer.write(f"{loggable_address(req.remote_addr)} {loggable_word(req.method)} "
                              f"{loggable_path(req.path)} {resp.status_code} {elapsed:.1f}ms "
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


LOGGABLE_WORD = re.compile(r"[A-Za-z0-9._~-]{1,64}")
DIGIT_RUN = re.compile(r"\d{7}")


@functools.lru_cache(maxsize=4096)
def loggable_word(text):
    """`text` if it is a UUID or a short plain word without a run of 7 digits (which could
    be a phone number), else `*`: no email, phone or line break reaches the log from a URL."""
    if UUID_TEXT.fullmatch(text) or (LOGGABLE_WORD.fullmatch(text)
                                     and not DIGIT_RUN.search(text)):
        return text
    return "*"


def loggable_path(path):
    """`path` for a log line: every segment through `loggable_word`, at most 12 of them,
    and the segment after `tickets` cut to 8 characters, since a ticket id is the key to
    that ticket's image (event ids are public and stay whole)."""
    segments = path.split("/")[:13]
    logged = [segment and loggable_word(segment) for segment in segments[:12]]
    for index in range(1, len(logged)):
        if segments[index - 1] == "tickets":
            logged[index] = logged[index][:8]
    return "/".join(logged) + ("/..." if len(segments) > 12 else "")


@functools.lru_cache(maxsize=4096)
def loggable_address(address):
    ip = client_ip(address)
    return "-" if ip is None else str(ip)
