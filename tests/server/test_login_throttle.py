"""The failed-login waits, on an injected clock: free tries, growth, the cap, no lockout."""

from __future__ import annotations

from auger.server.throttle import FORGET_AFTER, FREE_FAILURES, LoginThrottle


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def fail(throttle: LoginThrottle, keys: tuple[str, ...]) -> int:
    """One wrong password under ``keys``; the wait it was refused with, or 0 if it was checked."""
    wait = throttle.admit(keys)
    if not wait:
        throttle.failed(keys)
    return wait


def test_waits_start_after_the_free_failures_and_double_up_to_the_cap() -> None:
    clock = Clock()
    throttle = LoginThrottle(1.0, 8.0, clock)
    keys = LoginThrottle.keys("alice", None)
    for _ in range(FREE_FAILURES["user"]):
        assert fail(throttle, keys) == 0
    waits = []
    for _ in range(6):
        assert fail(throttle, keys) == 0  # the wait before it has passed: checked
        waits.append(throttle.admit(keys))  # an immediate retry is refused
        clock.now += waits[-1]
    assert waits == [1, 2, 4, 8, 8, 8]


def test_a_refused_try_does_not_lengthen_the_wait() -> None:
    clock = Clock()
    throttle = LoginThrottle(2.0, 30.0, clock)
    keys = LoginThrottle.keys("bob", None)
    for _ in range(FREE_FAILURES["user"] + 1):
        fail(throttle, keys)
    assert [throttle.admit(keys) for _ in range(50)] == [2] * 50
    clock.now += 2.5
    assert throttle.admit(keys) == 0


def test_right_password_clears_and_other_users_are_not_held() -> None:
    clock = Clock()
    throttle = LoginThrottle(1.0, 30.0, clock)
    alice = LoginThrottle.keys("alice", "10.0.0.1")
    for _ in range(FREE_FAILURES["user"] + 1):
        fail(throttle, alice)
    assert throttle.admit(alice) > 0
    # another user at another address is not held by alice's failures
    assert throttle.admit(LoginThrottle.keys("carol", "10.0.0.2")) == 0
    clock.now += 30
    assert throttle.admit(alice) == 0
    throttle.succeeded(alice)
    assert len(throttle) == 0


def test_an_address_trying_many_names_is_slowed() -> None:
    clock = Clock()
    throttle = LoginThrottle(1.0, 30.0, clock)
    for i in range(FREE_FAILURES["addr"]):
        assert fail(throttle, LoginThrottle.keys(f"user{i}", "10.0.0.9")) == 0
    assert fail(throttle, LoginThrottle.keys("fresh", "10.0.0.9")) == 0
    assert throttle.admit(LoginThrottle.keys("another", "10.0.0.9")) == 1
    # the same new name from another address is free to try
    assert throttle.admit(LoginThrottle.keys("another", "10.0.0.8")) == 0


def test_side_by_side_attempts_are_charged_before_their_check() -> None:
    clock = Clock()
    throttle = LoginThrottle(1.0, 30.0, clock)
    keys = LoginThrottle.keys("dave", None)
    fail(throttle, keys)  # a known failing key
    admitted = [throttle.admit(keys) for _ in range(20)]  # none has answered yet
    free = FREE_FAILURES["user"]
    assert admitted[:free] == [0] * free
    assert all(wait > 0 for wait in admitted[free:])  # the burst is cut off past the free tries


def test_failures_are_forgotten_and_zero_delay_turns_it_off() -> None:
    clock = Clock()
    throttle = LoginThrottle(1.0, 30.0, clock)
    keys = LoginThrottle.keys("erin", None)
    for _ in range(FREE_FAILURES["user"] + 3):
        clock.now += fail(throttle, keys) + throttle.admit(keys)
    clock.now += 30 + FORGET_AFTER + 1
    assert throttle.admit(keys) == 0 and len(throttle) == 0  # forgotten, this try not charged
    off = LoginThrottle(0.0, 0.0, clock)
    assert all(fail(off, keys) == 0 for _ in range(100))
