"""Answers about object-store paths kept for a short time: each question to a store is one or
more requests, so a listing (or what a listing tells, such as whether a directory is a
lakehouse table) asked again within ``auger.storage.listing_ttl_ms`` is answered from memory,
unless auger itself wrote or deleted something meanwhile. Local paths are always asked anew:
that costs a few system calls, and it is how a file rewritten in place is noticed."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from auger.storage import filesystem as fs

__all__ = ["KeptAnswers"]

T = TypeVar("T")


class KeptAnswers(Generic[T]):
    """The latest ``size`` answers of one question, by path: (when, write count then, answer)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._kept: OrderedDict[str, tuple[float, int, T]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, path: str, ttl: float, ask: Callable[[str], T]) -> T:
        """``ask(path)``, or its kept answer when ``path`` is an object's, younger than ``ttl``
        seconds and no write of auger's came after it."""
        if ttl <= 0 or not fs.is_uri(path):
            return ask(path)
        writes = fs.write_count()
        with self._lock:
            hit = self._kept.get(path)
            if hit is not None and time.monotonic() - hit[0] < ttl and hit[1] == writes:
                self._kept.move_to_end(path)
                return hit[2]
        answer = ask(path)
        with self._lock:
            self._kept[path] = (time.monotonic(), writes, answer)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return answer

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
