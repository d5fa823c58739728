"""The rule for a new password, which `museum hash-password` applies: at least MIN_LENGTH
characters, and none of the 10,000 most common passwords (common.txt, shipped with the
package: its first lines name its source, COMMON-LICENSE.txt its licence, and
tools/make_common_passwords.py writes it). The service itself checks no password against
it: a hash says nothing of its password's length."""

from functools import cache
from importlib.resources import files

MIN_LENGTH = 12


def refusal(password):
    """Why `password` must not be used, as one sentence; None when it may."""
    if len(password) < MIN_LENGTH:
        return f"a password has at least {MIN_LENGTH} characters (this one has {len(password)})"
    if password.casefold() in common_passwords():
        return "this password is one of the 10,000 most common ones: choose another"
    return None


@cache
def common_passwords():
    """The shipped list (lower case), read once."""
    text = files(__name__).joinpath("common.txt").read_text(encoding="utf-8")
    return frozenset(line for line in text.splitlines() if line and not line.startswith("#"))
