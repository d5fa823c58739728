"""The config file: the shipped museum.ini, the schema, precedence and every kind of error."""

import configparser
import datetime
from pathlib import Path

import pytest

import museum
import museum_config
import museum_credentials
import museum_services

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "museum.ini"


def test_shipped_config_parses_with_demo_users_and_default_hours():
    config = museum.load_config(str(SHIPPED), environ={})
    assert {name: user.role for name, user in config.users.items()} == {
        "admin": "admin", "visitor": "visitor", "gate": "gate", "desk": "desk"}
    assert sorted(museum_config.check_passwords(config, None)) == ["admin", "desk", "gate", "visitor"]
    assert config["server"]["host"] == "127.0.0.1"
    assert config.schedule.weekly == (None,) + (("09:00", "18:00"),) * 3 + (
        ("10:00", "16:00"),) + (("09:00", "18:00"),) * 2


def test_shipped_config_documents_every_option_of_the_schema():
    parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
    parser.read(SHIPPED)
    for section, options in museum_config.SCHEMA.items():
        assert set(parser[section]) == set(options), section
    text = SHIPPED.read_text()
    for section, options in museum_config.SCHEMA.items():
        for key in options:
            comment_before = text.split(f"\n{key} =")[0].rstrip().splitlines()[-1]
            assert comment_before.startswith("#") or section == "hours", (section, key)


def test_defaults_apply_when_nothing_is_configured():
    config = museum.parse_config("")
    assert config["server"]["port"] == 8080
    assert config["storage"]["url"] == "museum.sqlite3"
    assert config["museum"]["timezone"] is None
    assert config.users == {}


@pytest.mark.parametrize("text, hundredths", [("0", 0), ("12", 1200), ("12.5", 1250),
                                              ("9.99", 999), ("12.500", 1250)])
def test_the_general_price_is_kept_in_hundredths(text, hundredths):
    config = museum.parse_config(f"[tickets]\ngeneral_price = {text}\n")
    assert config["tickets"]["general_price"] == hundredths
    assert config["museum"]["currency"] == "EUR"


def test_exceptions_override_the_weekly_schedule():
    config = museum.parse_config(
        "[exceptions]\n2026-11-24 = closed\n2026-11-23 = 12:00-15:00\n")
    assert config.schedule.hours_on(datetime.date(2026, 11, 24)) is None
    assert config.schedule.hours_on(datetime.date(2026, 11, 23)) == ("12:00", "15:00")
    assert config.schedule.hours_on(datetime.date(2026, 11, 25)) == ("09:00", "18:00")


def test_environment_beats_the_file_and_flags_beat_the_environment():
    text = "[server]\nport = 9000\nthreads = 2\n"
    environ = {"MUSEUM_SERVER_PORT": "9100", "MUSEUM_SERVER_THREADS": "6"}
    config = museum.parse_config(text, environ=environ, overrides={("server", "port"): "9200"})
    assert config["server"]["port"] == 9200
    assert config["server"]["threads"] == 6


def test_percent_signs_survive_in_values():
    secret = "100%-secret-" + "x" * 24
    config = museum.parse_config(f"[tickets]\nqr_secret = {secret}\n")
    assert config["tickets"]["qr_secret"] == secret


def test_time_zone_defines_today():
    config = museum.parse_config("[museum]\ntimezone = Pacific/Auckland\n")
    late_utc = datetime.datetime(2026, 11, 22, 20, 0, tzinfo=datetime.timezone.utc)
    today = museum_services.museum_today(config, lambda: late_utc)
    assert today() == datetime.date(2026, 11, 23)


@pytest.mark.parametrize("text, named", [
    ("[users]\nbob = curator:scrypt$1$1$1$AA==$AA==\n", "[users] bob: role"),
    ("[users]\nbob = admin:not-a-hash\n", "[users] bob: unreadable password hash"),
    ("[users]\nbob = admin\n", "[users] bob:"),
    ("[hours]\nmonday = 18:00-09:00\n", "[hours] monday:"),
    ("[hours]\nmonday = 9-18\n", "[hours] monday:"),
    ("[hours]\nmonday = 09:00-25:00\n", "[hours] monday:"),
    ("[hours]\nfunday = closed\n", "[hours] funday: unknown option"),
    ("[exceptions]\n2026-02-30 = closed\n", "[exceptions] 2026-02-30:"),
    ("[exceptions]\n2026-2-3 = closed\n", "[exceptions] 2026-2-3:"),
    ("[exceptions]\n2026-12-24 = 15:00-10:00\n", "[exceptions] 2026-12-24:"),
    ("[server]\nport = eighty\n", "[server] port:"),
    ("[server]\nport = 70000\n", "[server] port:"),
    ("[server]\nthreads = 0\n", "[server] threads:"),
    ("[server]\nlisten = 1.2.3.4\n", "[server] listen: unknown option"),
    ("[museum]\ntimezone = Mars/Olympus\n", "[museum] timezone:"),
    ("[server]\ntrusted_proxy = *\n", "[server] trusted_proxy: must be exactly one IP"),
    ("[server]\ntrusted_proxy = proxy.example.org\n", "[server] trusted_proxy:"),
    ("[server]\ntrusted_proxy = 10.0.0.1, 10.0.0.2\n", "[server] trusted_proxy:"),
    ("[server]\ntrusted_proxy = 10.0.0.0/8\n", "[server] trusted_proxy:"),
    ("[tickets]\nqr_secret = short-secret\n", "[tickets] qr_secret: must be at least 32"),
    ("[gallery]\nx = 1\n", "unknown section [gallery]"),
    ("[museum]\ncurrency = euro\n", "[museum] currency: must be an ISO 4217 code"),
    ("[tickets]\ngeneral_price = 9.999\n", "[tickets] general_price: must be a price"),
    ("[tickets]\ngeneral_price = -1\n", "[tickets] general_price:"),
    ("[tickets]\ngeneral_price = NaN\n", "[tickets] general_price:"),
    ("[tickets]\ngeneral_price = free\n", "[tickets] general_price:"),
    ("[server\n", "site.ini:"),
])
def test_an_invalid_config_names_file_section_and_key(text, named):
    with pytest.raises(museum.ConfigError) as raised:
        museum.parse_config(text, "site.ini")
    message = str(raised.value)
    assert message.startswith("site.ini: ")
    assert named in message
    assert "\n" not in message


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "::1", "2001:db8::7"])
def test_trusted_proxy_takes_exactly_one_ip_address(address):
    config = museum.parse_config(f"[server]\ntrusted_proxy = {address}\n")
    assert config["server"]["trusted_proxy"] == address


def test_a_missing_named_config_file_is_an_error(tmp_path):
    with pytest.raises(museum.ConfigError, match="cannot read"):
        museum.load_config(str(tmp_path / "absent.ini"), environ={})


def test_museum_config_variable_names_the_file(tmp_path):
    path = tmp_path / "site.ini"
    path.write_text("[server]\nport = 9999\n")
    config = museum.load_config(environ={"MUSEUM_CONFIG": str(path)})
    assert config["server"]["port"] == 9999
    assert config.source == str(path)


def test_new_password_hashes_meet_owasps_scrypt_minimum_and_are_salted():
    first, second = museum_credentials.hash_password("s3cret"), museum_credentials.hash_password("s3cret")
    assert first != second and first.startswith("scrypt$131072$8$1$")
    assert not museum_credentials.is_weak(first)
    assert museum_credentials.check_password("s3cret", first)
    assert not museum_credentials.check_password("s3cret!", first)


def test_existing_weaker_hashes_still_verify_but_count_as_weak():
    # A hash made before the minimum was raised (N=2^14), as museum.ini shipped it then.
    old = ("scrypt$16384$8$1$PcyLeXDnzJAptxmbQDmlNg==$MVVh32omn4afkkQRGog3zGCcb/7q54bxbsniFtX4t"
           "QdiVHMj35nMEnEXDKgYe1Mz/8xYTC5UyJCNeif0au6WJA==")
    assert museum_credentials.check_password("museum", old)
    assert museum_credentials.is_weak(old)
