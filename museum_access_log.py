"""The access log: one line per request through the standard `logging` module, written in
blocks, and the middleware that names each request and writes its line.

A request's thread only queues its line's time and message; a `QueueListener` thread makes
the log records and writes them. (A `QueueHandler` would make the record in the request's
thread: it cost 8 µs more per request, more than a third of a cheap request:
benchmarks/access_log.py.) One write per line would cost more than the rest of a cheap request (it hands the
core to another thread on every line), so, as nginx's `access_log ... buffer= flush=` does,
the listener wakes at the latest every `flush` seconds, or as soon as BLOCK_LINES wait, and
writes every line waiting as one block. Whatever stops the process writes what is left:
`museum serve` after its drain, and at exit any other way (gunicorn's workers exit
normally; a host that leaves SIGTERM to its default, as `waitress-serve` does, has it made
an exit: `exit_cleanly_on_sigterm`); a kill -9 loses at most the last `flush` seconds of
lines. `flush = 0` writes each line at once, in the request's thread. A file is a
`WatchedFileHandler`: when logrotate moves it away, the next block starts a new file, with
no signal needed. The application log (warnings, errors) does not come here and stays
unbuffered.
"""

import atexit
import contextvars
import itertools
import logging
import logging.handlers
import os
import queue
import re
import secrets
import signal
import sys
import threading
import time

from museum_config import ConfigError
from museum_http import loggable_address, loggable_path, loggable_word

BLOCK_LINES = 500  # lines waiting that wake the listener at once (about 64 KiB)
log = logging.getLogger("museum")
access_log = logging.getLogger("museum.access")
access_log.setLevel(logging.INFO)  # whatever [log] level says of the application log
access_log.propagate = False  # its own handler, as [log] access says


class AccessLineFormat(logging.Formatter):
    """"<date> <time>,<ms> INFO museum.access: <message>", as the application log's lines
    (`%(asctime)s %(levelname)s %(name)s: %(message)s`) are, made with less work: every
    access line is an INFO line of one logger with a message that is text already, and the
    date and time are formatted once per second of a block."""

    def __init__(self):
        super().__init__()
        self._second = self._stamp = None

    def format(self, record):
        second = int(record.created)
        if second != self._second:
            self._second = second
            self._stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(second))
        # From `created`, not `msecs`: a record remade from the queue (`created` set after it
        # was made) keeps the milliseconds of its remaking.
        milliseconds = int((record.created - second) * 1000)
        return (f"{self._stamp},{milliseconds:03d} {record.levelname} {record.name}: "
                f"{record.msg}")


class Blocks:
    """Makes a logging stream handler gather its lines and write them together, as one
    block, on `flush` (or once BLOCK_LINES have gathered)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.setFormatter(AccessLineFormat())
        self._block = []
        self.batched = True  # False: each line is written as it comes

    def emit(self, record):
        try:
            self._block.append(self.format(record) + self.terminator)
        except Exception:  # noqa: BLE001 (logging's own rule: a bad record is reported)
            self.handleError(record)
        if len(self._block) >= BLOCK_LINES or not self.batched:
            self.flush()

    def flush(self):
        with self.lock:
            block, self._block = "".join(self._block), []
            if not block:
                return
            try:
                self.write_block(block)
            except (OSError, ValueError) as error:  # ValueError: the stream was closed
                log.error("access log: %d line(s) lost: %s", block.count("\n"), error)

    def write_block(self, block):
        self.stream.write(block)
        self.stream.flush()


class BlocksToStderr(Blocks, logging.StreamHandler):
    """To whatever `sys.stderr` is when a block is written: tests and hosts replace it."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value):
        pass


class BlocksToStream(Blocks, logging.StreamHandler):
    """To a stream given (a test's)."""


class BlocksToFile(Blocks, logging.handlers.WatchedFileHandler):
    """To a file that logrotate may move away: each block checks the path first, and
    starts a new file, owner-only as the service's others are, when it was moved."""

    def __init__(self, path):
        _create_private(path)
        super().__init__(path, encoding="utf-8")

    def write_block(self, block):
        _create_private(self.baseFilename)
        self.reopenIfNeeded()
        super().write_block(block)


def _create_private(path):
    """Create the file at `path` readable by its owner only (client addresses are personal
    data), unless it exists: `open` would give it the mode of the umask, 0644 outside
    systemd."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except FileExistsError:
        pass


class BlockListener(logging.handlers.QueueListener):
    """A QueueListener that takes lines in blocks: when the queue is empty it has its
    handler write what it gathered, then sleeps until `flush_seconds` pass, a block is
    full or the log stops. A request's thread queues only its line's attributes (the time
    and the message); the log record is made here, off the request's path, as a record
    sent from elsewhere is (`logging.makeLogRecord`)."""

    def __init__(self, lines, handler, flush_seconds, wake):
        super().__init__(lines, handler)
        self.flush_seconds = flush_seconds
        self.wake = wake

    def dequeue(self, block):
        while True:
            try:
                return self.queue.get_nowait()
            except queue.Empty:
                pass
            for handler in self.handlers:
                handler.flush()
            self.wake.wait(self.flush_seconds)
            self.wake.clear()

    def prepare(self, line):
        return logging.makeLogRecord({"name": access_log.name, "levelno": logging.INFO,
                                      "levelname": "INFO", **line})

    def enqueue_sentinel(self):
        super().enqueue_sentinel()
        self.wake.set()

    def stop(self):
        """Write every line queued, then stop."""
        super().stop()
        for handler in self.handlers:
            handler.flush()


class AccessLogWriter:
    """The process's access log: to `file` (a path), or to whatever `sys.stderr` is when
    None, or to a stream (tests). Made, it replaces the one made before, which writes what
    it had; its lines go out at exit, however the process exits normally."""

    def __init__(self, file=None, flush_seconds=1.0):
        if file is None:
            handler = BlocksToStderr()
        elif isinstance(file, str):
            handler = BlocksToFile(file)
        else:
            handler = BlocksToStream(file)
        self.handler = handler
        self.flush_seconds = flush_seconds
        self.listener = None
        if not flush_seconds:  # each line at once, in the request's thread
            handler.batched = False
            _install(self, handler)
            return
        self.wake = threading.Event()
        self.lines = queue.SimpleQueue()
        self.listener = BlockListener(self.lines, handler, self.flush_seconds, self.wake)
        _install(self, None)
        self.listener.start()
        atexit.register(self.close)

    def write(self, message):
        """Log `message` as one line, stamped with the time of this call."""
        if self.listener is None:
            access_log.info(message)
            return
        self.lines.put({"created": time.time(), "msg": message})
        if self.lines.qsize() >= BLOCK_LINES:
            self.wake.set()

    def close(self):
        """Write what is left and stop."""
        if self.listener is not None:
            self.listener.stop()
            self.listener = None
            atexit.unregister(self.close)
        self.handler.flush()


_installed = []  # the writer whose handler the access logger has


def _install(writer, handler):
    for previous in _installed:
        previous.close()
        previous.handler.close()
    for old in list(access_log.handlers):
        access_log.removeHandler(old)
    if handler is not None:  # lines written at once go through the logger
        access_log.addHandler(handler)
    _installed[:] = [writer]


def exit_cleanly_on_sigterm():
    """A host that leaves SIGTERM to its default (waitress-serve) is killed by it without
    running exit handlers, and the access lines waiting are lost: make SIGTERM an exit, as
    Ctrl-C is, so the host stops its loop and the lines are written. A host with its own
    handler (gunicorn, `museum serve`) keeps it; only the main thread may set one."""
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL):
        signal.signal(signal.SIGTERM, _exit)


def _exit(signum, frame):
    raise SystemExit(0)


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
