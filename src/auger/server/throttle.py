"""Failed logins slow down: a short, growing wait per user name and per client address.

Each failed password check (form login or HTTP Basic) counts against the user name it tried
and the address it came from. A few failures are free (:data:`FREE_FAILURES`: a typo, a
script's retry, several people behind one address); each one past them starts a wait,
``login_delay`` seconds after the first, doubling with each further one up to
``login_delay_max``. A login attempt during a wait is
refused at once (HTTP 429 with ``Retry-After``) without its password being checked, so
guessing runs at one try per wait, however many connections an attacker opens. A success
clears both keys; failures are forgotten :data:`FORGET_AFTER` seconds after the last wait ends.

There is no lockout: the longest an attacker can make a real user wait for the next try is
``login_delay_max``, after which the right password works again.

The clock is injectable, so the rules are tested without sleeping.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["LoginThrottle"]

#: Failures counted before waits begin, per kind of key: a user name; a client address, which
#: several people may share (a proxy, an office).
FREE_FAILURES = {"user": 5, "addr": 20}

#: Quiet seconds after which a key's failures are forgotten.
FORGET_AFTER = 900.0

#: Keys held before forgotten ones are swept out (they are otherwise dropped when next asked).
_SWEEP_AT = 10_000


@dataclass
class _Failures:
    count: int
    until: float  # when the current wait ends (the clock's time)


class LoginThrottle:
    """Failed-login waits per key; thread-safe.

    Args:
        delay: seconds of the wait after a first failure (0 turns throttling off).
        max_delay: the longest wait; each further failure doubles it up to this.
        clock: the monotonic clock to use (tests pass their own).
    """

    def __init__(
        self, delay: float, max_delay: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.delay = delay
        self.max_delay = max(max_delay, delay)
        self._clock = clock
        self._keys: dict[str, _Failures] = {}
        self._lock = threading.Lock()

    @staticmethod
    def keys(user: str, address: str | None) -> tuple[str, ...]:
        """The keys one attempt counts against: the user name tried and the client address."""
        found = [f"user\0{user}"]
        if address:
            found.append(f"addr\0{address}")
        return tuple(found)

    def admit(self, keys: tuple[str, ...]) -> int:
        """Let an attempt under ``keys`` be checked (0), or the whole seconds it must wait.

        Under a key that has failed before, an admitted attempt counts as a failure at once,
        before its password is checked, and :meth:`succeeded` takes that back: so attempts
        sent side by side cannot all slip through the moment a wait ends. Keys without
        failures are not charged ahead (a user's many parallel requests are no attack); their
        first failure is counted by :meth:`failed`.
        """
        if self.delay <= 0:
            return 0
        now = self._clock()
        with self._lock:
            if len(self._keys) > _SWEEP_AT:  # many names or addresses tried: drop the quiet
                for key in list(self._keys):
                    self._left(key, now)
            left = max((self._left(k, now) for k in keys), default=0.0)
            if left > 0:
                return math.ceil(left)
            for key in keys:
                if key in self._keys:
                    self._charge(key, now)
            return 0

    def failed(self, keys: tuple[str, ...]) -> None:
        """A wrong password: count it under the keys :meth:`admit` did not charge already."""
        if self.delay <= 0:
            return
        now = self._clock()
        with self._lock:
            for key in keys:
                if key not in self._keys:
                    self._charge(key, now)

    def _charge(self, key: str, now: float) -> None:
        found = self._keys.get(key)
        count = 1 if found is None else found.count + 1
        past = count - FREE_FAILURES[key.partition("\0")[0]]
        wait = min(self.delay * 2 ** min(past - 1, 32), self.max_delay) if past > 0 else 0.0
        self._keys[key] = _Failures(count, now + wait)

    def _left(self, key: str, now: float) -> float:
        """Seconds the key still waits (forgetting it when it has been quiet long enough)."""
        found = self._keys.get(key)
        if found is None:
            return 0.0
        if now > found.until + FORGET_AFTER:
            del self._keys[key]
            return 0.0
        return found.until - now

    def succeeded(self, keys: tuple[str, ...]) -> None:
        """A right password: the keys start afresh (the attempt's charge included)."""
        with self._lock:
            for key in keys:
                self._keys.pop(key, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._keys)
