"""Lock files beside a sqlite database, so that one process of several does a job: serve
the database (`PATH.serve.lock`), or erase its old contacts (`PATH.erase.lock`).

An exclusive `flock` belongs to the open file, so it ends with the process that holds it,
however it ends: a lock is never stale, and the file left behind means nothing by itself.
The holder writes its PID in the file, for the messages of those it keeps out.
"""

import fcntl
import os


def try_lock(path):
    """Lock `path` (created if missing) for the life of this process: the open file that
    holds the lock (keep it), or None while another process holds it."""
    file = _open(path)
    try:
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        file.close()
        return None
    return _record_holder(file)


def wait_for_lock(path):
    """Lock `path` as `try_lock` does, waiting for as long as another process holds it."""
    file = _open(path)
    fcntl.flock(file, fcntl.LOCK_EX)
    return _record_holder(file)


def holder(path):
    """The PID written in the lock file `path` by its holder, or None if unreadable."""
    try:
        with open(path, encoding="ascii") as file:
            return int(file.read().strip())
    except (OSError, ValueError):
        return None


def _open(path):
    # Opened for update, not truncated: the holder's PID stays readable to the others. A
    # file another user made (root, say) still locks when opened read-only: a lock needs
    # no write permission, only the PID goes unrecorded.
    try:
        return os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, 0o644), "r+", encoding="ascii")
    except PermissionError:
        return open(path, encoding="ascii")


def _record_holder(file):
    if file.writable():
        file.seek(0)
        file.truncate()
        file.write(f"{os.getpid()}\n")
        file.flush()
    return file
