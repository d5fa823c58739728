"""The `museum` command: serve the service (and its mock), look after its database
(migrate, backup, restore, check, purge-contacts), and the door and setup helpers
(verify-ticket, hash-password, openapi), and the sales report.

Exit status: 0 done, 1 a runtime failure (the database), 2 a usage or config error.
"""

import argparse
import getpass
import ipaddress
import json
import logging
import sys
import threading
import time
from datetime import date, timedelta

import storage
from museum import (
    __version__,
    create_app,
    demo_users,
    museum_today,
    open_configured_store,
    openapi_description,
    refuse_demo_passwords,
    utc_now,
    verify_ticket,
)
from museum_config import (
    ConfigError,
    hash_password,
    help_for_config,
    is_weak,
    load_config,
    parse_config,
)

log = logging.getLogger("museum")


def _is_loopback(host):
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def command_serve(args):
    overrides = {("server", "host"): args.host, ("server", "port"): args.port,
                 ("storage", "url"): args.db}
    config = load_config(args.config, overrides={k: v for k, v in overrides.items() if v})
    server_settings = config["server"]
    host, proxy = server_settings["host"], server_settings["trusted_proxy"]
    if proxy:  # whatever the host, the proxy publishes the service
        refuse_demo_passwords(config, f"behind the proxy trusted_proxy = {proxy}")
    elif server_settings["unix_socket"]:  # a socket is there for a proxy to publish it
        refuse_demo_passwords(config, f"on unix_socket = {server_settings['unix_socket']}")
    elif not _is_loopback(host):
        refuse_demo_passwords(config, f"on {host}")
    demo = demo_users(config)
    if demo:
        log.warning("demo password in use for %s: fine on this machine, replace it before "
                    "publishing the service", ", ".join(demo))
    weak = [user.name for user in config.users.values() if is_weak(user.password_hash)]
    if weak:
        log.warning("password hash weaker than scrypt N=2^17, r=8, p=1 for %s: make new "
                    "ones with 'museum hash-password'", ", ".join(weak))
    store = open_configured_store(config, args.migrate)
    app = create_app(config, store=store,
                     loopback_development=_is_loopback(host) and not proxy
                     and not server_settings["unix_socket"])
    erase_contacts_daily(store, config)
    return serve(app, server_settings,
                 f"database {storage.display_url(config['storage']['url'])}")


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
    log.info("erased the contacts of %d tickets dated before %s", total, before)
    if not store.scrub():
        log.warning("readers kept the database busy: erased contacts may stay in its "
                    "write-ahead log until the next erasure")
    return total


def erase_contacts_daily(store, config, clock=utc_now):
    """Erase old contacts now and then once a day, on a thread of its own that dies with
    the service."""
    today = museum_today(config["museum"]["timezone"], clock)
    keep_days = config["privacy"]["keep_contact_days"]

    def run():
        while True:
            try:
                erase_old_contacts(store, today(), keep_days)
            except storage.StorageError as error:
                log.warning("erasing old contacts failed, trying again in a day: %s", error)
            time.sleep(ERASE_EVERY)

    threading.Thread(target=run, name="erase-contacts", daemon=True).start()


def command_migrate(args):
    config = _configured(args)
    open_configured_store(config, migrate=True).close()
    print(f"{storage.display_url(config['storage']['url'])} is at this version's schema")
    return 0


def command_backup(args):
    url = _configured(args)["storage"]["url"]
    storage.backup(url, args.destination)
    print(f"backed up {url} to {args.destination} (checked)")
    return 0


def command_restore(args):
    url = _configured(args)["storage"]["url"]
    kept = storage.restore(url, args.source)
    print(f"restored {url} from {args.source}" +
          (f"; the database it replaced is kept as {kept}" if kept else ""))
    return command_check(args)


def command_check(args):
    url = _configured(args)["storage"]["url"]
    findings = storage.inspect(url)
    for finding in findings:
        print(finding)
    if not findings:
        print(f"{storage.display_url(url)}: ok")
    return 1 if findings else 0


def command_purge_contacts(args):
    config = _configured(args)
    store = storage.open_store(config["storage"]["url"], migrate=False)
    try:
        erase_old_contacts(store, museum_today(config["museum"]["timezone"], utc_now)(),
                           config["privacy"]["keep_contact_days"])
    finally:
        store.close()
    return 0


def _configured(args):
    """The config, with the database of `--db` if given."""
    return load_config(args.config, overrides={("storage", "url"): args.db} if args.db else {})


def command_mock(args):
    import museum_mock

    overrides = {("server", "host"): args.host, ("server", "port"): args.port}
    config = parse_config("", "mock defaults", overrides={k: v for k, v in overrides.items() if v})
    if not _is_loopback(config["server"]["host"]):
        # Any credentials are an admin here, as good as a demo password: same rule.
        raise ConfigError(f"the mock accepts any credentials; refusing to listen on "
                          f"{config['server']['host']} (use a loopback address)")
    return serve(museum_mock.create_mock_app(config), config["server"],
                 "MOCK: demo data in memory, any credentials, nothing is kept")


def serve(wsgi_app, server_settings, what):
    import museum_server  # waitress serves the command's app; an embedded app needs none

    return museum_server.run_server(wsgi_app, server_settings, f"museum service {__version__}",
                                    what)


def command_openapi(args):
    print(json.dumps(openapi_description(), indent=2))
    return 0


def command_hash_password(args):
    password = getpass.getpass("Password: ") if sys.stdin.isatty() \
        else sys.stdin.readline().rstrip("\r\n")
    if not password:
        print("museum: empty password", file=sys.stderr)
        return 2
    print(hash_password(password))
    return 0


def command_verify_ticket(args):
    config = _configured(args)
    store = storage.open_store(config["storage"]["url"], read_only=True)
    secret = config["tickets"]["qr_secret"] or store.setting("qr_secret")
    if secret is None:
        raise storage.StorageError("no QR secret in the database yet: no ticket was sold")
    verdict = verify_ticket(args.text, secret, store,
                            museum_today(config["museum"]["timezone"], utc_now)())
    print(verdict)
    return 0 if verdict.startswith("valid") else 1


def command_report(args):
    import museum_sales

    if args.to < args.start or (args.to - args.start).days >= museum_sales.REPORT_DAYS_MAX:
        raise ConfigError(f"--to must be from --from to {museum_sales.REPORT_DAYS_MAX - 1} "
                          f"days after it")
    store = storage.open_store(_configured(args)["storage"]["url"], read_only=True)
    try:
        rows = museum_sales.report_rows(store, args.start, args.to)
    finally:
        store.close()
    sys.stdout.write(museum_sales.report_csv(rows) if args.csv
                     else json.dumps(rows, indent=2) + "\n")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="museum", description="The museum service.")
    parser.add_argument("--version", action="version", version=f"museum {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser(
        "serve", help="serve the API with waitress",
        description="Serve the API. Settings come from the config file, then MUSEUM_<SECTION>_"
                    "<KEY> environment variables, then these flags.",
        epilog="config reference:\n" + help_for_config(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _config_flags(serve)
    _listen_flags(serve)
    serve.add_argument("--migrate", action="store_true",
                       help="migrate a database of an older version first (sqlite: after a "
                       "backup beside it, PATH.vN.bak); without it the service refuses to "
                       "start on one")
    serve.set_defaults(run=command_serve)

    mock = commands.add_parser(
        "mock", help="serve the same API on demo data in memory (any credentials, kept nowhere)")
    _listen_flags(mock)
    mock.set_defaults(run=command_mock)

    openapi = commands.add_parser("openapi", help="print the OpenAPI description as JSON")
    openapi.set_defaults(run=command_openapi)

    hash_cmd = commands.add_parser(
        "hash-password", help="read a password from stdin, print a hash for [users]")
    hash_cmd.set_defaults(run=command_hash_password)

    verify = _database_command(
        commands, "verify-ticket", command_verify_ticket, "check a scanned ticket QR text, "
        "reading the database only; admits nobody (exit 0 if valid and not yet admitted)")
    verify.add_argument("text", help="the text the scanner read from the QR code")
    _database_command(
        commands, "migrate", command_migrate, "migrate a database of an older version to "
        "this one's schema (sqlite: after a backup beside it, PATH.vN.bak), then exit")
    backup = _database_command(
        commands, "backup", command_backup, "copy the database to DEST while the service "
        "runs; the copy is checked and owner-only (PostgreSQL: use pg_dump)")
    backup.add_argument("destination", metavar="DEST", help="file to write (replaced once "
                        "the new copy passes its check)")
    restore = _database_command(
        commands, "restore", command_restore, "replace the database with a backup, then "
        "check it; refuses while a service has the database open (PostgreSQL: use "
        "pg_restore)")
    restore.add_argument("source", metavar="SRC", help="a file written by 'museum backup'")
    _database_command(
        commands, "check", command_check, "check the database, reading only: sqlite's "
        "integrity and foreign-key checks and the schema version; one line per finding "
        "(exit 0 if none)")
    report = _database_command(
        commands, "report", command_report, "print the sales report of the tickets dated "
        "--from to --to (at most a year), as JSON or CSV, reading the database only")
    report.add_argument("--from", dest="start", required=True, type=date.fromisoformat,
                        metavar="YYYY-MM-DD", help="first day")
    report.add_argument("--to", required=True, type=date.fromisoformat,
                        metavar="YYYY-MM-DD", help="last day")
    report.add_argument("--csv", action="store_true", help="CSV instead of JSON")
    _database_command(
        commands, "purge-contacts", command_purge_contacts, "erase the email and phone of "
        "tickets dated more than [privacy] keep_contact_days ago, as the running service "
        "does daily")
    return parser


def _database_command(commands, name, run, summary):
    """A subcommand that works on the configured database (`--config`, `--db`)."""
    command = commands.add_parser(name, help=summary)
    _config_flags(command)
    command.set_defaults(run=run)
    return command


def _listen_flags(parser):
    parser.add_argument("--host", help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", help="TCP port (default 8080; 0 picks a free port)")


def _config_flags(parser):
    parser.add_argument("--config", help="config file (default: $MUSEUM_CONFIG or ./museum.ini)")
    parser.add_argument("--db", help="sqlite database file or postgresql:// URL (default from "
                        "the config: museum.sqlite3)")


def main(argv=None):
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return args.run(args)
    except (ConfigError, storage.Unsupported) as error:
        print(f"museum: {error}", file=sys.stderr)
        return 2
    except storage.StorageError as error:
        print(f"museum: {error}", file=sys.stderr)
        return 1
