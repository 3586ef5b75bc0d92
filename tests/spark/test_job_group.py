"""A statement's Spark jobs run in its job group; the thread's previous group comes back after."""

from __future__ import annotations

from typing import Any

import pytest

from auger.spark import jobs

pytestmark = pytest.mark.spark

_KEYS = ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel")


def _group(spark: Any) -> tuple[Any, ...]:
    return tuple(spark.sparkContext.getLocalProperty(k) for k in _KEYS)


def test_job_group_labels_jobs_and_restores_the_previous_group(spark: Any) -> None:
    sc = spark.sparkContext
    sc.setJobGroup("outer", "the outer statement", False)
    sc.setLocalProperty("auger.test.other", "kept")
    try:
        with jobs.job_group("inner", "x" * 500, spark):
            assert _group(spark) == ("inner", "x" * jobs.DESCRIPTION_CHARS, "true")
            spark.range(3).count()
            with jobs.job_group("nested", "deeper", spark):
                assert _group(spark)[0] == "nested"
            assert _group(spark)[0] == "inner"
        assert _group(spark) == ("outer", "the outer statement", "false")
        assert sc.getLocalProperty("auger.test.other") == "kept"
        assert list(sc.statusTracker().getJobIdsForGroup("inner"))
    finally:
        sc.setLocalProperty("auger.test.other", None)
        for key in _KEYS:
            sc.setLocalProperty(key, None)


def test_job_group_restores_an_unset_group(spark: Any) -> None:
    for key in _KEYS:
        spark.sparkContext.setLocalProperty(key, None)
    with jobs.job_group("only", "a statement", spark):
        assert _group(spark)[0] == "only"
    assert _group(spark) == (None, None, None)
