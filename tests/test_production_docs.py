"""The production docs agree with themselves and with the code: one layout (/opt/museum,
/etc/museum, /var/lib/museum and its backups) in the docs, the units and the cron line;
the backup unit's commands, run as written, make a checked copy and keep two weeks; a
relative database path in a config file is found beside the file, whatever the working
directory; nginx passes its request id on."""

import os
import re
import shlex
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

import pytest

import museum

ROOT = Path(__file__).resolve().parent.parent
DOCS = "".join(page.read_text() for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
BACKUP_UNIT = ROOT / "docs" / "museum-backup.service"
INSTALLED = "/opt/museum/bin/museum"
BACKUPS = "/var/lib/museum/backups"
COMMAND = str(Path(sys.executable).parent / "museum")


def museum_command(*args, cwd):
    return subprocess.run([COMMAND, *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("written, found", [
    ("museum.sqlite3", "{etc}/museum.sqlite3"),
    ("data/museum.sqlite3", "{etc}/data/museum.sqlite3"),
    ("../lib/museum.sqlite3", "{etc}/../lib/museum.sqlite3"),
    ("sqlite:///data/museum.sqlite3", "sqlite:///{etc}/data/museum.sqlite3"),
    ("/var/lib/museum/museum.sqlite3", "/var/lib/museum/museum.sqlite3"),
    ("sqlite:////var/lib/museum/museum.sqlite3", "sqlite:////var/lib/museum/museum.sqlite3"),
    (":memory:", ":memory:"),
    ("postgresql://museum@db.example.org/museum", "postgresql://museum@db.example.org/museum"),
])
def test_a_relative_database_path_in_a_config_file_is_taken_from_its_directory(
        tmp_path, monkeypatch, written, found):
    etc = tmp_path / "etc"
    etc.mkdir()
    (etc / "museum.ini").write_text(f"[storage]\nurl = {written}\n")
    monkeypatch.chdir(tmp_path)
    config = museum.load_config(str(Path("etc") / "museum.ini"), environ={})
    assert config["storage"]["url"] == found.format(etc=etc)


def test_a_relative_path_given_by_flag_or_environment_is_the_working_directorys(tmp_path):
    (tmp_path / "museum.ini").write_text("[storage]\nurl = museum.sqlite3\n")
    config_path = str(tmp_path / "museum.ini")
    by_flag = museum.load_config(config_path, {}, {("storage", "url"): "drill.sqlite3"})
    assert by_flag["storage"]["url"] == "drill.sqlite3"
    by_environment = museum.load_config(config_path, {"MUSEUM_STORAGE_URL": "drill.sqlite3"})
    assert by_environment["storage"]["url"] == "drill.sqlite3"


def test_museum_run_elsewhere_finds_the_database_beside_its_config(tmp_path):
    etc, elsewhere = tmp_path / "etc", tmp_path / "elsewhere"
    etc.mkdir()
    elsewhere.mkdir()
    (etc / "museum.ini").write_text("[storage]\nurl = museum.sqlite3\n")
    migrated = museum_command("init", "--config", str(etc / "museum.ini"), cwd=elsewhere)
    assert migrated.returncode == 0, migrated.stderr
    assert (etc / "museum.sqlite3").exists() and os.listdir(elsewhere) == []


def systemd_commands(unit_text):
    """The unit's ExecStart lines as argument lists, as systemd splits them ($$ and %% are
    a plain $ and %)."""
    lines = [line.split("=", 1)[1] for line in unit_text.splitlines()
             if line.startswith("ExecStart=")]
    return [shlex.split(line.replace("$$", "$").replace("%%", "%")) for line in lines]


def test_the_backup_units_commands_make_a_checked_private_copy_and_keep_two_weeks(tmp_path):
    etc, state = tmp_path / "etc", tmp_path / "lib"
    etc.mkdir()
    (state / "backups").mkdir(parents=True)  # systemd creates it: StateDirectory=
    (etc / "museum.ini").write_text(f"[storage]\nurl = {state}/museum.sqlite3\n")
    assert museum_command("init", "--config", str(etc / "museum.ini"), cwd=tmp_path) \
        .returncode == 0
    stale, recent = state / "backups" / "museum-2000-01-01.sqlite3", \
        state / "backups" / "museum-2000-01-02.sqlite3"
    stale.write_bytes(b"old")
    recent.write_bytes(b"old")
    month_ago = time.time() - 30 * 86400
    os.utime(stale, (month_ago, month_ago))

    unit = BACKUP_UNIT.read_text()
    assert "StateDirectory=museum/backups\n" in unit
    for argv in systemd_commands(unit):
        argv = [argument.replace(INSTALLED, COMMAND).replace("/etc/museum", str(etc))
                .replace("/var/lib/museum", str(state)) for argument in argv]
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (argv, done.stderr)

    copy = state / "backups" / f"museum-{date.today().isoformat()}.sqlite3"
    checked = museum_command("check", "--db", str(copy), cwd=tmp_path)
    assert checked.returncode == 0 and checked.stdout.endswith(": ok\n"), checked.stdout
    assert copy.stat().st_mode & 0o077 == 0
    assert (state / "backups" / "museum.ini").read_text() == (etc / "museum.ini").read_text()
    assert not stale.exists() and recent.exists()


def test_the_docs_back_up_where_the_units_put_things():
    for gone in ("/srv/museum", "/var/backups"):
        assert gone not in DOCS, gone
    cron = re.search(r"^15 3 \* \* \* museum (.*)$", DOCS, re.MULTILINE).group(1)
    assert cron.startswith(f"{INSTALLED} backup --config /etc/museum/museum.ini {BACKUPS}/")
    assert f"find {BACKUPS} " in cron
    for argv in systemd_commands(BACKUP_UNIT.read_text()):
        assert BACKUPS in " ".join(argv)
    drill = DOCS.split("**The restore drill.**")[1].split("```sh\n")[1].split("```")[0]
    assert "/etc/museum/museum.ini" in drill


def test_nginx_passes_its_request_id_and_logs_it():
    nginx = (ROOT / "docs" / "nginx.conf").read_text()
    assert "proxy_set_header X-Request-Id $request_id;" in nginx
    log_format = nginx.split("log_format museum")[1].split(";")[0]
    assert "$request_id" in log_format
