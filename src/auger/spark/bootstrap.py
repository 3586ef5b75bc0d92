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
- A master of the form ``sc://host:port`` connects through Spark Connect instead.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from auger.errors import UserError

__all__ = ["check_java", "get_spark", "package_zip", "ship_package", "spark_is_running"]

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
    import re

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


def spark_is_running() -> bool:
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession() is not None


def get_spark(master: str = "local[*]", conf: Mapping[str, str] | None = None) -> Any:
    """The process's SparkSession, started with auger's settings if none is running yet."""
    with _lock:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        from pyspark.sql import SparkSession

        active = SparkSession.getActiveSession()
        if active is None and master.startswith("sc://"):
            active = _connect(master, conf)
        elif active is None:
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
                .config("spark.driver.extraJavaOptions", f"-Dlog4j.configurationFile={log4j}")
                .config("spark.executor.extraJavaOptions", f"-Dlog4j.configurationFile={log4j}")
                .config("spark.python.worker.faulthandler.enabled", "true")
                .config("spark.sql.python.filterPushdown.enabled", "true")
            )
            for key, value in (conf or {}).items():
                builder = builder.config(key, value)
            try:
                active = builder.getOrCreate()
            except Exception as exc:
                raise UserError.system(f"Spark could not start: {_first_line(exc)}") from exc
            active.sparkContext.setLogLevel("OFF")
            logging.getLogger("py4j").setLevel(logging.ERROR)
            logging.getLogger("pyspark").setLevel(logging.CRITICAL)
            if not master.startswith("local"):
                ship_package(active)
        _register_data_source(active)
        return active


def _connect(master: str, conf: Mapping[str, str] | None) -> Any:
    """A Spark Connect session (``sc://host:port``); static confs cannot be set from here."""
    import importlib.util

    from pyspark.sql import SparkSession

    missing = [m for m in ("grpc", "grpc_status", "zstandard") if not importlib.util.find_spec(m)]
    if missing:  # pyspark would exit the process instead of raising
        raise UserError.system(
            f"Cannot connect to Spark Connect at {master}: its client needs {', '.join(missing)}",
            ["Fix: pip install 'pyspark[connect]' (grpcio, grpcio-status, zstandard)"],
        )
    builder = SparkSession.builder.remote(master)
    for key, value in (conf or {}).items():
        if key.startswith("spark.sql."):
            builder = builder.config(key, value)
    try:
        return builder.getOrCreate()
    except Exception as exc:
        raise UserError.system(
            f"Cannot connect to Spark Connect at {master}: {_first_line(exc)}",
            ["Fix: start the server (start-connect-server.sh) or correct [spark] master"],
        ) from exc


def package_zip() -> str:
    """Zip the installed ``auger`` package (sources only) for shipping to executors."""
    import zipfile

    import auger

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
    from auger.spark.datasource import AugerDataSource

    spark.dataSource.register(AugerDataSource)
    try:  # also when joining a session someone else built
        spark.conf.set("spark.sql.python.filterPushdown.enabled", "true")
    except Exception:
        _log.debug("cannot enable Python data source filter push-down", exc_info=True)
    _registered.add(key)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
