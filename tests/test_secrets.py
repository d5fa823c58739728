"""Secrets handled as secrets, through the real `museum` command: hash-password refuses
short and common passwords, a password that is the demo word is refused wherever the service
is published, a config file others may read is warned about at start and by `museum check`,
a pairing QR is its owner's alone, and `museum serve` on an address other machines reach
says in one line that it belongs behind the TLS proxy."""

import socket
import stat
from contextlib import contextmanager

import pytest
from commands import museum_command
from conftest import quick_hash
from serving import ROOT
from test_server import run_museum

import museum
import museum_config
import museum_credentials
import museum_passwords

PROXY_LINE = ("which other machines reach: publish the service only behind a "
              "TLS-terminating reverse proxy (docs/nginx.conf)")


@contextmanager
def taken_port():
    """A loopback port something else listens on: `museum serve` told to listen there, on
    any address, says its start-up lines and stops (exit 1) without listening anywhere."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def serve_until_listening(tmp_path, config_path, *flags):
    """`museum serve` with `config_path` as it is (its mode kept), stopped by a taken port
    just before it would listen: its stderr."""
    with taken_port() as port:
        result = run_museum("serve", "--config", str(config_path), "--port", str(port),
                            "--db", str(tmp_path / "museum.sqlite3"), *flags, cwd=tmp_path)
    assert result.returncode == 1 and "another process listens there" in result.stderr, \
        result.stderr
    return result.stderr


def secret_config(tmp_path, mode):
    """museum.ini in `tmp_path` holding a password hash, with file mode `mode`."""
    path = tmp_path / "museum.ini"
    path.write_text(f"[museum]\ntimezone = UTC\n[users]\ncurator = admin:{quick_hash('pw')}\n")
    path.chmod(mode)
    return path


# -- museum hash-password ------------------------------------------------------------------

@pytest.mark.parametrize("password, reason", [
    ("a", "at least 12 characters (this one has 1)"),
    ("eleven-char", "at least 12 characters (this one has 11)"),
    ("qwerty123456", "one of the 10,000 most common"),
    ("QAZwsxEDCrfv", "one of the 10,000 most common"),  # whatever the case
])
def test_hash_password_refuses_short_and_common_passwords(tmp_path, password, reason):
    result = run_museum("hash-password", cwd=tmp_path, stdin=password + "\n")
    assert result.returncode == 2 and result.stdout == ""
    assert reason in result.stderr and "nothing was hashed" in result.stderr


def test_the_shipped_list_holds_the_10000_most_common_passwords():
    common = museum_passwords.common_passwords()
    assert len(common) == 10_000
    assert {"123456", "password", "qwerty123456", "1qaz2wsx3edc"} <= common
    assert museum_passwords.refusal("correct horse battery staple") is None


# -- the demo word -------------------------------------------------------------------------

def test_a_fresh_hash_of_the_demo_password_refuses_to_be_published(tmp_path):
    """On a unix socket, as behind nginx: nothing listens beyond this machine."""
    config = (f"[server]\nunix_socket = {tmp_path / 'museum.sock'}\n[users]\n"
              f"admin = admin:{quick_hash(museum_credentials.DEMO_PASSWORD)}\n"
              f"curator = admin:{quick_hash('a long and unusual one')}\n")
    done = museum_command(tmp_path, config, "serve")
    assert done.status == 2, done.err
    assert ("[users] admin: the demo password is still set; refusing to serve on "
            "unix_socket") in done.err
    assert not (tmp_path / "museum.sock").exists()


def test_the_demo_word_is_hashed_for_only_where_published(config_text):
    config = museum.parse_config(config_text + f"curator = admin:{quick_hash('museum')}\n")
    assert museum_config.check_passwords(config, None) == []  # loopback: nothing is hashed
    with pytest.raises(museum.ConfigError, match=r"\[users\] curator: the demo password"):
        museum_config.check_passwords(config, "on 0.0.0.0")


# -- files that hold secrets ---------------------------------------------------------------

@pytest.mark.parametrize("mode, warned", [(0o644, True), (0o640, True), (0o604, True),
                                          (0o600, False)])
def test_a_config_others_can_read_is_warned_about_at_start_and_by_check(tmp_path, mode,
                                                                         warned):
    path = secret_config(tmp_path, mode)
    warning = (f"{path} can be read by other users (mode {mode:04o}): it holds password "
               f"hashes; make it private with: chmod 600 {path}")
    assert (warning in serve_until_listening(tmp_path, path)) is warned
    checked = run_museum("check", "--config", str(path), "--db",
                         str(tmp_path / "museum.sqlite3"), cwd=tmp_path)
    assert (warning in checked.stderr) is warned, checked.stderr


def test_the_shipped_config_is_not_warned_about(tmp_path):
    """Its only hashes are the demo ones, which everybody knows."""
    path = tmp_path / "museum.ini"
    path.write_text((ROOT / "museum.ini").read_text())
    path.chmod(0o644)
    assert "can be read by other users" not in serve_until_listening(tmp_path, path)


def test_the_pairing_qr_is_readable_by_its_owner_only(tmp_path):
    qr = tmp_path / "pair.png"
    qr.write_bytes(b"")
    qr.chmod(0o644)  # an older file in its place keeps no wider mode
    assert museum_command(tmp_path, "[museum]\ntimezone = UTC\n", "init").status == 0
    done = museum_command(tmp_path, "[museum]\ntimezone = UTC\n", "add-device", "door-north",
                          "--role", "gate", "--qr", str(qr))
    assert done.status == 0, done.err
    assert stat.S_IMODE(qr.stat().st_mode) == 0o600 and qr.read_bytes().startswith(b"\x89PNG")


# -- publishing ----------------------------------------------------------------------------

def test_serving_on_an_address_other_machines_reach_says_it_belongs_behind_the_proxy(
        tmp_path):
    path = secret_config(tmp_path, 0o600)
    said = serve_until_listening(tmp_path, path, "--host", "0.0.0.0")
    [line] = [line for line in said.splitlines() if "reverse proxy" in line]
    assert f"WARNING museum: listening on 0.0.0.0, {PROXY_LINE}" in line
    assert "reverse proxy" not in serve_until_listening(tmp_path, path, "--host", "127.0.0.1")
