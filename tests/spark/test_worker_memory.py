"""Spark's Python workers allocate Arrow memory with jemalloc, which returns what a scan or a
cache build frees (pyarrow's default, mimalloc, keeps it: see ``worker_defaults``); a driver JVM
of a small heap on few cores collects with the serial collector (``driver_java_options``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pytest

from auger.spark import bootstrap


def _has_jemalloc() -> bool:
    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        return False
    return True


def test_workers_get_jemalloc_unless_the_variable_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(bootstrap.ARROW_POOL_VARIABLE, raising=False)
    setting = {"spark.executorEnv.ARROW_DEFAULT_MEMORY_POOL": "jemalloc"}
    assert bootstrap.worker_defaults() == (setting if _has_jemalloc() else {})
    monkeypatch.setenv(bootstrap.ARROW_POOL_VARIABLE, "system")
    assert bootstrap.worker_defaults() == {}  # the user's choice, which local workers inherit


def _pool_names(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        name = pa.default_memory_pool().backend_name
        yield pa.RecordBatch.from_pydict({"pool": [name] * batch.num_rows})


def test_python_workers_run_on_the_chosen_pool(spark: Any) -> None:
    chosen = os.environ.get(bootstrap.ARROW_POOL_VARIABLE)
    if chosen is None:
        chosen = "jemalloc" if _has_jemalloc() else pa.default_memory_pool().backend_name
    rows = spark.range(4).repartition(2).mapInArrow(_pool_names, "pool string").collect()
    assert {r.pool for r in rows} == {chosen}


def test_a_small_driver_heap_on_few_cores_gets_the_serial_collector() -> None:
    log4j = "/tmp/log4j.properties"
    serial = "-XX:+UseSerialGC"
    assert bootstrap.driver_java_options({}, log4j, cores=2).split() == [
        f"-Dlog4j.configurationFile={log4j}",
        serial,
    ]
    for memory in ("512m", "2g", "2048", "1536M"):
        assert serial in bootstrap.driver_java_options({"spark.driver.memory": memory}, log4j, 4)
    # a larger heap, more cores, or a size auger cannot read: the JVM's own choice
    for memory in ("4g", "3000m", "lots"):
        options = bootstrap.driver_java_options({"spark.driver.memory": memory}, log4j, 2)
        assert options == f"-Dlog4j.configurationFile={log4j}"
    assert serial not in bootstrap.driver_java_options({}, log4j, cores=16)


def test_the_running_driver_collects_as_its_options_say(spark: Any) -> None:
    """The test session's JVM started with auger's options: its collectors are the serial
    one's (``Copy``, ``MarkSweepCompact``) exactly where the options chose it."""
    jvm = spark.sparkContext._jvm
    beans = jvm.java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()
    names = {beans.get(i).getName() for i in range(beans.size())}
    options = spark.sparkContext.getConf().get("spark.driver.extraJavaOptions", "")
    assert ("-XX:+UseSerialGC" in options) == (names == {"Copy", "MarkSweepCompact"}), names
    # Spark puts its own module options first
    assert options.endswith(bootstrap.driver_java_options({}, bootstrap._log4j_file()))
