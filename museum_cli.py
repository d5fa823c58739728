"""The `museum` command: serve the service (and its mock), look after its database
(init, migrate, backup, restore, check, purge-contacts), the devices that sign in
(add-device, revoke-device, devices), the outbox (send, outbox), webhook receivers
(add-webhook, remove-webhook, webhooks), the door and setup helpers (verify-ticket,
hash-password, openapi), and the sales report. Only `serve` and `init` create a database;
the others name a missing one as missing.

Exit status: 0 done, 1 a runtime failure (the database), 2 a usage or config error.
"""

import argparse
import getpass
import json
import logging
import os
import signal
import sys
import threading
from contextlib import contextmanager
from datetime import date

import museum_outbox
import museum_passwords
import museum_privacy
import museum_webhooks
import storage
from museum import (
    INTERFACE_VERSION,
    __version__,
    create_app,
    openapi_description,
    set_log_level,
)
from museum_config import (
    ConfigError,
    LiveConfig,
    check_passwords,
    help_for_config,
    is_loopback,
    load_config,
    parse_config,
    refuse_demo_passwords,
    storage_limits,
    warn_if_readable_by_others,
    where_exposed,
)
from museum_access_log import open_access_log
from museum_credentials import DEVICE_NAME, hash_key, hash_password, is_key_digest, new_device_key
from museum_devices import PAIRING_MINUTES, new_pairing, pairing_path
from museum_door import EntryTimes, verify_ticket
from museum_http import rfc3339
from museum_services import (
    describe_database,
    existing_database,
    museum_now,
    museum_today,
    new_uuid,
    open_configured_store,
    qr_secret,
    refuse_a_moved_database,
    utc_now,
)
from museum_vocabulary import GATE_ROLE

log = logging.getLogger("museum")
VERSION_LINE = f"museum {__version__} (interface {INTERFACE_VERSION})"


def command_serve(args):
    import museum_server  # waitress serves the command's app; an embedded app needs none

    overrides = {("server", "host"): args.host, ("server", "port"): args.port,
                 ("storage", "url"): args.db, ("storage", "auto_migrate"): args.migrate}
    overrides = {key: str(value) for key, value in overrides.items() if value}
    if args.host or args.port:  # where to listen: the flags win over the config's socket
        overrides["server", "unix_socket"] = ""
    config = load_config(args.config, overrides=overrides)
    set_log_level(config)
    warn_if_readable_by_others(config)
    server = config["server"]
    if not (server["unix_socket"] or is_loopback(server["host"])):
        log.warning("listening on %s, which other machines reach: publish the service only "
                    "behind a TLS-terminating reverse proxy (docs/nginx.conf), never directly "
                    "(docs/security.md says why)", server["host"])
    refuse_a_moved_database(config)  # before the lock file beside it is made
    live = LiveConfig(config)
    try:
        with museum_server.claim(config):
            exposed = where_exposed(config["server"])
            refuse_demo_passwords(config, exposed)  # before a database is opened, or made
            access = open_access_log(config)  # as soon: its [log] access may be wrong
            store = open_configured_store(config)
            stop_sending = threading.Event()
            try:
                app = create_app(live, store=store, exposed_on=exposed, access=access,
                                 erase_contacts=True)
                museum_outbox.Sender(config, store, utc_now).run_in_background(stop_sending)
                return serve(app, config["server"], describe_database(config, store),
                             lambda: reload_config(live, args.config, overrides, exposed))
            finally:
                stop_sending.set()
                store.close()  # sqlite: the last connection closed folds the WAL into the file
    except museum_server.CannotServe as error:
        print(f"museum: {error}", file=sys.stderr)
        return 1


def reload_config(live, path, overrides, exposed_on):
    """SIGHUP's re-reading of the config file (as at the start: the same file, environment
    and flags) into `live`. A config that does not load, or that a start would refuse,
    leaves the one in use; the log says why either way."""
    try:
        config = load_config(path, overrides=overrides)
        needs_restart = live.replace(config, exposed_on)
    except ConfigError as error:
        log.error("reload refused, the config in use stays: %s", error)
        return
    log.info("reloaded %s: hours, exceptions, capacity, prices, currency, users and log "
             "level as it says", config.source)
    if needs_restart:
        log.warning("reload: %s changed, which only a restart applies", ", ".join(needs_restart))


def command_reload(args):
    """Check the config as a reload would, then send SIGHUP to the running service."""
    config = _configured(args)
    check_passwords(config, where_exposed(config["server"]))
    import museum_server  # finding the server goes by its lock file or socket

    pid = args.pid or museum_server.serving_pid(config)
    if pid is None:
        print(f"museum: no running service found for {storage.display_url(config['storage']['url'])}"
              f" (on PostgreSQL over TCP nothing names it): give its --pid, or send it "
              f"SIGHUP (systemctl reload museum)", file=sys.stderr)
        return 1
    try:
        os.kill(pid, signal.SIGHUP)
    except OSError as error:
        print(f"museum: cannot signal PID {pid}: {error.strerror}", file=sys.stderr)
        return 1
    print(f"{config.source} is valid; sent SIGHUP to the museum service (PID {pid}), which "
          f"now reads it again (its log says what it applied)")
    return 0


def command_init(args):
    config = _configured(args)
    url = config["storage"]["url"]
    path = storage.sqlite_file(url)
    if path and os.path.exists(path):
        print(f"museum: {os.path.abspath(path)}: a database is already there; nothing "
              f"changed", file=sys.stderr)
        return 1
    open_configured_store(config).close()  # logs: created a new database at PATH
    return 0


def command_migrate(args):
    config = _configured(args)
    open_configured_store(config, migrate=True, create=False).close()
    print(f"{storage.display_url(config['storage']['url'])} is at this version's schema")
    return 0


def command_backup(args):
    url = existing_database(_configured(args))
    storage.backup(url, args.destination)
    print(f"backed up {storage.display_url(url)} to {args.destination} (checked)")
    return 0


def command_restore(args):
    url = _configured(args)["storage"]["url"]
    replaced = storage.restore(url, args.source)
    print(f"restored {storage.display_url(url)} from {args.source}; {replaced}")
    return _checked(args, restored=True)


def command_check(args):
    return _checked(args)


def command_send(args):
    """Deliver the outbox's due messages once, then exit (cron, hosts without the thread)."""
    config = _configured(args)
    store = storage.open_store(existing_database(config), migrate=False,
                               limits=storage_limits(config))
    try:
        sent = museum_outbox.Sender(config, store, utc_now).send_due()
        summary = store.outbox_summary()
    finally:
        store.close()
    print(f"sent {sent}; failed in the outbox: {summary['failed']}")
    return 0


OUTBOX_COLUMNS = ("ID", "KIND", "TO", "STATE", "ATTEMPTS", "CREATED", "LAST ANSWER")


def command_outbox(args):
    """List the outbox's messages, or retry or drop one."""
    config = _configured(args)
    store = storage.open_store(existing_database(config), migrate=False,
                               limits=storage_limits(config))
    try:
        if args.retry:
            store.retry_message(args.retry, rfc3339(utc_now()))
            print(f"message {args.retry} queued again; the sender delivers it at its next look")
        elif args.drop:
            store.drop_message(args.drop)
            print(f"message {args.drop} dropped: it will not be sent")
        else:
            _print_messages(store.list_messages(args.state, args.limit))
    except storage.NotFound:
        print(f"museum: no message {args.retry or args.drop} in the outbox", file=sys.stderr)
        return 2
    except storage.NotAllowed as refusal:
        print(f"museum: cannot do that now: {refusal}", file=sys.stderr)
        return 2
    finally:
        store.close()
    return 0


def _print_messages(messages):
    rows = [(message["messageId"], message["kind"], message["target"], message["state"],
             str(message["attempts"]), message["createdAt"], message["lastAnswer"] or "-")
            for message in messages]
    widths = [max(len(row[column]) for row in [OUTBOX_COLUMNS, *rows]) for column in range(6)]
    for row in [OUTBOX_COLUMNS, *rows]:
        print("  ".join([*(value.ljust(width) for value, width in zip(row, widths)), row[6]]))


def command_add_webhook(args):
    """Register a receiver of the events named, with a new secret printed once."""
    config = _configured(args)
    try:  # refused now rather than at every delivery
        museum_webhooks.checked_address(args.url, config["webhooks"]["allow_private"])
    except museum_webhooks.AddressRefused as refusal:
        print(f"museum: {refusal}", file=sys.stderr)
        return 2
    webhook = {"webhookId": new_uuid(), "url": args.url,
               "secret": museum_webhooks.new_secret(), "events": args.events,
               "createdAt": rfc3339(utc_now())}
    with _devices_of(config) as store:
        store.add_webhook(webhook)
    print(f"Webhook {webhook['webhookId']} added: {args.url} receives "
          f"{', '.join(args.events)} from the next change on, signed with this secret "
          f"(Standard Webhooks; 'museum webhooks' never shows it again):")
    print(f"  {webhook['secret']}")
    return 0


def command_remove_webhook(args):
    config = _configured(args)
    with _devices_of(config) as store:
        try:
            store.remove_webhook(args.id)
        except storage.NotFound:
            print(f"museum: no webhook {args.id} ('museum webhooks' lists them)",
                  file=sys.stderr)
            return 2
    print(f"Webhook {args.id} removed, with its deliveries not sent yet.")
    return 0


WEBHOOK_COLUMNS = ("ID", "URL", "EVENTS", "ADDED", "DISABLED")


def command_webhooks(args):
    """List the receivers, disabled ones with when and why; never a secret."""
    config = _configured(args)
    store = storage.open_store(existing_database(config), read_only=True)
    try:
        rows = [(webhook["webhookId"], webhook["url"], ",".join(webhook["events"]),
                 webhook["createdAt"],
                 f"{webhook['disabledAt']}: {webhook['disabledWhy']}"
                 if webhook["disabledAt"] else "-")
                for webhook in store.webhooks()]
    finally:
        store.close()
    widths = [max(len(row[column]) for row in [WEBHOOK_COLUMNS, *rows]) for column in range(4)]
    for row in [WEBHOOK_COLUMNS, *rows]:
        print("  ".join([*(value.ljust(width) for value, width in zip(row, widths)), row[4]]))
    return 0


def _failed_messages(url):
    """What `museum check` says of the outbox's failed messages; '' when none failed."""
    store = storage.open_store(url, read_only=True, migrate=False)
    try:
        summary = store.outbox_summary()
    finally:
        store.close()
    if not summary["failed"]:
        return ""
    return (f"outbox: {summary['failed']} failed messages (the oldest made "
            f"{summary['oldest']}); 'museum outbox --state failed' lists them")


def _checked(args, restored=False):
    """`museum check`: one line per finding, or `URL: ok`. A database just restored may be
    at an older schema, as a rollback means it to be: said, but no finding."""
    config = _configured(args)
    warn_if_readable_by_others(config)
    url = existing_database(config)
    findings = storage.inspect(url, older_schema_ok=restored)
    for finding in findings:
        print(finding)
    if not findings:
        print(f"{storage.display_url(url)}: ok{_older_schema(url) if restored else ''}")
        failed = "" if restored else _failed_messages(url)
        if failed:  # said, as /healthz says it, but no finding: the database is sound
            print(failed)
    return 1 if findings else 0


def _older_schema(url):
    """`, at schema version N of an older version…` for a database behind this version's
    schema; '' for one at it."""
    version, current = storage.schema_versions(url)
    if version == current:
        return ""
    return (f", at schema version {version} of an older version (this one uses {current}: "
            f"the older version runs it as it is; 'museum migrate' brings it to this one)")


def command_purge_contacts(args):
    config = _configured(args)
    store = storage.open_store(existing_database(config), migrate=False)
    try:
        today = museum_today(config)()
        museum_privacy.erase_old_contacts(store, today, config["privacy"]["keep_contact_days"])
    finally:
        store.close()
    return 0


def _configured(args):
    """The config, with the database of `--db` if given; `ConfigError` when its relative
    url would miss the database versions before 1.2 used (`refuse_a_moved_database`)."""
    config = load_config(args.config,
                         overrides={("storage", "url"): args.db} if args.db else {})
    refuse_a_moved_database(config)
    return config


def command_mock(args):
    import museum_mock

    overrides = {("server", "host"): args.host, ("server", "port"): args.port}
    config = parse_config(museum_mock.DEMO_CONFIG, "mock defaults",
                          overrides={k: v for k, v in overrides.items() if v})
    exposed = where_exposed(config["server"])
    if exposed:  # any credentials are an admin here, as good as a demo password: same rule
        raise ConfigError(f"the mock accepts any credentials; refusing to listen {exposed} "
                          f"(use a loopback address)")
    return serve(museum_mock.create_mock_app(config), config["server"],
                 "MOCK: demo data in memory, any credentials, nothing is kept")


def serve(wsgi_app, server_settings, what, reload=None):
    import museum_server  # waitress serves the command's app; an embedded app needs none

    return museum_server.run_server(
        wsgi_app, server_settings,
        f"museum service {__version__} (interface {INTERFACE_VERSION})", what, reload)


def command_openapi(args):
    print(json.dumps(openapi_description(), indent=2))
    return 0


def command_hash_password(args):
    password = getpass.getpass("Password: ") if sys.stdin.isatty() \
        else sys.stdin.readline().rstrip("\r\n")
    refusal = museum_passwords.refusal(password)
    if refusal:
        print(f"museum: {refusal}; nothing was hashed", file=sys.stderr)
        return 2
    print(hash_password(password))
    return 0


def command_add_device(args):
    if not DEVICE_NAME.fullmatch(args.name):
        print("museum: a device name is 1 to 64 letters, digits, '.', '_' or '-', starting "
              "with a letter or digit", file=sys.stderr)
        return 2
    if args.qr and args.role != GATE_ROLE:
        print("museum: --qr is for a gate device, which the scanner page pairs; a desk or "
              "visitor device (a desk computer, a web shop) is given its key", file=sys.stderr)
        return 2
    config = _configured(args)
    if args.name in config.users:
        print(f"museum: {args.name} is a user of [users] in {config.source}: a device added "
              f"to the database needs a name of its own (or remove that line and restart "
              f"the service first)", file=sys.stderr)
        return 2
    server = config["server"]
    base = (args.url or server["public_url"]
            or f"http://{server['host']}:{server['port']}").rstrip("/")
    # A gate device's key is made when the scanner page exchanges the pairing code for
    # it: until then its key is one nobody is shown. A desk or visitor device is given its
    # key.
    key = new_device_key()
    now = utc_now()
    code, pairing = new_pairing(now) if args.role == GATE_ROLE else (None, None)
    url = config["storage"]["url"]
    with _devices_of(config) as store:
        try:
            store.add_device(args.name, args.role, hash_key(key), rfc3339(now), pairing)
        except storage.DeviceExists:
            print(f"museum: a device named {args.name} is in use: revoke it first (museum "
                  f"revoke-device {args.name}), then add it again", file=sys.stderr)
            return 2
    print(f"Device {args.name} ({args.role}) added to {storage.display_url(url)}: every "
          f"service on that database lets it sign in from now on, without a restart.")
    if code is None:
        print(f"Key of device {args.name} (shown only now; the database keeps only its "
              f"digest):")
        print(f"  {key}")
        return 0
    # The code travels in the fragment, which browsers never send; the page exchanges it
    # for the key in a POST at once, so no address ever holds the key.
    link = base + pairing_path(code)
    print(f"Pairing link, valid for {PAIRING_MINUTES} minutes and once: opened on the "
          f"device, it fetches the device's key and signs the scanner page in.")
    print(f"  {link}")
    if args.qr:
        import segno

        with owner_only_file(args.qr) as image:  # it pairs a device until used or expired
            segno.make_qr(link).save(image, kind="png", scale=8)
        print(f"The pairing link is in the QR code written to {args.qr}: scanned within "
              f"{PAIRING_MINUTES} minutes, it pairs the device. Keep it as you would a key "
              f"until then.")
    return 0


def owner_only_file(path):
    """`path` opened to write bytes, readable by its owner only (mode 600) even when it
    existed with another mode, before a byte is written."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(descriptor, 0o600)
    return os.fdopen(descriptor, "wb")


def command_revoke_device(args):
    config = _configured(args)
    url = config["storage"]["url"]
    with _devices_of(config) as store:
        try:
            store.revoke_device(args.name, rfc3339(utc_now()))
        except storage.NotFound:
            where = (f"it is a user of [users] in {config.source}: remove its line there and "
                     f"restart the service" if args.name in config.users
                     else "'museum devices' lists them")
            print(f"museum: no device named {args.name} is in use in "
                  f"{storage.display_url(url)} ({where})", file=sys.stderr)
            return 2
    print(f"Device {args.name} revoked in {storage.display_url(url)}: every service on that "
          f"database refuses its key from now on (401), without a restart.")
    return 0


def command_devices(args):
    config = _configured(args)
    store = storage.open_store(existing_database(config), read_only=True)
    try:
        stored = store.list_devices()
    finally:
        store.close()
    rows = [(device["name"], device["role"], device["createdAt"], device["revokedAt"] or "-")
            for device in stored]
    rows += [(user.name, user.role, f"[users] of {config.source}", "-")
             for user in sorted(config.users.values(), key=lambda user: user.name)
             if is_key_digest(user.password_hash)]
    widths = [max(len(row[column]) for row in [DEVICE_COLUMNS, *rows]) for column in range(3)]
    for row in [DEVICE_COLUMNS, *rows]:
        print("  ".join([*(value.ljust(width) for value, width in zip(row, widths)), row[3]]))
    return 0


DEVICE_COLUMNS = ("NAME", "ROLE", "ADDED", "REVOKED")


@contextmanager
def _devices_of(config):
    """The store of `config` for adding or revoking a device; a database of an older
    schema is left as it is (StorageError saying how to migrate it)."""
    store = storage.open_store(existing_database(config), migrate=False,
                               limits=storage_limits(config))
    try:
        yield store
    finally:
        store.close()


def command_verify_ticket(args):
    config = _configured(args)
    store = storage.open_store(existing_database(config), read_only=True)
    secret = qr_secret(config, store, create=False)
    if secret is None:
        raise storage.StorageError("no QR secret in the database yet: no ticket was sold")
    entry_times = EntryTimes(config["door"]["early_minutes"], museum_now(config))
    verdict = verify_ticket(args.text, secret, store, museum_today(config)(), entry_times)
    print(verdict)
    return 0 if verdict.startswith("valid") else 1


def command_report(args):
    import museum_sales

    if args.to < args.start or (args.to - args.start).days >= museum_sales.REPORT_DAYS_MAX:
        raise ConfigError(f"--to must be from --from to {museum_sales.REPORT_DAYS_MAX - 1} "
                          f"days after it")
    store = storage.open_store(existing_database(_configured(args)), read_only=True)
    try:
        rows = museum_sales.report_rows(store, args.start, args.to, args.breakdown)
    finally:
        store.close()
    sys.stdout.write(museum_sales.report_csv(rows) if args.csv
                     else json.dumps(rows, indent=2) + "\n")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(prog="museum", description="The museum service.")
    parser.add_argument("--version", action="version", version=VERSION_LINE)
    commands = parser.add_subparsers(dest="command", required=True)
    _serving_commands(commands)
    _setup_commands(commands)
    _database_commands(commands)
    return parser


def _serving_commands(commands):
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
                       "backup beside it, PATH.vN.DATE.bak); without it the service refuses to "
                       "start on one")
    serve.set_defaults(run=command_serve)

    reload = _database_command(
        commands, "reload", command_reload, "check the config file, then have the running "
        "'museum serve' read it again (SIGHUP): hours, exceptions, capacity, prices, "
        "currency, users and log level change without a restart; other options need one")
    reload.add_argument("--pid", type=int, help="the service's process (default: the one "
                        "serving the sqlite database or the unix socket of the config)")

    mock = commands.add_parser(
        "mock", help="serve the same API on demo data in memory (any credentials, kept nowhere)")
    _listen_flags(mock)
    mock.set_defaults(run=command_mock)


def _setup_commands(commands):
    openapi = commands.add_parser("openapi", help="print the OpenAPI description as JSON")
    openapi.set_defaults(run=command_openapi)

    hash_cmd = commands.add_parser(
        "hash-password", help="read a password from stdin, print a hash for [users]; "
        f"refuses one under {museum_passwords.MIN_LENGTH} characters or among the 10,000 "
        "most common")
    hash_cmd.set_defaults(run=command_hash_password)

    device = commands.add_parser(
        "add-device", help="add a device (a door's scanner, a desk, a web shop) to the database: a "
        "gate device gets a one-time pairing link, a desk or visitor device its key; running "
        "services accept it at once",
        description="Add a device, which signs in with its name as the user and a random "
                    "key (192 bits) as the password, to the configured database (which "
                    "keeps only the key's digest). A gate device gets a pairing link "
                    f"(/scan#pair=CODE), valid {PAIRING_MINUTES} minutes and once: the "
                    "scanner page opened by it fetches the key in a POST and keeps it, so "
                    "no address or history ever holds the key. A desk or visitor device "
                    "(a desk computer, a web shop) gets its key, printed once. Every service on the database lets "
                    "the device sign in from its next request: no restart.")
    device.add_argument("name", help="the device's user name, such as gate-north")
    device.add_argument("--role", required=True, choices=["gate", "desk", "visitor"],
                        help="gate: a door's scanner; desk: a shared desk computer; visitor: "
                        "an integration such as a web shop")
    device.add_argument("--qr", metavar="FILE.png",
                        help="gate devices: also write the pairing link as a QR code PNG "
                        "(readable by its owner only)")
    device.add_argument("--url", help="the service's address in the link (default: [server] "
                        "public_url, else http://host:port of the config)")
    _config_flags(device)
    device.set_defaults(run=command_add_device)

    revoke = commands.add_parser(
        "revoke-device", help="revoke a device added with add-device: every service on the "
        "database refuses its key from its next request (401), no restart")
    revoke.add_argument("name", help="the device's user name")
    _config_flags(revoke)
    revoke.set_defaults(run=command_revoke_device)

    devices = commands.add_parser(
        "devices", help="list the devices (of the database, revoked ones too, and the device "
        "keys of [users]): name, role, when added and revoked; never a key")
    _config_flags(devices)
    devices.set_defaults(run=command_devices)


def _database_commands(commands):
    verify = _database_command(
        commands, "verify-ticket", command_verify_ticket, "check a scanned ticket QR text "
        "or a typed confirmation code, reading the database only; admits nobody (exit 0 if "
        "valid and not yet admitted)")
    verify.add_argument("text", help="the text the scanner read from the QR code, or the "
                        "confirmation code (ticket-event-792d82-891fc, or only 792d82-891fc)")
    _database_command(
        commands, "init", command_init, "create a new, empty database where the config "
        "says (sqlite: saying its absolute path); no other command but 'serve' creates one")
    _database_command(
        commands, "migrate", command_migrate, "migrate a database of an older version to "
        "this one's schema (sqlite: after a backup beside it, PATH.vN.DATE.bak), then exit")
    backup = _database_command(
        commands, "backup", command_backup, "copy the database to DEST while the service "
        "runs; the copy is checked and owner-only (PostgreSQL: a pg_dump -Fc archive)")
    backup.add_argument("destination", metavar="DEST", help="file to write (replaced once "
                        "the new copy passes its check)")
    restore = _database_command(
        commands, "restore", command_restore, "replace the database with a backup, then "
        "check it; refuses while a service has the database open (PostgreSQL: empties the "
        "museum's schema and restores the dump into it, in one transaction)")
    restore.add_argument("source", metavar="SRC", help="a file written by 'museum backup'")
    _database_command(
        commands, "check", command_check, "check the database, reading only: sqlite's "
        "integrity and foreign-key checks, the schema version, and every table, column and "
        "index its version should have; one line per finding (exit 0 if none)")
    report = _database_command(
        commands, "report", command_report, "print the sales report of the tickets dated "
        "--from to --to (at most a year), as JSON or CSV, reading the database only")
    report.add_argument("--from", dest="start", required=True, type=date.fromisoformat,
                        metavar="YYYY-MM-DD", help="first day")
    report.add_argument("--to", required=True, type=date.fromisoformat,
                        metavar="YYYY-MM-DD", help="last day")
    report.add_argument("--csv", action="store_true", help="CSV instead of JSON")
    report.add_argument("--breakdown", action="store_true",
                        help="each row by price category and by channel too (reads the "
                             "window's tickets: slower than the report alone)")
    _database_command(
        commands, "send", command_send, "deliver the outbox's due messages (the tickets' "
        "mails) once, then exit: for cron, or a host without 'museum serve''s sender")
    outbox = _database_command(
        commands, "outbox", command_outbox, "list the outbox's messages (newest first: "
        "state, attempts, the receiver's last answer), or retry or drop one")
    outbox.add_argument("--state", choices=["queued", "sending", "sent", "failed"],
                        help="only the messages in this state")
    outbox.add_argument("--limit", type=int, default=100, help="at most this many (100)")
    outbox.add_argument("--retry", metavar="ID", help="queue a failed message again, due now, "
                        "its attempts counted from 0")
    outbox.add_argument("--drop", metavar="ID", help="forget a message: it is not sent")
    add_webhook = _database_command(
        commands, "add-webhook", command_add_webhook, "register a webhook receiver of the "
        "events named, with a signing secret of its own (printed once); a loopback, private "
        "or link-local address is refused unless [webhooks] allow_private")
    add_webhook.add_argument("url", help="where deliveries are POSTed (http:// or https://)")
    add_webhook.add_argument("--events", nargs="+", required=True,
                             choices=storage.WEBHOOK_EVENTS, metavar="EVENT",
                             help=f"the events it receives: {', '.join(storage.WEBHOOK_EVENTS)}")
    remove_webhook = _database_command(
        commands, "remove-webhook", command_remove_webhook, "forget a webhook receiver and "
        "its deliveries not sent yet")
    remove_webhook.add_argument("id", help="the receiver's id, as 'museum webhooks' lists it")
    _database_command(
        commands, "webhooks", command_webhooks, "list the webhook receivers: id, URL, events, "
        "when added, and when and why disabled (it answered 410 Gone); never a secret")
    _database_command(
        commands, "purge-contacts", command_purge_contacts, "erase the email and phone of "
        "tickets dated more than [privacy] keep_contact_days ago, as the running service "
        "does daily")


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


if __name__ == "__main__":
    sys.exit(main())
