"""A throwaway PostgreSQL cluster on a free loopback port, in a directory of its own.

Used by the test fixtures, by CI and by the scale-out benchmark. Standard library only, so
CI can start the server before the project's venv exists:

    python3 tests/pg_cluster.py start DIR    # prints the server's URL
    python3 tests/pg_cluster.py stop DIR     # stops it and removes DIR

The binaries are the first `pg_ctl` on PATH, else the newest Debian install under
/usr/lib/postgresql. PostgreSQL refuses to run as root, so as root the cluster runs as the
`postgres` system user (DIR is handed to that user). Authentication is `trust`: the
server listens on 127.0.0.1 only and holds nothing but test data.
"""

import glob
import os
import pwd
import shutil
import socket
import subprocess
import sys
from pathlib import Path

SUPERUSER = "postgres"
START_ATTEMPTS = 3  # a free port can be taken by someone else before the server binds it

# Test data is thrown away, so skip the fsyncs; a durable cluster keeps PostgreSQL's defaults.
FAST_SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")


class ClusterError(Exception):
    """No cluster could be started (no binaries, no `postgres` user, a failed start)."""


def binaries():
    """The directory holding initdb and pg_ctl."""
    on_path = shutil.which("pg_ctl")
    if on_path:
        return Path(on_path).resolve().parent
    installed = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                       key=lambda path: int(Path(path).parts[-3]))
    if not installed:
        raise ClusterError("PostgreSQL is not installed (Debian: apt-get install postgresql)")
    return Path(installed[-1]).parent


def _as_owner():
    """The command prefix that runs a server binary as a user PostgreSQL accepts."""
    if os.geteuid() != 0:
        return []
    if shutil.which("runuser") is None:
        raise ClusterError("running as root needs runuser to switch to the postgres user")
    return ["runuser", "-u", SUPERUSER, "--"]


def _hand_over(directory):
    """As root, give `directory` to the postgres user; it must also be able to reach it."""
    if os.geteuid() != 0:
        return
    try:
        owner = pwd.getpwnam(SUPERUSER)
    except KeyError:
        raise ClusterError(f"running as root needs a '{SUPERUSER}' system user") from None
    os.chown(directory, owner.pw_uid, owner.pw_gid)


def _run(argv):
    """Run a server binary; True when it succeeded."""
    return subprocess.run(argv, capture_output=True, text=True).returncode == 0


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start(directory, durable=False):
    """Create and start a cluster in the existing, empty `directory`; return its URL."""
    bin_dir, prefix = binaries(), _as_owner()
    directory = Path(directory)
    _hand_over(directory)
    data, log = directory / "data", directory / "server.log"
    initdb = subprocess.run([*prefix, str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER,
                             "--auth=trust", "-E", "UTF8", "--no-sync"],
                            capture_output=True, text=True)
    if initdb.returncode != 0:
        raise ClusterError(f"initdb failed: {initdb.stderr.strip()[-2000:]}")
    settings = ["listen_addresses=127.0.0.1", "unix_socket_directories=''",
                *(() if durable else FAST_SETTINGS)]
    for _ in range(START_ATTEMPTS):
        port = _free_port()
        options = " ".join(f"-c {setting}" for setting in [*settings, f"port={port}"])
        if _run([*prefix, str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log),
                 "-o", options, "-w", "-t", "60", "start"]):
            return f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres"
    raise ClusterError("the server did not start: "
                       + (log.read_text()[-2000:] if log.exists() else "no log"))


def pause(directory):
    """Stop the server of the cluster in `directory`, keeping its data, as an outage would;
    `resume` starts it again."""
    if not _run([*_as_owner(), str(binaries() / "pg_ctl"), "-D", str(Path(directory) / "data"),
                 "-m", "fast", "-w", "stop"]):
        raise ClusterError("the server did not stop")


def resume(directory):
    """Start the paused server again on its port and settings: `pg_ctl restart` reads them
    from postmaster.opts, which the first start left in the data directory."""
    directory = Path(directory)
    if not _run([*_as_owner(), str(binaries() / "pg_ctl"), "-D", str(directory / "data"),
                 "-l", str(directory / "server.log"), "-w", "-t", "60", "restart"]):
        raise ClusterError("the server did not start again: "
                           + (directory / "server.log").read_text()[-2000:])


def stop(directory):
    """Stop the cluster in `directory`, if one runs there, and remove the directory."""
    directory = Path(directory)
    if (directory / "data" / "postmaster.pid").exists():
        _run([*_as_owner(), str(binaries() / "pg_ctl"), "-D", str(directory / "data"),
              "-m", "immediate", "-w", "stop"])
    shutil.rmtree(directory, ignore_errors=True)


def main(argv):
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        print(__doc__, file=sys.stderr)
        return 2
    command, directory = argv
    if command == "stop":
        stop(directory)
        return 0
    try:
        print(start(directory))
    except ClusterError as error:
        print(f"pg_cluster: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
