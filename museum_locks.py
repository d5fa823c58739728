"""Lock files beside a sqlite database, so that one process of several does a job: serve
the database (`PATH.serve.lock`), migrate it (`PATH.migrate.lock`), or erase its old
contacts (`PATH.erase.lock`). PATH is the database's real path (symlinks resolved): two
names of one file are one database.

An exclusive `flock` belongs to the open file, so it ends with the process that holds it,
however it ends: a lock is never stale, and the file left behind means nothing by itself.
The holder writes its PID in the file, for the messages of those it keeps out.
"""

import fcntl
import os


class Served(Exception):
    """Another server serves the database; the message names it."""


def beside(database, job):
    """The lock file of `job` (serve, migrate, erase) for the sqlite file `database`."""
    return f"{os.path.realpath(database)}.{job}.lock"


def claim_database(database, host_group=None):
    """Make this process the one server of the sqlite file `database`, before it opens it:
    the open lock file (keep it for as long as it serves). `museum serve` is one process;
    a WSGI host's workers are several, of one process group, which they name as
    `host_group`: then None when a worker of that group holds the lock already. `Served`
    naming the PID of the other server; OSError when the lock file cannot be made."""
    path = beside(database, "serve")
    held = try_lock(path, host_group)
    if held is not None or (host_group is not None and holder_group(path) == host_group):
        return held
    raise Served(f"{os.path.realpath(database)} is already served by another museum "
                 f"service (PID {holder(path) or 'unknown'}); stop it first, or serve a "
                 f"copy of the database")


def try_lock(path, group=None):
    """Lock `path` (created if missing) for the life of this process, recording this
    process's PID and `group` in it: the open file that holds the lock (keep it), or None
    while another process holds it."""
    file = _open(path)
    try:
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        file.close()
        return None
    return _record_holder(file, group)


def wait_for_lock(path):
    """Lock `path` as `try_lock` does, waiting for as long as another process holds it."""
    file = _open(path)
    fcntl.flock(file, fcntl.LOCK_EX)
    return _record_holder(file)


def holder(path):
    """The PID written in the lock file `path` by its holder, or None if unreadable."""
    recorded = _recorded(path)
    return recorded[0] if recorded else None


def holder_group(path):
    """The process group its holder recorded in the lock file `path`, or None."""
    recorded = _recorded(path)
    return recorded[1] if len(recorded) > 1 else None


def _recorded(path):
    try:
        with open(path, encoding="ascii") as file:
            return [int(number) for number in file.read().split()]
    except (OSError, ValueError):
        return []


def _open(path):
    # Opened for update, not truncated: the holder's PID stays readable to the others. A
    # file another user made (root, say) still locks when opened read-only: a lock needs
    # no write permission, only the PID goes unrecorded.
    try:
        return os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, 0o644), "r+", encoding="ascii")
    except PermissionError:
        return open(path, encoding="ascii")


def _record_holder(file, group=None):
    if file.writable():
        file.seek(0)
        file.truncate()
        file.write(f"{os.getpid()}{'' if group is None else f' {group}'}\n")
        file.flush()
    return file
