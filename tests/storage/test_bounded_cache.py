"""The caches planning keeps between statements: bounded, least recently used first out."""

from __future__ import annotations

import pytest

from auger.storage.bounded_cache import BoundedCache
from auger.storage.parquet_footers import (
    KEPT,
    KEPT_BYTES,
    clear_footer_bytes,
    keep_footer_bytes,
    kept_footer_bytes,
)


def test_entries_past_the_size_go_least_recently_used_first() -> None:
    cache: BoundedCache[str, int] = BoundedCache("numbers", 2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # now b is the least recently used
    cache.put("c", 3)
    assert "b" not in cache and cache.get("a") == 1 and cache.get("c") == 3
    assert len(cache) == 2 and cache.total == 2


def test_a_weighed_cache_holds_at_most_its_size_in_weight() -> None:
    cache: BoundedCache[str, bytes] = BoundedCache("bytes", 10, len)
    cache.put("a", b"12345")
    cache.put("b", b"1234")
    cache.put("c", b"123")  # 12 > 10: a goes
    assert "a" not in cache and cache.total == 7
    cache.put("b", b"1")  # replacing an entry replaces its weight
    assert cache.total == 4
    cache.put("huge", b"x" * 11)  # heavier than the whole cache: not kept, nothing evicted
    assert "huge" not in cache and len(cache) == 2
    cache.discard("b")
    assert cache.total == 3 and cache.setdefault("c", b"other") == b"123"
    cache.clear()
    assert len(cache) == 0 and cache.total == 0


def test_a_cache_needs_a_size() -> None:
    with pytest.raises(ValueError, match="positive size"):
        BoundedCache("nothing", 0)


def test_kept_footer_bytes_are_bounded_and_a_large_footer_replaces_none() -> None:
    clear_footer_bytes()
    keep_footer_bytes("/f.parquet", 1.0, 10, b"PAR1small")
    assert kept_footer_bytes("/f.parquet", 1.0, 10) == b"PAR1small"
    assert kept_footer_bytes("/f.parquet", 2.0, 10) is None  # rewritten since: another key
    keep_footer_bytes("/f.parquet", 1.0, 10, b"x" * (KEPT_BYTES // 64 + 1))
    assert kept_footer_bytes("/f.parquet", 1.0, 10) is None  # too large: the old one is gone
    assert KEPT.size == KEPT_BYTES and KEPT.total == 0
