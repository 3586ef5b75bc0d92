"""The DataFrames of recent small whole-file reads, kept for the next statement over the same
files (see :mod:`auger.spark.local_scan`).

Each :class:`~auger.engine.Engine` owns one :class:`KeptFrames` and empties it when it shuts
down; statements reach it through their context (``StatementContext.kept_frames``). Two
engines of one process never see each other's frames. Nothing here loads pyarrow or pyspark:
the engine makes one when it starts.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from auger.spark.scan_report import TaskFacts

__all__ = ["KEPT_FRAME_BYTES", "KeptFrames"]

#: The most Arrow bytes of whole-file reads whose frames one engine keeps, in all.
KEPT_FRAME_BYTES = 32 * 1024 * 1024


@dataclass
class _Kept:
    frame: Any
    facts: TaskFacts
    nbytes: int


class KeptFrames:
    """The DataFrames of recent small whole-file reads, by spec, least recently used dropped
    first past ``most_bytes`` (:data:`KEPT_FRAME_BYTES`).

    Tied to one SparkSession (the JVM holds the rows of each kept frame): a frame asked for
    under another session empties it. A changed file has another spec (its size or modification
    time), so its old frame is never found again and ages out.
    """

    def __init__(self, most_bytes: int = KEPT_FRAME_BYTES) -> None:
        self.most_bytes = most_bytes
        self._owner: Any = None
        self._entries: OrderedDict[str, _Kept] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, spark: Any, key: str) -> tuple[Any, TaskFacts] | None:
        """The frame and read facts kept for ``key`` under ``spark``, or None."""
        with self._lock:
            if spark is not self._owner:
                return None
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry.frame, entry.facts

    def put(self, spark: Any, key: str, frame: Any, facts: TaskFacts, nbytes: int) -> None:
        """Keep ``frame`` (built from ``nbytes`` of Arrow data) under ``key``."""
        if nbytes > self.most_bytes:
            return
        with self._lock:
            if spark is not self._owner:
                self._entries.clear()
                self._bytes = 0
                self._owner = spark
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._entries[key] = _Kept(frame, facts, nbytes)
            self._bytes += nbytes
            while self._bytes > self.most_bytes:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= dropped.nbytes

    def clear(self) -> None:
        """Forget every kept frame (the engine that owns them shuts down)."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0
            self._owner = None

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        """The Arrow bytes the kept frames were built from."""
        return self._bytes
