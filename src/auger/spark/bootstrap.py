"""Starting (or joining) the process's one SparkSession, configured for auger.

Why each setting:
- Python workers run ``sys.executable`` so executors import the same auger and pyarrow as the
  driver (Spark would otherwise start whatever ``python3`` is on PATH).
- ANSI mode stays on, deliberately: Drill fails a query on an invalid cast or an integer overflow
  rather than returning NULL, and ANSI mode is how Spark does the same. The planner rewrites the
  few places where Drill returns NULL instead (array indexes past the end).
- Timestamps are zone-less in Drill; the session time zone is pinned to UTC so nothing shifts.
- The Spark UI and console logging are off: auger reports errors itself.
- Python data source filter push-down is on (``spark.sql.python.filterPushdown.enabled``): the
  ``auger`` source uses pushed filters to skip files and Parquet row groups.
- On a cluster (a master that is not ``local``), the ``auger`` package is zipped and shipped to
  executors with ``addPyFile``, so workers need only pyarrow and pyspark installed.
- A master of the form ``sc://host:port`` connects through Spark Connect instead (see
  :func:`_connect`): the server runs the queries, this process plans them.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import auger
from auger.errors import UserError
from auger.spark.handles import is_connect
from auger.spark.jvm_stderr import jvm_notice_filtered

__all__ = [
    "check_java",
    "connect_session",
    "forget_dead_spark",
    "get_spark",
    "interrupt_tag",
    "is_local_master",
    "package_zip",
    "ship_package",
    "spark_alive",
    "spark_is_running",
    "tag_operations",
]

_log = logging.getLogger(__name__)
_lock = threading.Lock()

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.spark.name = org.apache.spark
logger.spark.level = off
# PySpark's gateway counts as a shell: Spark prints "Setting default log level" unless the
# shell's logger has the root's level.
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = off
logger.jetty.name = org.sparkproject.jetty
logger.jetty.level = off
logger.parquet.name = org.apache.parquet
logger.parquet.level = off
"""


def check_java() -> str:
    """Return the ``java`` executable, or raise a one-line error naming the fix."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        raise UserError.system(
            "Java was not found: auger runs queries on Apache Spark, which needs Java 17 or newer. "
            "Install it (e.g. `apt-get install openjdk-17-jre-headless`) or set JAVA_HOME."
        )
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        ).stderr
    except OSError as exc:
        raise UserError.system(f"Java at {java} cannot be run: {exc}. Install Java 17+.") from exc
    version = _java_major(out)
    if version is not None and version < 17:
        raise UserError.system(
            f"Java {version} found at {java}, but Spark 4 needs Java 17 or newer. "
            "Install Java 17+ or point JAVA_HOME at it."
        )
    return java


def _java_major(version_text: str) -> int | None:

    m = re.search(r'version "(\d+)(?:\.(\d+))?', version_text)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def _log4j_file() -> str:
    path = Path(tempfile.gettempdir()) / "auger-log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J:
        path.write_text(_LOG4J)
    return str(path)


def spark_alive(spark: Any) -> bool:
    """Whether ``spark``'s JVM still runs and its context has not stopped: a live check, for
    a server that must notice Spark dying under it (an out-of-memory kill, a crash).

    The JVM process pyspark launched is polled first (no round trip); a context that answers
    must also not be stopped. Spark Connect sessions are taken to be alive: the server is
    another process, and a lost connection fails the query that meets it.
    """
    if spark is None:
        return False
    if is_connect(spark):
        return True
    try:
        sc = spark.sparkContext
        proc = getattr(sc._gateway, "proc", None)
        if proc is not None and proc.poll() is not None:
            return False
        return not bool(sc._jsc.sc().isStopped())
    except Exception:
        return False


def forget_dead_spark(dead: Any) -> None:
    """Drop pyspark's handles on ``dead``, a Spark session whose JVM is gone, so
    :func:`get_spark` starts a new one (pyspark would otherwise hand out the dead session and
    context again). A no-op when the process's Spark is another one by now (another engine of
    the process started it again first)."""
    # deferred: loads pyspark (heavy)
    from pyspark import SparkContext

    # deferred: loads pyspark (heavy)
    from pyspark.sql import SparkSession, SQLContext

    with _lock:
        sc = SparkContext._active_spark_context
        if sc is not None and sc is not getattr(dead, "_sc", None):
            return
        gateway = SparkContext._gateway
        if sc is not None:
            try:
                sc.stop()  # the JVM side is gone: this drops the Python side's servers
            except Exception:
                _log.debug("stopping the dead SparkContext failed", exc_info=True)
        if gateway is not None:
            proc = getattr(gateway, "proc", None)
            if proc is not None and proc.poll() is None:  # alive, with a stopped context
                proc.kill()
            try:
                gateway.close()
            except Exception:
                _log.debug("closing the dead gateway failed", exc_info=True)
        SparkContext._active_spark_context = None
        SparkContext._gateway = None
        SparkContext._jvm = None
        SparkSession._instantiatedSession = None
        SparkSession._activeSession = None
        SQLContext._instantiatedContext = None
        active = getattr(SparkSession, "_active_session", None)
        if active is not None and hasattr(active, "session"):
            active.session = None  # this thread's: other threads' are checked when used


def spark_is_running() -> bool:
    """Whether this process has a classic SparkContext now (whichever thread started it);
    never starts one."""
    # deferred: loads pyspark (heavy)
    from pyspark import SparkContext

    return SparkContext._active_spark_context is not None


#: The Spark Connect session of this process, once one was opened (see :func:`connect_session`).
_connect_session: Any = None


def connect_session() -> Any:
    """The process's Spark Connect session, or None; never connects just to ask."""
    return _connect_session


def tag_operations(tag: str) -> Any:
    """Under Spark Connect, tag this thread's next operations with ``tag`` (Connect's job group).

    Returns a callable that removes the tag again (a no-op without a Connect session). Tags are
    thread-local in the Connect client, like job groups are in a SparkContext.
    """
    spark = _connect_session
    if spark is None:
        return lambda: None
    try:
        spark.addTag(tag)
    except Exception:
        _log.debug("cannot tag Spark Connect operations with %s", tag, exc_info=True)
        return lambda: None

    def remove() -> None:
        try:
            spark.removeTag(tag)
        except Exception:
            _log.debug("cannot remove Spark Connect tag %s", tag, exc_info=True)

    return remove


def interrupt_tag(tag: str) -> bool:
    """Interrupt the Spark Connect operations tagged ``tag`` (from any thread); False if none."""
    spark = _connect_session
    if spark is None:
        return False
    try:
        return bool(spark.interruptTag(tag))
    except Exception:
        _log.debug("interruptTag(%s) failed", tag, exc_info=True)
        return False


# Stages of the running Spark Connect operations, by operation tag: (stage, done tasks, tasks).
_progress: dict[str, list[tuple[int, int, int]]] = {}


def connect_stages(tag: str) -> list[tuple[int, int, int]]:
    """The unfinished stages of the Connect operation tagged ``tag``, as the server last
    reported them (``(stage id, completed tasks, tasks)``); empty when unknown."""
    return list(_progress.get(tag, ()))


def _on_progress(
    stages: Any, inflight_tasks: int, operation_id: str | None, done: bool, **_: Any
) -> None:
    """Connect progress handler; runs in the thread reading the operation's results, whose
    (thread-local) tags name the statement."""
    spark = _connect_session
    if spark is None:
        return
    try:
        tags = spark._real.getTags()
    except Exception:
        return
    for tag in tags:
        if done:
            _progress.pop(tag, None)
        else:
            _progress[tag] = [
                (s.stage_id, s.num_completed_tasks, s.num_tasks) for s in stages or () if not s.done
            ]


#: Memory settings that keep one query from taking the JVM down, unless ``[spark] conf`` says
#: otherwise. A result collected to the driver in one piece (a whole answer, one partition of
#: a streamed one) stops at ``maxResultSize`` with an error instead of filling the heap; a task
#: that runs out of memory fails its query instead of ending the process (Spark otherwise exits
#: on a fatal error in a task, and in local mode the tasks run in the driver's JVM). The heap
#: itself is ``spark.driver.memory`` (Spark's default, 1g), set when the JVM starts.
MEMORY_DEFAULTS: Mapping[str, str] = {
    "spark.driver.maxResultSize": "256m",
    "spark.executor.killOnFatalError.depth": "0",
}


#: The environment variable naming the allocator of Arrow's default memory pool
ARROW_POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"


def worker_defaults() -> dict[str, str]:
    """Settings of Spark's Python workers, unless ``[spark] conf`` says otherwise: their Arrow
    memory pool on jemalloc where this pyarrow has it (and the variable is not already set).

    pyarrow's default, mimalloc, keeps memory a worker has freed: a worker writing raw-file
    cache entries of a 470 MB JSON file peaked at 240 MB of RSS on mimalloc and 182 MB on
    jemalloc, at the same speed (2 GB of CSV: 257 MB and 204 MB). Set for the workers only: the
    driver's pool is chosen before auger runs."""
    if os.environ.get(ARROW_POOL_VARIABLE):
        return {}  # local workers inherit it; executors get it from the user's own settings
    # deferred: pyarrow loads with the first scan, not with the CLI
    import pyarrow as pa

    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:  # a build without jemalloc (Windows)
        return {}
    return {f"spark.executorEnv.{ARROW_POOL_VARIABLE}": "jemalloc"}


#: Spark's Python daemon for a local master: pyspark's, with a cancelled task's worker ending
#: quietly (:mod:`auger.spark.worker_daemon`)
DAEMON_MODULE = "auger.spark.worker_daemon"


def is_local_master(master: str) -> bool:
    """Whether Spark's ``master`` runs its executors on this machine (``local``, ``local[4]``,
    ``local-cluster[...]``): they see this machine's files and run this Python. The one test
    of it, for the engine's defaults, the warm-up and the raw-file cache's builds."""
    return str(master).startswith("local")


def daemon_defaults(master: str) -> dict[str, str]:
    """Spark's Python daemon module, unless ``[spark] conf`` says otherwise: auger's, with a
    local master only. A local master's workers run this Python, which has auger; an executor
    elsewhere may start its daemon where auger cannot be imported (a cluster ships auger with
    the job's files), and every Python task would fail there."""
    return {"spark.python.daemon.module": DAEMON_MODULE} if is_local_master(master) else {}


#: The largest driver heap (MB) and the most cores for which the JVM's collector is the serial
#: one (:func:`driver_java_options`)
SERIAL_GC_HEAP_MB = 2048
SERIAL_GC_CORES = 4

_SIZE_UNITS = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}


def driver_java_options(conf: Mapping[str, str], log4j: str, cores: int | None = None) -> str:
    """The driver JVM's options, unless ``[spark] conf`` gives its own: auger's log4j
    configuration, and the serial garbage collector where the heap is small and the cores few
    (``cores``: this machine's, by default).

    The JVM's default collector, G1, keeps structures of its own beside the heap: with Spark's
    1 GB default heap on two cores, the JVM of a 2 GB CSV query, its cache build and repeated
    queries from the cache peaked at 846/907/915 MB of RSS (and up to 993 MB in other runs) on
    G1, and at 512-520/652-654/722-729 MB on the serial collector, in the same time (the
    issue's bound is 0.8 GB). A small heap makes short pauses; with more cores, or a larger
    heap, G1 is what the JVM picks and what auger leaves."""
    options = [f"-Dlog4j.configurationFile={log4j}"]
    heap = _megabytes(conf.get("spark.driver.memory", "1g"))
    cores = cores if cores is not None else (os.cpu_count() or 1)
    if heap is not None and heap <= SERIAL_GC_HEAP_MB and cores <= SERIAL_GC_CORES:
        options.append("-XX:+UseSerialGC")
    return " ".join(options)


def _megabytes(size: str) -> float | None:
    """Megabytes of a Spark memory size (``512m``, ``1g``, ``2048``: megabytes); None if it
    is not one."""
    text = size.strip().lower().removesuffix("b")
    unit = _SIZE_UNITS.get(text[-1:]) if text else None
    number = text[:-1] if unit is not None else text
    try:
        return float(number) * (unit if unit is not None else 1)
    except ValueError:
        return None


def get_spark(master: str = "local[*]", conf: Mapping[str, str] | None = None) -> Any:
    """The process's SparkSession, started with auger's settings if none is running yet.

    A process holds either a classic session or Spark Connect sessions, never both: PySpark
    switches its whole API (``functions``, ``Column``...) to Connect once a remote session is
    made, so asking for the other kind is a clear error rather than a broken session.
    """
    with _lock:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        # deferred: loads pyspark (heavy)
        from pyspark import SparkContext

        # deferred: loads pyspark (heavy)
        from pyspark.sql import SparkSession

        if master.startswith("sc://"):
            if SparkContext._active_spark_context is not None:
                raise UserError.system(
                    f"Cannot connect to Spark Connect at {master}: this process already runs a "
                    "local Spark, and PySpark cannot mix the two",
                    ["Fix: use Spark Connect from a process of its own"],
                )
            return _connect(master, conf)
        if _connect_session is not None:
            raise UserError.system(
                f"Cannot start Spark with master {master}: this process is connected to Spark "
                "Connect, and PySpark cannot mix the two",
                ["Fix: use a process of its own for a local or cluster master"],
            )
        active = SparkSession.getActiveSession()
        if active is None:
            check_java()
            log4j = _log4j_file()
            warehouse = Path(tempfile.gettempdir()) / "auger-spark-warehouse"
            builder = (
                SparkSession.builder.master(master)
                .appName("auger")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.ansi.enabled", "true")
                .config("spark.sql.session.timeZone", "UTC")
                .config("spark.sql.shuffle.partitions", "4")
                .config("spark.sql.execution.arrow.pyspark.enabled", "true")
                .config("spark.sql.warehouse.dir", str(warehouse))
                .config("spark.driver.extraJavaOptions", driver_java_options(conf or {}, log4j))
                .config("spark.executor.extraJavaOptions", f"-Dlog4j.configurationFile={log4j}")
                .config("spark.python.worker.faulthandler.enabled", "true")
                .config("spark.sql.python.filterPushdown.enabled", "true")
            )
            defaults = {**MEMORY_DEFAULTS, **worker_defaults(), **daemon_defaults(master)}
            for key, value in {**defaults, **(conf or {})}.items():
                builder = builder.config(key, value)
            try:
                with jvm_notice_filtered():  # no "Using incubator modules" at every start
                    active = builder.getOrCreate()
            except Exception as exc:
                raise UserError.system(f"Spark could not start: {_first_line(exc)}") from exc
            active.sparkContext.setLogLevel("OFF")
            _quiet_python_logging()
            if is_local_master(master):
                _write_without_checksums(active)
            else:
                ship_package(active)
        _register_data_source(active)
        return active


def _write_without_checksums(spark: Any) -> None:
    """Local writes skip Hadoop's ``.crc`` side files.

    The table writer deletes them anyway, and their stream is what leaks on a full disk:
    Hadoop's checksumming stream does not close its files when flushing fails, so a task that
    ran out of space keeps the deleted files open, and their space stays taken, until the JVM
    collects garbage, failing the next small write too. Without checksums the plain local
    stream closes its file whatever happens. In local mode the tasks run in this JVM and use
    the same cached file system object.
    """
    try:
        jvm = spark.sparkContext._jvm
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        fs = jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI("file:///"), conf)
        fs.setWriteChecksum(False)
    except Exception:  # a file system without checksums to turn off
        _log.debug("could not turn off local write checksums", exc_info=True)


def _quiet_python_logging() -> None:
    """PySpark logs every failed query (as JSON, on stderr); auger reports errors itself."""
    for name in ("py4j", "pyspark", "SQLQueryContextLogger", "DataFrameQueryContextLogger"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


#: Session settings auger relies on (see the module docstring); under Spark Connect they are set
#: per session, since the server's own defaults may differ.
_CONNECT_SESSION_CONF = {
    "spark.sql.ansi.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.python.filterPushdown.enabled": "true",
}


def _connect(master: str, conf: Mapping[str, str] | None) -> Any:
    """A Spark Connect session (``sc://host:port``), wrapped in :class:`ConnectSession`.

    The server runs the scans: its Python workers must import ``auger`` (the server started
    with ``PYSPARK_PYTHON`` set to a Python that has auger installed). Only session (SQL)
    settings can be set from a client; static ones belong to the server's own start.
    """
    global _connect_session
    if _connect_session is not None:
        if _connect_session.url != master:
            raise UserError.system(
                f"Cannot connect to Spark Connect at {master}: this process is connected to "
                f"{_connect_session.url} already"
            )
        return _connect_session

    missing = [
        m
        for m in ("grpc", "grpc_status", "google.rpc", "zstandard")
        if not _find_spec(importlib.util.find_spec, m)
    ]
    if missing:  # pyspark would exit the process instead of raising
        raise UserError.system(
            f"Cannot connect to Spark Connect at {master}: its client needs {', '.join(missing)}",
            ["Fix: pip install 'auger[connect]' (or 'pyspark[connect]')"],
        )
    _probe_server(master)
    # deferred: loads pyspark (heavy)
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.remote(master)
    settings = {**_CONNECT_SESSION_CONF}
    settings.update({k: v for k, v in (conf or {}).items() if k.startswith("spark.sql.")})
    ignored = sorted(k for k in (conf or {}) if not k.startswith("spark.sql."))
    if ignored:  # executor memory, cores...: the server's, fixed when it was started
        _log.warning(
            "Spark Connect: [spark.conf] %s ignored; set them when starting the server",
            ", ".join(ignored),
        )
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        real: Any = builder.getOrCreate()
        _quiet_python_logging()
        real.dataSource.register(_data_source_class())
        real.dataSource.register(_planned_source_class())
        real.registerProgressHandler(_on_progress)
    except Exception as exc:
        raise UserError.system(
            f"Cannot connect to Spark Connect at {master}: {_first_line(exc)}",
            ["Fix: start the server (start-connect-server.sh) or correct [spark] master"],
        ) from exc
    _connect_session = ConnectSession(real, master)
    _registered.add(id(_connect_session))
    return _connect_session


def _probe_server(master: str) -> None:
    """Fail at once when nothing listens at the address: the Connect client would retry (with
    back-off) for minutes before giving up."""

    try:
        parts = urlsplit("http://" + master[len("sc://") :].split(";", 1)[0])
        host, port = parts.hostname or "localhost", parts.port or 15002
    except ValueError as exc:
        raise UserError.system(f"Invalid Spark Connect master {master}: {exc}") from exc
    try:
        socket.create_connection((host, port), timeout=10).close()
    except OSError as exc:
        raise UserError.system(
            f"Cannot connect to Spark Connect at {master}: {exc.strerror or exc}",
            ["Fix: start the server (start-connect-server.sh) or correct [spark] master"],
        ) from exc


def _find_spec(find: Any, name: str) -> bool:
    try:
        return find(name) is not None
    except ImportError:  # a missing parent package (``google`` for ``google.rpc``)
        return False


class ConnectSession:
    """A Spark Connect session and the address it was opened with; everything else passes
    through to the client's session."""

    def __init__(self, real: Any, url: str) -> None:
        self._real = real
        self.url = url

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def package_zip() -> str:
    """Zip the installed ``auger`` package (sources only) for shipping to executors."""

    pkg_dir = Path(auger.__file__).resolve().parent
    out = Path(tempfile.mkdtemp(prefix="auger-pyfiles-")) / "auger.zip"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for file in sorted(pkg_dir.rglob("*")):
            if file.is_file() and "__pycache__" not in file.parts and file.suffix != ".pyc":
                zf.write(file, Path("auger") / file.relative_to(pkg_dir))
    return str(out)


def ship_package(spark: Any) -> str:
    """Make ``auger`` importable on executors that do not have it installed."""
    path = package_zip()
    spark.sparkContext.addPyFile(path)
    return path


_registered: set[int] = set()


def _register_data_source(spark: Any) -> None:
    key = id(spark)
    if key in _registered:
        return
    if not _known_statically(spark):
        spark.dataSource.register(_data_source_class())
    spark.dataSource.register(_planned_source_class())  # see its class
    try:  # also when joining a session someone else built
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    except Exception:
        _log.debug("cannot enable Python data source filter push-down", exc_info=True)
    _registered.add(key)


def _known_statically(spark: Any) -> bool:
    """Whether ``spark`` already has the ``auger`` data source because auger is installed:
    Spark registers the ``DefaultSource`` of installed ``pyspark_*`` modules by itself (see
    ``pyspark_auger``), and registering it again would only make Spark warn, in a session that
    logs warnings (one the user built), that it "replaced a statically registered data source".
    False when that cannot be asked (auger imported from a source tree, not installed, is not
    found that way)."""
    try:
        manager = spark._jsparkSession.sessionState().dataSourceManager()
        return bool(manager.dataSourceExists("auger"))
    except Exception:
        return False


def _data_source_class() -> Any:
    # deferred: loads pyspark, pyarrow and more (heavy)
    from auger.spark.datasource import AugerDataSource

    return AugerDataSource


def _planned_source_class() -> Any:
    # deferred: loads pyspark, pyarrow and more (heavy)
    from auger.spark.datasource import PlannedScanSource

    return PlannedScanSource


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
