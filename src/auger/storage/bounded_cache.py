"""A cache with a name, a size and an owner: what auger keeps between statements.

Planning keeps what it learned from files so that the next statement over the same files reads
none of them again: discovered schemas, each file's own schema, Parquet footers. Each such
cache is one :class:`BoundedCache` held by the module that fills it (its owner, which says in
its docstring what a key means and why the size), bounded by entries or by a weight such as
bytes, the least recently used entries going first, and safe to share between threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["BoundedCache"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class BoundedCache(Generic[K, V]):
    """A least-recently-used map of at most ``size`` entries, or, with ``weight``, of entries
    whose weights add up to at most ``size``.

    Args:
        name: what it keeps, for messages and tests.
        size: the most entries (or the most total weight) it holds.
        weight: an entry's weight (e.g. ``len`` of bytes); None counts entries.
    """

    def __init__(self, name: str, size: int, weight: Callable[[V], int] | None = None) -> None:
        if size <= 0:
            raise ValueError(f"cache {name} needs a positive size, not {size}")
        self.name = name
        self.size = size
        self._weight = weight
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._total = 0
        self._lock = threading.Lock()

    def _weigh(self, value: V) -> int:
        return 1 if self._weight is None else self._weight(value)

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` (now the most recently used), or None."""
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._entries

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` for ``key``; the least recently used entries go past the size (an
        entry heavier than the whole size is not kept)."""
        weight = self._weigh(value)
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._total -= self._weigh(old)
            if weight > self.size:
                return
            self._entries[key] = value
            self._total += weight
            while self._total > self.size and self._entries:
                _, dropped = self._entries.popitem(last=False)
                self._total -= self._weigh(dropped)

    def discard(self, key: K) -> None:
        """Forget the entry of ``key``, if any."""
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._total -= self._weigh(old)

    def setdefault(self, key: K, value: V) -> V:
        """The value kept for ``key``, keeping ``value`` first when there is none."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
        self.put(key, value)
        return value

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._entries.clear()
            self._total = 0

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def total(self) -> int:
        """The entries' total weight (their number, without a weight)."""
        with self._lock:
            return self._total
