"""docs/museum.service and its backup timer: systemd accepts them, the service keeps the
layout docs/production.md describes, sandboxed to an exposure below 3.0 ("OK"), and that page shows
it as shipped, with that figure."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import museum

ROOT = Path(__file__).resolve().parent.parent
UNIT = ROOT / "docs" / "museum.service"
BACKUP_UNITS = [ROOT / "docs" / "museum-backup.service", ROOT / "docs" / "museum-backup.timer"]
INSTALLED = "/opt/museum/bin/museum"
# Keys systemd adds up when set again (the allowed system calls, then those taken out).
ADDED_UP = {"SystemCallFilter"}
EXPOSURE = re.compile(r"Overall exposure level for museum\.service: (\d+\.\d) (\w+)")


def settings(text):
    """{key: value} of the unit's lines (a key set twice would be a mistake here, but for
    those systemd adds up: their values in a list)."""
    pairs = [line.split("=", 1) for line in text.splitlines()
             if "=" in line and not line.startswith("#")]
    keys = [key for key, _ in pairs if key not in ADDED_UP]
    assert len(keys) == len(set(keys)), keys
    found = {}
    for key, value in pairs:
        if key in ADDED_UP:
            found.setdefault(key, []).append(value)
        else:
            found[key] = value
    return found


def systemd_analyze():
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (Debian: apt-get install systemd); "
                    ".ci/run installs it")
    return analyze


def test_the_unit_runs_the_documented_layout_sandboxed():
    unit = settings(UNIT.read_text())
    assert unit["ExecStart"] == f"{INSTALLED} serve --config /etc/museum/museum.ini"
    assert (unit["User"], unit["StateDirectory"], unit["ConfigurationDirectory"],
            unit["RuntimeDirectory"]) == ("museum",) * 4
    assert (unit["UMask"], unit["Restart"], unit["RestartPreventExitStatus"]) == (
        "0077", "on-failure", "2")
    # After SIGTERM, waitress lets the requests under way finish for at most 5 s.
    assert int(unit["TimeoutStopSec"]) >= 15
    for key in ("NoNewPrivileges", "PrivateTmp", "PrivateDevices", "PrivateUsers",
                "ProtectHome", "ProtectKernelTunables", "ProtectKernelModules",
                "ProtectControlGroups", "RestrictNamespaces", "RestrictSUIDSGID"):
        assert unit[key] == "true", key
    assert (unit["ProtectSystem"], unit["CapabilityBoundingSet"]) == ("strict", "")
    # Started after a PostgreSQL server on the same machine, stopped before it.
    assert "postgresql.service" in unit["After"].split()


def test_the_unit_is_sandboxed_to_an_exposure_below_3_as_the_readme_says():
    result = subprocess.run([systemd_analyze(), "security", "--offline=true", str(UNIT)],
                            capture_output=True, text=True, timeout=60, check=False)
    figure, rating = EXPOSURE.search(result.stdout).groups()
    assert float(figure) < 3.0 and rating == "OK", result.stdout[-2000:]
    production = (ROOT / "docs" / "production.md").read_text().split("## On one server")[1]
    assert f"exposure {figure} (OK)" in production.split("\n## ")[0]


def test_systemd_accepts_the_unit_and_the_backup_timer(tmp_path):
    """`systemd-analyze verify` on the units, the installed path swapped for this venv's
    `museum` (systemd checks that the command exists). It needs no running systemd."""
    analyze = systemd_analyze()
    command = Path(sys.executable).parent / "museum"
    assert command.exists(), command
    units = [UNIT, *BACKUP_UNITS]
    assert all(INSTALLED in unit.read_text() for unit in units[:2])  # the two services
    copies = [tmp_path / unit.name for unit in units]
    for unit, copy in zip(units, copies):
        copy.write_text(unit.read_text().replace(INSTALLED, str(command)))
    result = subprocess.run([analyze, "verify", *map(str, copies)],
                            capture_output=True, text=True, timeout=60, check=False)
    # A misspelt key is only a warning, exit status 0: no output at all is the pass.
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_the_production_page_shows_the_unit_as_shipped():
    assert f"```ini\n{UNIT.read_text()}```" in (ROOT / "docs" / "production.md").read_text()


def test_the_production_config_puts_socket_and_database_where_unit_and_nginx_expect_them():
    readme = (ROOT / "docs" / "production.md").read_text()
    block = re.search(r"```ini\n(\[server\]\nunix_socket = .*?)```", readme, re.DOTALL).group(1)
    config = museum.parse_config(block, "docs/production.md")
    unit = settings(UNIT.read_text())
    socket = config["server"]["unix_socket"]
    assert socket.startswith(f"/run/{unit['RuntimeDirectory']}/")
    assert f"server unix:{socket};" in (ROOT / "docs" / "nginx.conf").read_text()
    assert config["storage"]["url"].startswith(f"/var/lib/{unit['StateDirectory']}/")
    assert config["server"]["public_url"] == "https://museum.example.org"
