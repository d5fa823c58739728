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
4. a device key: checked in microseconds, no slot, no lock-out (128 random bits cannot be
   guessed, and a lock-out would only let others shut the device out); a device of the
   database is read on an index at each request, so one added or revoked while the
   service runs counts from the next request on, on every instance;
5. a password (or an unknown name, which pays the same hash): refused with 429 while its
   (address, name) or its address is locked out, else checked in turn (`CheckQueue`);
   requests carrying the same credentials meanwhile wait for that one check's outcome.

Only the last section knows HTTP: the `Authenticator` middleware turns `NotSignedIn` into
401 and `TryLater` into 429, then checks the role each resource declares.
"""

import base64
import binascii
import collections
import functools
import hashlib
import ipaddress
import logging
import math
import secrets
import threading
import time
from dataclasses import dataclass

import falcon

from museum_http import client_ip
from museum_credentials import (
    DEVICE_NAME,
    User,
    check_password,
    is_key_digest,
    unknown_user_hash,
)
from museum_vocabulary import ADMIN_ROLE, admitted_roles, needs_role

log = logging.getLogger("museum.auth")


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
# Taking turns for password checks
# ============================================================================================

class CheckQueue:
    """Turns for slow password checks: `slots` at once, and one at a time per queue (one
    queue per known name, one shared by every unknown name), the waiting served
    round-robin over queues. Each queue holds at most `per_queue` requests waiting or
    checking; one that finds its queue full is refused at once rather than held.

    A flood on one name, or of made-up names, thus holds at most `per_queue` worker
    threads and one slot, and another name's check starts in the other slot at once (or
    after one check per queue ahead of it when several names are flooded). A slot costs a
    core and 128 MiB while it checks (scrypt at N=2^17). `wait_limit` bounds any wait."""

    def __init__(self, slots=2, per_queue=2, wait_limit=15.0):
        self.slots, self.per_queue, self.wait_limit = slots, per_queue, wait_limit
        self._changed = threading.Condition()
        self._running = 0
        self._checking = set()  # queues with a check under way
        self._held = collections.Counter()  # queue -> its requests waiting or checking
        self._waiting = {}  # queue -> deque of its waiting turns, oldest first
        self._rotation = collections.deque()  # queues with a turn waiting, next served first

    def take(self, queue):
        """Wait for a turn in `queue` (TryLater if it is full or the wait too long); the
        caller gives it back with `give_back(queue)`."""
        with self._changed:
            if self._held[queue] >= self.per_queue:
                raise TryLater("Too many logins for this name at once; retry shortly.", 1)
            self._held[queue] += 1
            turn = {"granted": False}
            if queue not in self._waiting:
                self._waiting[queue] = collections.deque()
                self._rotation.append(queue)
            self._waiting[queue].append(turn)
            self._grant()
            if not self._changed.wait_for(lambda: turn["granted"], timeout=self.wait_limit):
                self._withdraw(queue, turn)
                raise TryLater("Too many logins at once; retry shortly.", 1)

    def held(self, queue):
        """How many requests of `queue` wait or check."""
        with self._changed:
            return self._held[queue]

    def give_back(self, queue):
        with self._changed:
            self._running -= 1
            self._checking.discard(queue)
            self._release(queue)
            self._grant()

    def _grant(self):
        for queue in list(self._rotation):
            if self._running >= self.slots:
                break
            if queue in self._checking:
                continue
            self._rotation.remove(queue)
            waiting = self._waiting[queue]
            waiting.popleft()["granted"] = True
            self._running += 1
            self._checking.add(queue)
            if waiting:
                self._rotation.append(queue)  # its next turn comes after every other queue's
            else:
                del self._waiting[queue]
        self._changed.notify_all()

    def _withdraw(self, queue, turn):
        waiting = self._waiting[queue]
        waiting.remove(turn)
        if not waiting:
            del self._waiting[queue]
            self._rotation.remove(queue)
        self._release(queue)

    def _release(self, queue):
        self._held[queue] -= 1
        if not self._held[queue]:
            del self._held[queue]


# ============================================================================================
# Signing in
# ============================================================================================

class PendingCheck:
    """A password check under way, which requests carrying the same credentials wait for
    rather than each taking a turn: its outcome, once `done` is set, is the User, None
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
    `failure_window` seconds. Requests with the same credentials as a password check under way wait for its
    outcome (at most the queue's `wait_limit`): one check answers them all. Failed password
    checks are logged, one line each: a check costs a slot, so the lines come no faster
    than checks do.
    """

    VERIFIED_LIMIT = 4096
    FAILED_LIMIT = 100_000  # a digest and a time each: some 20 MB when full

    def __init__(self, accounts, max_failures=10, max_address_failures=100, failure_window=60,
                 lockout=300, clock=time.monotonic, checks=None):
        self.accounts = accounts
        self.clock = clock
        self.failure_window = failure_window
        self.per_name = FailureCounts(max_failures, failure_window, lockout, clock)
        self.per_address = FailureCounts(max_address_failures, failure_window, lockout, clock)
        self.checks = checks or CheckQueue()
        self._digest_key = secrets.token_bytes(32)
        self._verified = collections.OrderedDict()  # digest -> User, oldest first
        self._failed = collections.OrderedDict()  # digest -> when it is forgotten, oldest first
        self._pending = {}  # digest -> the PendingCheck of those credentials
        self._lock = threading.Lock()

    def sign_in(self, address, header):
        """The User the Authorization `header` names, for a client at `address`; NotSignedIn
        or TryLater otherwise."""
        credentials = basic_credentials(header)
        if credentials is None:
            raise NotSignedIn()
        name, password = credentials
        digest = hashlib.blake2b(f"{name}\0{password}".encode("utf-8", "surrogatepass"),
                                 key=self._digest_key).digest()
        known = self._recalled(digest)
        if known is not None:
            return signed_in(known)
        accounts = self.accounts  # one set of accounts for the whole check, reload or not
        account = accounts.find(name)
        if account is not None and account.fast:
            user = accounts.check(account, password)
            return signed_in(self._remember(digest, user, account.lasting, accounts))
        client = client_key(address)
        self._refuse_if_locked(client, name)
        pending, joined = self._pending_check(digest)
        if not joined:
            try:
                pending.outcome = self._check_in_turn(client, name, password, digest,
                                                      accounts, account)
            except TryLater as later:
                pending.outcome = later
            finally:
                pending.done.set()
                with self._lock:
                    del self._pending[digest]
        return self._outcome_of(pending)

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
        """The User of a finished check; NotSignedIn or its TryLater otherwise, and TryLater
        when it does not finish within the queue's wait limit."""
        if not pending.done.wait(timeout=self.checks.wait_limit):
            raise TryLater("Too many logins at once; retry shortly.", 1)
        if isinstance(pending.outcome, TryLater):  # raised afresh in each waiting thread
            raise TryLater(pending.outcome.detail, pending.outcome.seconds)
        return signed_in(pending.outcome)

    def _check_in_turn(self, client, name, password, digest, accounts, account):
        """The User of a password check run in its queue's turn, or None (wrong, counted
        and remembered); TryLater when no turn comes."""
        queue = name if account is not None else None
        self.checks.take(queue)
        try:
            # Another request may have settled these very credentials while this one waited.
            known = self._recalled(digest)
            if known is not None:
                return known or None
            user = accounts.check(account, password)
            if user is None:
                self.per_name.count((client, name))
                self.per_address.count(client)
                # Only a configured name is logged: an unknown one may be a password
                # typed in the wrong field. The address is escaped: it may come from a
                # proxy's header.
                log.info("wrong password for %s from %s",
                         name if queue is not None else "an unknown name",
                         client.encode("unicode_escape").decode("ascii"))
            # Remembered before the turn is given back: the next in this queue may be a repeat.
            return self._remember(digest, user, account is None or account.lasting, accounts)
        finally:
            self.checks.give_back(queue)

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
    app's error serializer writes these errors as problem+json."""

    CHALLENGE = 'Basic realm="museum", charset="UTF-8"'

    def __init__(self, logins):
        self.logins = logins

    def process_resource(self, req, resp, resource, params):
        if resource is None or not getattr(resource, "auth_required", True):
            return
        try:
            user = self.logins.sign_in(req.remote_addr, req.get_header("Authorization"))
        except NotSignedIn:
            raise falcon.HTTPUnauthorized(description="Valid credentials are required.",
                                          challenges=[self.CHALLENGE]) from None
        except TryLater as later:
            raise falcon.HTTPTooManyRequests(description=later.detail,
                                             retry_after=later.seconds) from None
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
        (a reload; see Logins.use_accounts)."""
        self.logins.use_accounts(ConfiguredUsers(config.users, self.logins.accounts.devices))


def authenticator_for(config, accounts=None, store=None):
    """The Authenticator of `config`'s [auth] settings, over its [users] and the devices of
    `store`, unless other `accounts` are given (the mock's)."""
    auth = config["auth"]
    return Authenticator(Logins(
        accounts or ConfiguredUsers(config.users, store),
        max_failures=auth["max_failures"], max_address_failures=auth["max_address_failures"],
        failure_window=auth["failure_window"], lockout=auth["lockout"]))
