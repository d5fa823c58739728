"""PostgreSQL backups with the server's own tools, as `museum backup` and `museum restore`
run them: a backup is `pg_dump -Fc`; a restore empties the museum's schema and runs
`pg_restore`'s script into it with `psql`, both in one transaction, so a restore that
fails leaves the database as it was.

Not `pg_restore --clean`: it drops only the objects the dump holds, so a table a later
migration added stays behind after a rollback (a stray `slot_places` made the next
`museum migrate` fail), and it fails on each object of the dump the database lacks.

The client programs are the first on PATH, else the newest Debian install's under
/usr/lib/postgresql (as tests/pg_cluster.py finds the server's). A password in the url goes
to them in `PGPASSWORD`, never on a command line other users can read.
"""

import glob
import os
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from storage import InUse, StorageError, display_url
from storage.postgres import MIGRATIONS
from storage.sql import one_line

PROGRAM_PREFIX = re.compile(r"^(pg_dump|pg_restore|psql)(:.*?:\d+)?: (error: )?")
INSTALLED = "/usr/lib/postgresql/*/bin"  # Debian's, one directory per major version
CLIENT_PACKAGE = "postgresql-client"
# What the museum makes in its schema, by pg_class.relkind: tables (their indexes and
# identity sequences go with them), and any view or sequence made beside them.
DROPPED_KINDS = {"r": "TABLE", "p": "TABLE", "v": "VIEW", "m": "MATERIALIZED VIEW",
                 "S": "SEQUENCE"}
# Those of the current schema, but the sequences of identity columns (dropped with them).
OWN_OBJECTS = """
    SELECT relname, relkind FROM pg_class c
    WHERE relnamespace = current_schema()::regnamespace AND relkind = ANY(%s)
    AND NOT EXISTS (SELECT FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                    AND d.objid = c.oid AND d.deptype IN ('a', 'i'))
    ORDER BY relkind DESC, relname"""


def client_program(name):
    """The path of the PostgreSQL client program `name`; `StorageError` naming it when it
    is not installed."""
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(directory or ".") / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    installed = sorted(glob.glob(f"{INSTALLED}/{name}"), key=_major_version)
    if not installed:
        raise StorageError(f"{name} is not installed (neither on PATH nor under {INSTALLED}): "
                           f"install PostgreSQL's client programs (Debian: apt-get install "
                           f"{CLIENT_PACKAGE}), of the server's major version or newer")
    return installed[-1]


def _major_version(path):
    return [int(number) for number in re.findall(r"\d+", Path(path).parts[-3])]


def dump(url, destination):
    """See `storage.backup`: `pg_dump -Fc` into `DEST.partial` (owner-only), which must read
    back as a museum database's dump before it replaces `destination`."""
    partial = f"{destination}.partial"
    try:
        _new_private_file(partial)
        _run(url, "backup", [client_program("pg_dump"), "--format=custom", f"--file={partial}"])
        archived_version(partial)  # the archive reads back, with the museum's schema in it
        with open(partial, "rb") as file:
            os.fsync(file.fileno())
        os.replace(partial, destination)
    except OSError as error:
        raise StorageError(f"{error.filename}: backup failed: {error.strerror}") from error
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def restore(url, source):
    """See `storage.restore`: refuse while other sessions use the database, then, in one
    transaction, drop every table, view and sequence of the museum's schema and run the
    dump's script. Return what became of the database it replaced, as a phrase."""
    if not os.path.exists(source):
        raise StorageError(f"{os.path.abspath(source)}: no backup there; nothing was restored")
    version = archived_version(source)
    if not 0 < version <= len(MIGRATIONS):
        raise StorageError(f"{source}: not restored: its schema version {version} is not one "
                           f"this service can use (1 to {len(MIGRATIONS)})")
    schema, drops = _schema_to_empty(url)
    # The whole script first, in a private directory: a dump that fails to read half-way
    # must stop the restore before psql commits the half it was given.
    with tempfile.TemporaryDirectory(prefix="museum-restore-") as private:
        script = os.path.join(private, "restore.sql")
        done = subprocess.run([client_program("pg_restore"), f"--file={script}", source],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise StorageError(f"{source}: not restored, pg_restore cannot read it: "
                               f"{_first_error(done.stderr)}")
        emptying = [f"--command={' '.join(drop for _, drop in drops)}"] if drops else []
        _run(url, "restore", [client_program("psql"), "--no-psqlrc", "--quiet",
                              "--single-transaction", "--set=ON_ERROR_STOP=1", *emptying,
                              f"--file={script}"])
    if not drops:
        return f"schema {schema} was empty"
    kinds = Counter(kind.lower() for kind, _ in drops)
    dropped = ", ".join(f"{count} {kind}{'s' if count > 1 else ''}"
                        for kind, count in kinds.items())
    return (f"what it held in schema {schema} ({dropped}) was dropped first, in the "
            f"restore's one transaction")


def archived_version(path):
    """The schema version of the museum database in the `pg_dump -Fc` archive at `path`
    (the highest row of its schema_migrations); `StorageError` when pg_restore cannot read
    it or it holds no museum database."""
    done = subprocess.run([client_program("pg_restore"), "--data-only",
                           "--table=schema_migrations", "--file=-", path],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise StorageError(f"{path}: not a backup of a PostgreSQL database: pg_restore: "
                           f"{_first_error(done.stderr)}")
    rows = re.search(r"^COPY [^\n]*schema_migrations .*? FROM stdin;\n(.*?)^\\\.$",
                     done.stdout, re.MULTILINE | re.DOTALL)
    versions = [int(line.split("\t")[0]) for line in rows.group(1).splitlines()] if rows else []
    if not versions:
        raise StorageError(f"{path}: not a backup of a museum database (it has no "
                           f"schema_migrations rows)")
    return max(versions)


def _schema_to_empty(url):
    """(the schema the museum's store works in, [(kind, the statement dropping it)] for
    each object it holds); `InUse` while another session uses the database."""
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            _refuse_if_in_use(conn, url)
            schema = conn.execute("SELECT current_schema()").fetchone()[0]
            return schema, [(DROPPED_KINDS[kind], _drop(conn, kind, schema, name))
                            for name, kind in conn.execute(OWN_OBJECTS, [list(DROPPED_KINDS)])]
    except psycopg.Error as error:
        raise StorageError(f"PostgreSQL at {display_url(url)}: not restored: "
                           f"{one_line(error)}") from error


def _refuse_if_in_use(conn, url):
    """`InUse` while another client is connected to the database, as a running service's
    connection pool always is."""
    others = conn.execute(
        "SELECT coalesce(nullif(application_name, ''), 'unnamed'), count(*) "
        "FROM pg_stat_activity WHERE datname = current_database() "
        "AND pid <> pg_backend_pid() AND backend_type = 'client backend' "
        "GROUP BY 1 ORDER BY 1").fetchall()
    if others:
        sessions = ", ".join(f"{count} of {name}" for name, count in others)
        raise InUse(f"PostgreSQL at {display_url(url)} is in use by other sessions "
                    f"({sessions}): stop the service before restoring")


def _drop(conn, kind, schema, name):
    return sql.SQL("DROP {} IF EXISTS {}.{} CASCADE;").format(
        sql.SQL(DROPPED_KINDS[kind]), sql.Identifier(schema), sql.Identifier(name)
    ).as_string(conn)


def _run(url, what, argv):
    """Run a client program on the database at `url` (given as `--dbname`, its password in
    the environment); `StorageError` with its first error line when it fails."""
    options = conninfo_to_dict(url)
    environ = dict(os.environ)
    if "password" in options:
        environ["PGPASSWORD"] = options.pop("password")
    done = subprocess.run([*argv, f"--dbname={make_conninfo(**options)}"],
                          capture_output=True, text=True, env=environ, check=False)
    if done.returncode != 0:
        nothing = "; nothing was changed" if what == "restore" else ""
        raise StorageError(f"PostgreSQL at {display_url(url)}: {what} failed{nothing}: "
                           f"{Path(argv[0]).name}: {_first_error(done.stderr)}")


def _first_error(stderr):
    """The first line saying what went wrong in a client program's messages, without the
    program's name and script line it starts with (`psql:FILE:LINE: `, `pg_dump: error: `)."""
    lines = [" ".join(line.split()) for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower() or "fatal" in line.lower()]
    return PROGRAM_PREFIX.sub("", (errors or lines or ["no message"])[0])


def _new_private_file(path):
    """An empty file at `path` readable by its owner only (mode 600), before a byte of the
    database is written into it."""
    if os.path.exists(path):
        os.remove(path)
    os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
