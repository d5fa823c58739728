"""Signing in: who a request's HTTP Basic credentials name, and when to refuse to look.

Accounts say who may sign in. Every kind implements the small interface of `Accounts`
(`find`, `check`), as peers: the configured [users] with the devices of the database
(`ConfiguredUsers`; a [users] entry has a password kept as a slow scrypt hash or a device
key kept as a fast salted digest, a stored device a key), and the mock's `AnyCredentials`.
`Logins` decides, for each request, how much work its credentials are worth, in this order:

1. no credentials, or a malformed Authorization header: not signed in, and nothing counted
   (a missing header is the normal first step of HTTP Basic);
2. credentials of [users] verified before: signed in at once, whatever the lock-outs say;
3. credentials that failed within the failure window: refused at once, no hash;
4. a device key: checked in microseconds, no lane, no lock-out (128 random bits cannot be
   guessed, and a lock-out would only let others shut the device out); a device of the
   database is read on an index at each request, so one added or revoked while the
   service runs counts from the next request on, on every instance;
5. a password (or an unknown name, which pays the same hash) on a device carrying a valid
   device cookie of that name (`DeviceCookies`, OWASP's "device cookies"): no lock-out of
   address or name applies (only that of the name's known devices, after as many wrong
   passwords with its cookies as a name's), and the check runs in the known devices' own
   `Lane`;
6. any other password: refused with 429 while its (address, name) or its address is locked
   out, else checked in the one password `Lane`.
   A lane runs one check at a time; a request finding it taken is answered 429 at once
   (Retry-After: 1), never held on a worker thread, so all password checks together hold
   at most two threads, one of them only for known devices, and the other threads stay
   free for device keys and verified credentials. A request carrying the same credentials
   as a check under way waits for that check's outcome instead (a shop's pool starting
   together needs one check), but only while no check failed within the failure window:
   under a flood of wrong passwords it is refused at once like the others.
A password sign-in that ran a check answers a fresh device cookie when the request carried
none of that name, or one older than a day; remembered credentials only renew a carried
cookie older than a day (a client that keeps no cookies is not answered one each time).

Only the last section knows HTTP: the `Authenticator` middleware turns `NotSignedIn` into
401 and `TryLater` into 429, then checks the role each resource declares. With `[shop]
enabled`, a request without an Authorization header to an operation the shop opens
(museum_vocabulary.open_in_shop) passes as `ANYONE`: credentials, when sent, are checked
as ever. A 401 to a script's request (a browser's `fetch`, or a request saying
`X-Requested-With`) carries no Basic challenge, so the browser shows no login box.
"""

import base64
import binascii
import collections
import concurrent.futures
import functools
import hashlib
import hmac
import ipaddress
import logging
import math
import os
import secrets
import threading
import time
import typing
from dataclasses import dataclass

import falcon

from museum_credentials import (
    DEVICE_NAME,
    User,
    check_password,
    is_key_digest,
    unknown_user_hash,
)
from museum_http import client_ip
from museum_vocabulary import (
    ADMIN_ROLE,
    ANYONE_ROLE,
    admitted_roles,
    needs_role,
    open_in_shop,
)

log = logging.getLogger("museum.auth")

# Whom a request without credentials acts as where the shop opens an operation: a name no
# credentials can carry (HTTP Basic ends a user name at its first colon), a role no user
# has (museum_vocabulary.ANYONE_ROLE).
ANYONE = User("shop:anyone", ANYONE_ROLE, "")


class NotSignedIn(Exception):
    """No valid credentials: answered 401 with the Basic challenge."""


class TryLater(Exception):
    """Refused for now; `seconds` until a retry may succeed."""

    def __init__(self, detail, seconds):
        super().__init__(detail)
        self.detail = detail
        self.seconds = max(1, math.ceil(seconds))


# ============================================================================================
# Accounts
# ============================================================================================

@dataclass(frozen=True)
class Account:
    """Whom a name signs in as. `fast`: checked in microseconds (a generated key), so it
    needs no turn and no lock-out. `lasting`: a verification holds for the process's life
    (the config's [users] change only with a restart); a stored device's does not, as it
    may be revoked at any moment."""

    user: User
    fast: bool
    lasting: bool


class Accounts:
    """Who may sign in: the interface every kind of account implements."""

    def find(self, name):
        """The Account of `name`, or None when no account has that name."""
        raise NotImplementedError

    def check(self, account, password):
        """The account's User if `password` opens it, else None; `account` None (an unknown
        name) costs the same as a real password's check."""
        raise NotImplementedError

    def still(self, user):
        """Whether `user`, signed in before, is one of these accounts as it was (same
        role, same password hash): its verified credentials stay good across a reload."""
        raise NotImplementedError


class ConfiguredUsers(Accounts):
    """The [users] of the config, a password (scrypt) or a device key (fast digest) each,
    then the devices of the database (`museum add-device`), when a store is given. A name
    of [users] is never looked up in the database: its requests read nothing there."""

    def __init__(self, users, devices=None):
        self.users = users
        self.devices = devices
        # Unknown names pay one hash as costly as a real one, so their answer takes as long.
        self._unknown_user_hash = unknown_user_hash(
            [user.password_hash for user in users.values()])

    def find(self, name):
        user = self.users.get(name)
        if user is not None:
            return Account(user, fast=is_key_digest(user.password_hash), lasting=True)
        if self.devices is None or not DEVICE_NAME.fullmatch(name):
            return None
        # One read of an index per request, no cache: a revoked device is refused at once.
        device = self.devices.device(name)
        if device is None:
            return None
        return Account(User(name, device["role"], device["keyDigest"]),
                       fast=is_key_digest(device["keyDigest"]), lasting=False)

    def check(self, account, password):
        """One hash always (a dummy one for an unknown name)."""
        password_hash = account.user.password_hash if account else self._unknown_user_hash
        valid = check_password(password, password_hash)
        return account.user if valid and account else None

    def still(self, user):
        return self.users.get(user.name) == user


class AnyCredentials(Accounts):
    """The mock's accounts: any name and password sign in, as an admin of that name."""

    def find(self, name):
        return Account(User(name, ADMIN_ROLE, ""), fast=True, lasting=True)

    def check(self, account, password):
        return account.user

    def still(self, user):
        return True


# ============================================================================================
# Counting failures
# ============================================================================================

class FailureCounts:
    """Failures per key within `window` seconds; a key that reaches `limit` of them is
    locked for `lockout` seconds. Memory is bounded: expired entries are dropped at every
    count, and past `capacity` keys the oldest go first."""

    def __init__(self, limit, window, lockout, clock=time.monotonic, capacity=10_000):
        self.limit, self.window, self.lockout = limit, window, lockout
        self.clock = clock
        self.capacity = capacity
        # Both ordered oldest first: by latest failure, and by end of lock-out.
        self._failures = collections.OrderedDict()
        self._locked_until = collections.OrderedDict()
        self._lock = threading.Lock()

    def __len__(self):
        """Keys held in memory, counting or locked."""
        return len(self._failures) + len(self._locked_until)

    def locked_for(self, key):
        """Seconds `key` stays locked out (0: not locked)."""
        return max(0.0, self._locked_until.get(key, 0) - self.clock())

    def count(self, key):
        """Count one failure of `key`; True when this one locks it out."""
        now = self.clock()
        with self._lock:
            self._drop_expired(now)
            failures = self._failures.pop(key, collections.deque())
            failures.append(now)
            while failures[0] <= now - self.window:
                failures.popleft()
            locks = len(failures) >= self.limit
            if locks:
                self._locked_until.pop(key, None)
                self._locked_until[key] = now + self.lockout
            else:
                self._failures[key] = failures  # now the newest entry
            for entries in (self._failures, self._locked_until):
                while len(entries) > self.capacity:
                    entries.popitem(last=False)
            return locks

    def _drop_expired(self, now):
        while self._failures and \
                next(iter(self._failures.values()))[-1] <= now - self.window:
            self._failures.popitem(last=False)
        while self._locked_until and next(iter(self._locked_until.values())) <= now:
            self._locked_until.popitem(last=False)


@functools.lru_cache(maxsize=4096)
def client_key(address):
    """What lock-outs count for a client address: the IPv4 address, or the /64 network of
    an IPv6 one (one host commonly holds a whole /64 and can rotate through it)."""
    ip = client_ip(address)
    if ip is None:
        return str(address)
    if ip.version == 6 and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    if ip.version == 6:
        return str(ipaddress.ip_network((ip, 64), strict=False))
    return str(ip)


# ============================================================================================
# Lanes for password checks
# ============================================================================================

class Lane:
    """One password check at a time, taken at once or refused at once: a request never waits
    for a lane on a worker thread, so the checks of a lane hold at most one thread, and every
    other thread stays free for device keys and credentials verified before. A check costs a
    core and 128 MiB while it runs (scrypt at N=2^17): it runs in a thread of its own
    while the request whose check it is waits. A lane open to anyone runs its checks at a
    lower priority (`niceness`), so that under a flood the requests answered meanwhile
    take the processor first. The thread ends with its check: a lane keeps none idle, so
    an app that is dropped leaves no thread behind."""

    BUSY = "Another login's password is being checked; retry in a second."

    def __init__(self, niceness=0):
        self.niceness = niceness
        self._lock = threading.Lock()

    def run(self, check, *args):
        """`check(*args)` in the lane; TryLater (retry in a second) when it is taken."""
        if not self._lock.acquire(blocking=False):
            raise TryLater(self.BUSY, 1)
        try:
            answer = concurrent.futures.Future()

            def checking():
                self._run_gently()
                try:
                    answer.set_result(check(*args))
                except BaseException as error:  # handed to the waiting request as it is
                    answer.set_exception(error)

            threading.Thread(target=checking, name="password-check", daemon=True).start()
            return answer.result()
        finally:
            self._lock.release()

    def busy(self):
        return self._lock.locked()

    def _run_gently(self):
        """Lower the checking thread's priority (on Linux a nice value is per thread)."""
        if self.niceness:
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.niceness)
            except OSError:  # not allowed here: the checks run at the service's priority
                pass


# ============================================================================================
# Device cookies
# ============================================================================================

class DeviceCookies:
    """Signed device cookies (OWASP's authentication cheat sheet, "device cookies"): a
    device on which a name signed in with its password carries `NAME(HMAC(name, expiry))`,
    and its later logins of that name skip the lock-outs and check in a lane of their own.
    The key is derived from a secret every instance on one database shares, so each accepts
    the others' cookies. A cookie for another name, tampered with, or expired counts as none.
    The clock is the wall clock: a cookie outlives the process that issued it."""

    NAME = "museum_device"
    LIFETIME = 30 * 24 * 3600  # seconds: a month of a device not signing in afresh
    RENEWED_AFTER = 24 * 3600  # a password sign-in refreshes a cookie older than a day
    PATH = "/v1.1"

    def __init__(self, secret, clock=time.time):
        self._key = hmac.new(secret.encode(), b"museum device cookie", hashlib.sha256).digest()
        self.clock = clock

    def issue(self, name):
        """A fresh cookie value for `name`, good for LIFETIME seconds."""
        return self._signed(name, int(self.clock()) + self.LIFETIME)

    def expiry(self, values, name):
        """The latest expiry among `values` (the cookies a request carries) that are valid
        cookies of `name`; None when none is."""
        now = self.clock()
        valid = []
        for value in values:
            expires = self._expires(value)
            if expires is not None and expires > now and \
                    hmac.compare_digest(value, self._signed(name, expires)):
                valid.append(expires)
        return max(valid, default=None)

    def renewal(self, values, name):
        """A fresh cookie for `name` unless `values` hold one issued within RENEWED_AFTER."""
        expires = self.expiry(values, name)
        fresh = expires is not None and \
            expires - self.clock() > self.LIFETIME - self.RENEWED_AFTER
        return None if fresh else self.issue(name)

    def _signed(self, name, expires):
        encoded_name = base64.urlsafe_b64encode(name.encode("utf-8", "surrogatepass"))
        mac = hmac.new(self._key, f"{name}\0{expires}".encode("utf-8", "surrogatepass"),
                       hashlib.sha256).digest()
        # Colons, not dots: a value such as `4.1798301359.2` would read as a version number.
        return f"{encoded_name.decode().rstrip('=')}:{expires}:{_b64(mac)}"

    @staticmethod
    def _expires(value):
        _, expires, _ = (value.split(":") + ["", ""])[:3]
        return int(expires) if expires.isdigit() and len(expires) < 12 else None


def _b64(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


# ============================================================================================
# Signing in
# ============================================================================================

class SignIn(typing.NamedTuple):
    """Who a request signed in, and the device cookie value to answer it with (None: none
    is due)."""
    user: object
    cookie: str | None = None


class PendingCheck:
    """A password check under way, which requests carrying the same credentials may wait for
    rather than each needing the lane: its outcome, once `done` is set, is the User, None
    (wrong) or the TryLater that kept it from running."""

    def __init__(self):
        self.done = threading.Event()
        self.outcome = None


class Logins:
    """Who a request's credentials sign in, at the least cost (see the module's order).

    Verified and failed credentials are remembered as digests under a key of this process
    (never the password): verified ones of lasting accounts until the process ends or a
    reload changes or removes their user (`use_accounts`), never a stored device's (it may
    be revoked at any moment; its check costs one read and microseconds), failed ones for
    `failure_window` seconds. Password checks run in two lanes of one check each, the
    second only for requests carrying a device cookie of their name (`cookies`, a
    DeviceCookies; None: none). Failed password checks are logged, one line each: they
    come no faster than the lanes run them.
    """

    VERIFIED_LIMIT = 4096
    FAILED_LIMIT = 100_000  # a digest and a time each: some 20 MB when full
    JOIN_WAIT_LIMIT = 15  # seconds a request waits for the same credentials' check, at most

    def __init__(self, accounts, max_failures=10, max_address_failures=100, failure_window=60,
                 lockout=300, clock=time.monotonic, cookies=None):
        self.accounts = accounts
        self.clock = clock
        self.failure_window = failure_window
        self.per_name = FailureCounts(max_failures, failure_window, lockout, clock)
        self.per_address = FailureCounts(max_address_failures, failure_window, lockout, clock)
        # Wrong passwords sent with a valid device cookie, per name: only one who knows a
        # name's password can get its cookie, but any known password gets one of its own.
        self.per_known_device = FailureCounts(max_failures, failure_window, lockout, clock)
        self.cookies = cookies
        # Anyone's checks yield the processor; a known device's (few: its name's failures
        # lock its name's known devices out) go at the service's priority, so its owner is
        # not kept waiting behind a flood's answers.
        self.lane = Lane(niceness=10)
        self.cookie_lane = Lane()
        self._digest_key = secrets.token_bytes(32)
        self._verified = collections.OrderedDict()  # digest -> User, oldest first
        self._failed = collections.OrderedDict()  # digest -> when it is forgotten, oldest first
        self._pending = {}  # digest -> the PendingCheck of those credentials
        self._last_failed_check = -math.inf  # when a check last found a password wrong
        self._lock = threading.Lock()

    def sign_in(self, address, header, cookies=()):
        """Who the Authorization `header` signs in, for a client at `address` whose request
        carries the device cookie values `cookies`, as a SignIn; NotSignedIn or TryLater
        otherwise."""
        credentials = basic_credentials(header)
        if credentials is None:
            raise NotSignedIn()
        name, password = credentials
        digest = hashlib.blake2b(f"{name}\0{password}".encode("utf-8", "surrogatepass"),
                                 key=self._digest_key).digest()
        known = self._recalled(digest)
        if known is not None:
            # No check ran: a client that keeps no cookies (curl, a shop's backend) is not
            # answered a new one each time, only one that carries a cookie due for renewal.
            user = signed_in(known)
            return SignIn(user, self._renewal(user, cookies) if cookies else None)
        accounts = self.accounts  # one set of accounts for the whole check, reload or not
        account = accounts.find(name)
        if account is not None and account.fast:  # a key: never locked out, no cookie
            user = accounts.check(account, password)
            return SignIn(signed_in(self._remember(digest, user, account.lasting, accounts)))
        client = client_key(address)
        known_device = self._known_device(cookies, name)
        if not known_device:
            self._refuse_if_locked(client, name)
        pending, joined = self._pending_check(digest)
        if not joined:
            lane = self.cookie_lane if known_device else self.lane
            self._settle(pending, lane, digest, client, name, password, accounts, account,
                         known_device)
        user = self._outcome_of(pending)
        return SignIn(user, self._renewal(user, cookies))

    def _settle(self, pending, lane, digest, *check):
        """Run the password check `pending` stands for (`_check`'s arguments) in `lane`."""
        try:
            pending.outcome = lane.run(self._check, digest, *check)
        except TryLater as later:
            pending.outcome = later
        finally:
            pending.done.set()
            with self._lock:
                del self._pending[digest]

    def _renewal(self, user, cookies):
        """A new device cookie value for `user`, signed in with its password by a request
        carrying `cookies`, or None: none is due (see DeviceCookies.renewal), or there are
        no device cookies."""
        if self.cookies is None or is_key_digest(user.password_hash):
            return None
        return self.cookies.renewal(cookies, user.name)

    def _known_device(self, cookies, name):
        """Whether `cookies` hold a valid device cookie of `name`, and the known devices of
        `name` are not locked out (OWASP: device cookies that keep failing are locked out
        like an untrusted client). So one who knows some password, and so holds a cookie
        of that name, keeps the known devices' lane busy for `max_failures` checks at most
        per `lockout`, and only a name's own cookies can lock out its known devices."""
        return (self.cookies is not None and self.cookies.expiry(cookies, name) is not None
                and not self.per_known_device.locked_for(name))

    def _pending_check(self, digest):
        """The check under way of these credentials and True, or a new one this request
        runs and False."""
        with self._lock:
            pending = self._pending.get(digest)
            if pending is not None:
                return pending, True
            pending = self._pending[digest] = PendingCheck()
            return pending, False

    def _outcome_of(self, pending):
        """The User of a finished check; NotSignedIn or its TryLater otherwise. A request
        that joined a check under way waits for it only while no check failed within the
        failure window: then the same credentials at once are a shop's pool or the staff
        starting, and wait about one check; under a flood of wrong passwords (the same
        guess from many addresses) they are refused at once, so the waiting never holds
        threads beside the lanes'."""
        if not pending.done.is_set():
            if self.clock() - self._last_failed_check < self.failure_window:
                raise TryLater(Lane.BUSY, 1)
            if not pending.done.wait(timeout=self.JOIN_WAIT_LIMIT):
                raise TryLater(Lane.BUSY, 1)
        if isinstance(pending.outcome, TryLater):  # raised afresh in each waiting thread
            raise TryLater(pending.outcome.detail, pending.outcome.seconds)
        return signed_in(pending.outcome)

    def _check(self, digest, client, name, password, accounts, account, known_device):
        """The User of a password check, or None (wrong, counted and remembered)."""
        # Another request may have settled these very credentials since this one looked.
        known = self._recalled(digest)
        if known is not None:
            return known or None
        user = accounts.check(account, password)
        if user is None:
            self._last_failed_check = self.clock()
            self.per_name.count((client, name))
            self.per_address.count(client)
            if known_device:
                self.per_known_device.count(name)
            # Only a configured name is logged: an unknown one may be a password typed in
            # the wrong field. The address is escaped: it may come from a proxy's header.
            log.info("wrong password for %s from %s",
                     name if account is not None else "an unknown name",
                     client.encode("unicode_escape").decode("ascii"))
        return self._remember(digest, user, account is None or account.lasting, accounts)

    def _recalled(self, digest):
        """The User of verified credentials, False if they failed within the window, None
        if neither is remembered."""
        user = self._verified.get(digest)
        if user is not None:
            return user
        forgotten_at = self._failed.get(digest)
        if forgotten_at is not None and forgotten_at > self.clock():
            return False
        return None

    def use_accounts(self, accounts):
        """Sign in against `accounts` from now on (a reload's [users]). The credentials
        verified for a user whose entry is unchanged stay verified; those of a user changed
        or removed, and every failed one (it may be right now), are forgotten."""
        with self._lock:
            self.accounts = accounts
            self._verified = collections.OrderedDict(
                (digest, user) for digest, user in self._verified.items()
                if accounts.still(user))
            self._failed.clear()

    def _remember(self, digest, user, lasting, accounts):
        """Remember a check's outcome, made against `accounts`: a failure (`user` None) for
        the failure window, a verification for the process's life if the account is
        `lasting`. Return the user it signs in: a lasting account's check that a reload
        overtook is not remembered, and signs in only a user the reload kept as it was."""
        with self._lock:
            if accounts is not self.accounts and lasting:
                return user if user and self.accounts.still(user) else None
            if user is None:
                now = self.clock()
                while self._failed and next(iter(self._failed.values())) <= now:
                    self._failed.popitem(last=False)
                self._failed.pop(digest, None)
                self._failed[digest] = now + self.failure_window
                if len(self._failed) > self.FAILED_LIMIT:
                    self._failed.popitem(last=False)
            elif lasting:
                self._verified[digest] = user
                if len(self._verified) > self.VERIFIED_LIMIT:
                    self._verified.popitem(last=False)
        return user

    def _refuse_if_locked(self, client, name):
        remaining = max(self.per_name.locked_for((client, name)),
                        self.per_address.locked_for(client))
        if remaining > 0:
            raise TryLater("Too many failed logins; wait and retry.", remaining)


def signed_in(user):
    """`user`, or NotSignedIn when there is none (None or False)."""
    if not user:
        raise NotSignedIn()
    return user


def basic_credentials(header):
    """(name, password) from `Basic base64(name:password)`, or None if malformed."""
    scheme, _, encoded = (header or "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):  # ValueError: not ASCII
        return None
    name, colon, password = decoded.partition(":")
    return (name, password) if colon else None


# ============================================================================================
# The middleware: signing in and roles over HTTP
# ============================================================================================

class Authenticator:
    """HTTP Basic sign-in (`Logins`), then the role the resource declares for the method.
    Deny by default: a resource that needs credentials declares `needed_roles` for every
    method it serves, HEAD taking GET's; a method it does not declare is answered 405. The
    app's error serializer writes these errors as problem+json. `shop_open` ([shop]
    enabled): the operations the shop opens need no credentials; `req.context.user` is
    `ANYONE` for a request that sent none."""

    CHALLENGE = 'Basic realm="museum", charset="UTF-8"'

    def __init__(self, logins, shop_open=False):
        self.logins = logins
        self.shop_open = shop_open

    def process_resource(self, req, resp, resource, params):
        if resource is None or not getattr(resource, "auth_required", True):
            return
        header = req.get_header("Authorization")
        if header is None and self.shop_open and open_in_shop(resource, req.method):
            req.context.user = ANYONE
            return
        cookies = req.get_cookie_values(DeviceCookies.NAME) or ()
        try:
            signed = self.logins.sign_in(req.remote_addr, header, cookies)
        except NotSignedIn:
            # A challenge makes a browser show its login box, over the page of a script
            # that asked (and a fetch waits on it): a script signs in by its own means.
            challenges = None if from_script(req) else [self.CHALLENGE]
            raise falcon.HTTPUnauthorized(description="Valid credentials are required.",
                                          challenges=challenges) from None
        except TryLater as later:
            raise falcon.HTTPTooManyRequests(description=later.detail,
                                             retry_after=later.seconds) from None
        user, renewed = signed
        if renewed is not None:
            # Secure when the request came over TLS, which behind the trusted proxy its
            # X-Forwarded-Proto says: `museum serve` has no TLS of its own, and a Secure
            # cookie would not come back over a loopback development run's plain HTTP.
            resp.set_cookie(DeviceCookies.NAME, renewed, max_age=DeviceCookies.LIFETIME,
                            path=DeviceCookies.PATH, secure=req.scheme == "https",
                            http_only=True, same_site="Strict")
        admitted = admitted_roles(resource, req.method)
        if not admitted:
            declared = getattr(resource, "needed_roles", {})
            allowed = [*declared, "HEAD"] if "GET" in declared else list(declared)
            raise falcon.HTTPMethodNotAllowed(allowed)
        if user.role not in admitted:
            raise falcon.HTTPForbidden(description=needs_role(admitted[0]))
        req.context.user = user

    def take_users(self, config):
        """Sign in against `config`'s [users] from now on, beside the same stored devices
        (a reload; see Logins.use_accounts). [shop] needs a restart, as museum_config says."""
        self.logins.use_accounts(ConfiguredUsers(config.users, self.logins.accounts.devices))


def from_script(req):
    """Whether `req` comes from a page's script rather than a person at the browser: a
    `fetch` or XMLHttpRequest (`Sec-Fetch-Mode: cors`, which browsers send for them on any
    origin, or `same-origin`), or a request saying so with `X-Requested-With`, as
    libraries do."""
    return req.get_header("Sec-Fetch-Mode", default="").lower() in ("cors", "same-origin") \
        or req.get_header("X-Requested-With") is not None


def authenticator_for(config, accounts=None, store=None, cookie_secret=None):
    """The Authenticator of `config`'s [auth] settings, over its [users] and the devices of
    `store`, unless other `accounts` are given (the mock's). Device cookies are signed with
    a key derived from `cookie_secret`: the app hands over the QR secret, which every
    instance on the database shares; without it (the mock), the config's or a random one."""
    auth = config["auth"]
    secret = cookie_secret or config["tickets"]["qr_secret"] or secrets.token_hex(32)
    return Authenticator(Logins(
        accounts or ConfiguredUsers(config.users, store),
        max_failures=auth["max_failures"], max_address_failures=auth["max_address_failures"],
        failure_window=auth["failure_window"], lockout=auth["lockout"],
        cookies=DeviceCookies(secret)), shop_open=config["shop"]["enabled"])
