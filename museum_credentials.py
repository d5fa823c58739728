"""Credentials: password hashes (slow, salted scrypt) and device keys (fast, salted
digests), and the [users] entry that holds one of them. Used by the configuration, which
reads [users], and by signing in (museum_auth), which checks them; knows nothing of HTTP.
"""

import base64
import binascii
import hashlib
import hmac
import math
import re
import secrets
from dataclasses import dataclass


@dataclass(frozen=True)
class User:
    """A [users] entry (or a device of the database): its role and its credential's hash."""

    name: str
    role: str
    password_hash: str


# ============================================================================================
# Passwords
# ============================================================================================

# OWASP's minimum for scrypt (Password Storage Cheat Sheet): N=2^17, r=8, p=1, which
# takes 128 MiB and a few hundred milliseconds per check.
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**17, 8, 1
DEMO_PASSWORD = "museum"
# Every hash of DEMO_PASSWORD that a museum.ini of this service has shipped (the N=2^14 ones
# before the cost was raised). On a loopback development run demo passwords are recognised by
# comparing these strings: hashing each user's password to find out would cost a second per
# user at every start. Where the service is published, that second is paid (museum_config's
# check_passwords).
DEMO_PASSWORD_HASHES = frozenset({  # each as its parameters and salt, then its key
    "scrypt$131072$8$1$9/k7VqWstWQwoyWXhjh03g==$"
    "QMon0dtZgXnpOKp917vupmMuGwdZq3HdWwXVl8zAiGk9DixaciwfuXcT3rOy01lZYffkdFms1i1m7kikvt6HEA==",
    "scrypt$131072$8$1$Q98TMjkOkirD+7JAZwB2Dg==$"
    "jFRALfQ0GRguoLKStyonXcKBcZf2I9zRBw4amfTWTFP840WxS2CS+yMJPNirIc6yivMgFRcQPkO4fdIrp+PPUQ==",
    "scrypt$131072$8$1$kxJDhBBwyxDRG45ETviH9Q==$"
    "toDb+qvG/EBLPQ9H6nNTxQ2ylWeBIdbcVZRqgqFa6MA9GRPz9Zd2MFMlybo2XSkBCVwGZSpJX/nr+eVkjCGnyg==",
    "scrypt$131072$8$1$eRAH9rKQ910VdcHy029tXw==$"
    "6qhbV7BbalQAD9t46Q0KkclIysAt5OF/yDbTCc2kh/AiaWBlL8la/UAEetFJmr4r44yPJ3KSJnzhvDXNiXG40A==",
    "scrypt$16384$8$1$FONya8OiiOLoeDSWkz8VlQ==$"
    "efikookp+n6iY0/MSt5CtP1m2C4RYGg323xhZNK+Qi8yh9KkAihL8bGd1ALJfjsukBWjjIAMx2IeUm7URfv6/A==",
    "scrypt$16384$8$1$PcyLeXDnzJAptxmbQDmlNg==$"
    "MVVh32omn4afkkQRGog3zGCcb/7q54bxbsniFtX4tQdiVHMj35nMEnEXDKgYe1Mz/8xYTC5UyJCNeif0au6WJA==",
    "scrypt$16384$8$1$Pu10bSErAulcCo9k4Llwbw==$"
    "61ZQ8C8rJOr4fKEncJvV5Ec+Fy/uQluYeeHldkbWRyT+lXmaLvmLLOVz/iFWcfjagbDKWiLctG1Ns7xGVtsPhw==",
})


def hash_password(password, n=SCRYPT_N):
    """A self-describing scrypt hash: scrypt$n$r$p$salt$key (base64). Only tests pass a
    smaller `n`, to stay fast."""
    salt = secrets.token_bytes(16)
    key = _scrypt(password, salt, n, SCRYPT_R, SCRYPT_P, 64)
    return _scrypt_hash(n, SCRYPT_R, SCRYPT_P, salt, key)


def _scrypt(password, salt, n, r, p, length):
    # OpenSSL refuses work that needs more than `maxmem` (32 MiB unless told): N=2^17, r=8
    # needs 128 MiB. Twice the 128*r*n bytes of scrypt's table leaves room for its buffers.
    return hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=length,
                          maxmem=256 * r * n + 2**20)


def _scrypt_hash(n, r, p, salt, key):
    encode = base64.b64encode
    return f"scrypt${n}${r}${p}${encode(salt).decode()}${encode(key).decode()}"


def _split_hash(password_hash):
    scheme, n, r, p, salt, key = password_hash.split("$")
    if scheme != "scrypt":
        raise ValueError(scheme)
    return int(n), int(r), int(p), base64.b64decode(salt, validate=True), \
        base64.b64decode(key, validate=True)


def hash_is_readable(password_hash):
    """Whether a [users] hash can be checked: a well-formed scrypt hash or key digest."""
    if is_key_digest(password_hash):
        return _key_digest_is_readable(password_hash)
    try:
        n, r, p, salt, key = _split_hash(password_hash)
    except (ValueError, binascii.Error):
        return False
    return n > 1 and n & (n - 1) == 0 and r > 0 and p > 0 and bool(salt and key)


def _cost(password_hash):
    if is_key_digest(password_hash):
        return math.inf  # a key of 192 random bits: nothing to strengthen
    n, r, p, _, _ = _split_hash(password_hash)
    return n * r * p


def is_weak(password_hash):
    """True when the hash costs less than the OWASP minimum that new hashes use."""
    return _cost(password_hash) < SCRYPT_N * SCRYPT_R * SCRYPT_P


def check_password(password, password_hash):
    """Whether `password` matches `password_hash`: a scrypt hash, or a device key's digest."""
    if is_key_digest(password_hash):
        return _check_key(password, password_hash)
    n, r, p, salt, key = _split_hash(password_hash)
    return hmac.compare_digest(_scrypt(password, salt, n, r, p, len(key)), key)


def unknown_user_hash(password_hashes):
    """A hash no password matches (its key is all zeros), as costly as the costliest of
    `password_hashes`: an unknown user name then takes as long as a real one."""
    costliest = max((each for each in password_hashes if not is_key_digest(each)), key=_cost,
                    default=None)
    n, r, p = _split_hash(costliest)[:3] if costliest else (SCRYPT_N, SCRYPT_R, SCRYPT_P)
    return _scrypt_hash(n, r, p, b"\0" * 16, b"\0" * 32)


# ============================================================================================
# Device keys
# ============================================================================================

# A device (the entrance's scanners, a web shop) signs in with a generated key instead of a
# password. Its 192 random bits cannot be guessed, so it is kept as API tokens are: a salted
# keyed digest, checked in microseconds, where a password needs a slow, memory-hard hash.
KEY_SCHEME = "key"
KEY_BYTES = 24  # 192 bits, 32 characters of URL-safe base64
DEVICE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def new_device_key():
    return secrets.token_urlsafe(KEY_BYTES)


def hash_key(key):
    """A self-describing digest of a device key: key$<salt hex>$<BLAKE2b-256 hex>."""
    salt = secrets.token_bytes(16)
    return f"{KEY_SCHEME}${salt.hex()}${_key_digest(key, salt)}"


def _key_digest(key, salt):
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), key=salt,
                           digest_size=32).hexdigest()


def is_key_digest(password_hash):
    return password_hash.startswith(KEY_SCHEME + "$")


def _key_digest_is_readable(password_hash):
    parts = password_hash.split("$")
    return len(parts) == 3 and re.fullmatch(r"[0-9a-f]{32}", parts[1]) is not None \
        and re.fullmatch(r"[0-9a-f]{64}", parts[2]) is not None


def _check_key(key, password_hash):
    _, salt, digest = password_hash.split("$")
    return hmac.compare_digest(_key_digest(key, bytes.fromhex(salt)), digest)
