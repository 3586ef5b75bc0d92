"""An engine shuts down without waiting for a Spark that is still starting.

A server stopped in the seconds its Spark takes to start (``auger stop`` right after the first
``auger sql`` started the background server) waited for the JVM to come up before it closed its
sessions: the stop took the whole start-up. The process ends right after the shutdown, and the
JVM that pyspark launched ends with it.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

import auger.engine as engine_module
from auger.engine import Engine


def test_shutdown_does_not_wait_for_spark_to_start(monkeypatch: pytest.MonkeyPatch) -> None:
    starting, release = threading.Event(), threading.Event()

    def slow_start(master: str, conf: Any) -> str:
        starting.set()
        release.wait(60)
        return "a spark"

    monkeypatch.setattr(engine_module, "get_spark", slow_start)
    monkeypatch.setattr(engine_module, "spark_is_running", lambda: True)  # no warm-up
    engine = Engine({})
    session = engine.open_session()
    start = threading.Thread(target=lambda: engine.spark, daemon=True)
    start.start()
    try:
        assert starting.wait(30)
        done = threading.Thread(target=engine.shutdown, daemon=True)
        done.start()
        done.join(30)
        assert not done.is_alive(), "the shutdown waited for Spark's start"
        assert engine.closed and session.closed
        assert engine.sessions() == []
        with pytest.raises(Exception, match="has been shut down"):
            engine.open_session()
    finally:
        release.set()
        start.join(30)
