"""Shared fixtures. Spark tests share one session-scoped SparkSession (``local[2]``, UI off):
one per test process (``make test`` runs two workers, ``pytest -n 2``, each its own).

Any test that uses ``spark``, ``engine``, ``conn`` or ``session`` is marked ``spark``
automatically, so ``pytest -m "not spark"`` runs the suite that needs no Java.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run: the suite runs once for a submission, so
# a failure must be one that every run shows, found before it lands. AUGER_HYPOTHESIS=explore
# draws new examples each run (to hunt for failures locally).
settings.register_profile("fixed", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("AUGER_HYPOTHESIS", "fixed"))

SPARK_FIXTURES = {"spark", "engine", "conn", "session", "make_conn"}

# Every JVM the tests start through spark-submit (this process's Spark, `auger serve`, the
# background server, Spark Connect, the interpreters of the doc tests) compiles with the quick
# JIT compiler only: the tests' queries are small and short, and the optimizing compiler's work
# was about half of a JVM's CPU time over a few of them, which two shared cores pay for.
# A value set by whoever runs the tests is kept.
os.environ.setdefault("SPARK_SUBMIT_OPTS", "-XX:TieredStopAtLevel=1")


def _start_spark() -> Any:
    from auger.spark.bootstrap import get_spark

    return get_spark("local[2]", {"spark.ui.enabled": "false"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if SPARK_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.spark)


def pytest_collection_finish(session: pytest.Session) -> None:
    """The shared SparkSession starts on a thread once the tests to run are known, if one of
    them needs Java: its JVM's seconds then overlap the tests before the first that uses it
    instead of delaying that one. The ``spark`` fixture finds the running session (or, if the
    start failed, starts it again and fails there, in the test that needs it)."""
    if session.config.option.collectonly:
        return
    if any(item.get_closest_marker("spark") for item in session.items):
        threading.Thread(target=_start_spark_quietly, name="test-spark-start", daemon=True).start()


def _start_spark_quietly() -> None:
    with contextlib.suppress(Exception):
        _start_spark()


@pytest.fixture(scope="session")
def spark() -> Any:
    return _start_spark()


@pytest.fixture(scope="session")
def tmp_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The directory behind ``dfs.tmp`` in the shared test engine."""
    return tmp_path_factory.mktemp("dfs_tmp")


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A writable directory for test data, reachable as workspace ``dfs.data``."""
    return tmp_path_factory.mktemp("data")


#: The raw-file cache is on by default (a local Spark), so the suite's scan and SQL tests run
#: with it; ``AUGER_TEST_CACHE=0`` runs them with it off in the shared engine, so that every
#: answer is also checked without cached files.
CACHE_OFF = os.environ.get("AUGER_TEST_CACHE", "").strip().lower() in ("0", "false", "no")


def test_config(tmp_workspace: Path, data_dir: Path) -> dict[str, Any]:
    forced = {"options": {"auger.cache.enabled": False}} if CACHE_OFF else {}
    return {
        **forced,
        "storage": {
            "dfs": {
                "type": "file",
                "workspaces": {
                    "tmp": {"location": str(tmp_workspace), "writable": True},
                    "data": {"location": str(data_dir), "writable": True},
                },
            }
        },
        "spark": {"master": "local[2]"},
    }


@pytest.fixture(scope="session")
def engine(spark: Any, tmp_workspace: Path, data_dir: Path) -> Iterator[Any]:
    from auger.engine import Engine

    eng = Engine(test_config(tmp_workspace, data_dir))
    yield eng
    eng.shutdown()


@pytest.fixture
def session(engine: Any) -> Iterator[Any]:
    s = engine.open_session("tester")
    yield s
    s.close()


@pytest.fixture
def make_conn(engine: Any) -> Iterator[Any]:
    """Factory of DB-API connections (each its own session) on the shared engine."""
    from auger.dbapi import Connection

    made: list[Any] = []

    def factory(user: str = "tester") -> Any:
        c = Connection(engine.open_session(user))
        made.append(c)
        return c

    yield factory
    for c in made:
        c.close()


@pytest.fixture
def conn(make_conn: Any) -> Any:
    return make_conn()


@pytest.fixture(autouse=True, scope="session")
def _quiet_env() -> None:
    os.environ.setdefault("PYSPARK_PYTHON", os.sys.executable)  # type: ignore[attr-defined]
    # no engine of the run (nor a server or CLI it starts) warms Spark up in the background,
    # where its jobs would run beside other tests' statements; tests/spark/test_warm_up.py
    # turns it back on where it is under test
    os.environ["AUGER_WARM_UP"] = "0"


@pytest.fixture(autouse=True, scope="session")
def _auger_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A state directory of the test run's own (``$AUGER_HOME``), never the user's.

    ``auger sql`` run as a subprocess starts the local background server of its configuration
    there; whatever servers the run left are stopped at its end.
    """
    saved = os.environ.get("AUGER_HOME")
    os.environ["AUGER_HOME"] = str(tmp_path_factory.mktemp("auger_home"))
    try:
        yield
    finally:
        import io

        from auger.cli.local import stop_all

        stop_all(io.StringIO())
        if saved is None:
            os.environ.pop("AUGER_HOME", None)
        else:
            os.environ["AUGER_HOME"] = saved


@pytest.fixture
def footer_reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The paths whose Parquet footer planning reads from the file or object (the footer and
    schema caches emptied before and after)."""
    from auger.formats import parquet as parquet_format
    from auger.spark.discovery import clear_cache
    from auger.storage import filesystem as fs

    seen: list[str] = []
    real = fs.read_parquet_footer

    def counting(path: str, *args: object, **kwargs: object) -> object:
        seen.append(path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(parquet_format, "read_parquet_footer", counting)
    monkeypatch.setattr(fs, "read_parquet_footer", counting)
    clear_cache()
    yield seen
    clear_cache()
