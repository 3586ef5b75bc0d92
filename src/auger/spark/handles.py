"""What a Spark session handle is: a Spark Connect client or a classic session, its
SparkContext, its JVM.

A leaf of ``auger.spark``: starting Spark (``bootstrap``), the data source, error translation
and scan reports all ask these questions, and none of them may need the module that starts
Spark to ask them. Like the rest of ``auger.spark`` it may use pyspark's private handles
(``_gateway``, ``_jsc``); no package outside ``spark`` does (``docs/architecture.md``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["executor_count", "is_connect", "jvm_exited", "spark_context"]


def jvm_exited(wait: float = 0.0) -> bool:
    """Whether the JVM pyspark launched in this process has exited (waiting up to ``wait``
    seconds for it: a connection that just broke may be the JVM on its way out)."""
    # deferred: loads pyspark (heavy)
    from pyspark import SparkContext

    proc = getattr(SparkContext._gateway, "proc", None)
    if proc is None:
        return False
    try:
        proc.wait(timeout=wait) if wait > 0 else proc.poll()
    except Exception:  # still running after the wait
        return False
    return proc.poll() is not None


def is_connect(spark: Any) -> bool:
    """Whether ``spark`` (a session or a DataFrame's session) is a Spark Connect client.

    Tested by module, so that nothing here imports the Connect client (it needs grpcio).
    """
    real = getattr(spark, "_real", spark)
    return type(real).__module__.startswith("pyspark.sql.connect")


def spark_context(spark: Any) -> Any:
    """The SparkContext behind ``spark``, or None under Spark Connect (the client has none).

    Job groups, the status tracker and RDDs need it; their callers degrade without it.
    """
    if spark is None or is_connect(spark):
        return None
    try:
        return spark.sparkContext
    except Exception:
        return None


def executor_count(spark: Any) -> int | None:
    """How many block managers Spark has (the driver included, where a local master runs its
    tasks); None under Spark Connect, which does not say."""
    sc = spark_context(spark)
    return None if sc is None else int(sc._jsc.sc().getExecutorMemoryStatus().size())
