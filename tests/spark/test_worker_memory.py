"""Spark's Python workers allocate Arrow memory with jemalloc, which returns what a scan or a
cache build frees (pyarrow's default, mimalloc, keeps it: see ``worker_defaults``)."""

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
