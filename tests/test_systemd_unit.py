"""docs/museum.service: systemd accepts it, it keeps the layout README.md describes, and the
README shows it as shipped."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import museum

ROOT = Path(__file__).resolve().parent.parent
UNIT = ROOT / "docs" / "museum.service"
INSTALLED = "/opt/museum/bin/museum"


def settings(text):
    """{key: value} of the unit's lines (a key set twice would be a mistake here)."""
    pairs = [line.split("=", 1) for line in text.splitlines()
             if "=" in line and not line.startswith("#")]
    keys = [key for key, _ in pairs]
    assert len(keys) == len(set(keys)), keys
    return dict(pairs)


def test_the_unit_runs_the_documented_layout_sandboxed():
    unit = settings(UNIT.read_text())
    assert unit["ExecStart"] == f"{INSTALLED} serve --config /etc/museum/museum.ini"
    assert (unit["User"], unit["StateDirectory"], unit["ConfigurationDirectory"],
            unit["RuntimeDirectory"]) == ("museum",) * 4
    assert (unit["UMask"], unit["Restart"], unit["RestartPreventExitStatus"]) == (
        "0077", "on-failure", "2")
    # The service drains for at most 10 s after SIGTERM (museum_server.DRAIN_SECONDS).
    assert int(unit["TimeoutStopSec"]) >= 15
    for key in ("NoNewPrivileges", "PrivateTmp", "PrivateDevices", "ProtectHome",
                "ProtectKernelTunables", "ProtectKernelModules", "ProtectControlGroups"):
        assert unit[key] == "true", key
    assert unit["ProtectSystem"] == "strict"


def test_systemd_accepts_the_unit(tmp_path):
    """`systemd-analyze verify` on the unit, the installed path swapped for this venv's
    `museum` (systemd checks that the command exists). It needs no running systemd."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed (Debian: apt-get install systemd); "
                    ".ci/run installs it")
    command = Path(sys.executable).parent / "museum"
    assert command.exists(), command
    text = UNIT.read_text()
    assert INSTALLED in text
    (tmp_path / "museum.service").write_text(text.replace(INSTALLED, str(command)))
    result = subprocess.run([analyze, "verify", str(tmp_path / "museum.service")],
                            capture_output=True, text=True, timeout=60, check=False)
    # A misspelt key is only a warning, exit status 0: no output at all is the pass.
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_the_readme_shows_the_unit_as_shipped():
    assert f"```ini\n{UNIT.read_text()}```" in (ROOT / "README.md").read_text()


def test_the_readme_config_puts_socket_and_database_where_unit_and_nginx_expect_them():
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"```ini\n(\[server\]\nunix_socket = .*?)```", readme, re.DOTALL).group(1)
    config = museum.parse_config(block, "README.md")
    unit = settings(UNIT.read_text())
    socket = config["server"]["unix_socket"]
    assert socket.startswith(f"/run/{unit['RuntimeDirectory']}/")
    assert f"server unix:{socket};" in (ROOT / "docs" / "nginx.conf").read_text()
    assert config["storage"]["url"].startswith(f"/var/lib/{unit['StateDirectory']}/")
    assert config["server"]["public_url"] == "https://museum.example.org"
