"""Whether Spark's own file readers can open object-store paths, and their Hadoop settings.

auger's data source reads object stores through pyarrow on every executor and needs nothing
from Hadoop. Spark's native Parquet reader is a fast path only: it is taken for ``s3a://``
files when Hadoop's S3A classes (``hadoop-aws`` and the AWS SDK) are on Spark's classpath, with
the plugin's settings copied into S3A's per-bucket keys; without them the data source reads the
same files with the same answers.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from auger.storage import filesystem as fs

__all__ = ["S3A_CLASS", "hadoop_reads", "s3a_on_classpath"]

_log = logging.getLogger(__name__)

#: The Hadoop file system class behind ``s3a://``.
S3A_CLASS = "org.apache.hadoop.fs.s3a.S3AFileSystem"


def s3a_on_classpath(spark: Any) -> bool:
    """Whether Spark's JVM can load S3A (False for Spark Connect, which has no JVM here)."""
    try:
        jvm = spark.sparkContext._jvm
        loader = jvm.Thread.currentThread().getContextClassLoader()
        jvm.java.lang.Class.forName(S3A_CLASS, False, loader)
        return True
    except Exception:  # ClassNotFoundException through py4j, or no JVM at all
        return False


def hadoop_reads(spark: Any, paths: Sequence[str]) -> bool:
    """Whether Spark's readers can open every one of ``paths`` (local ones always); for
    ``s3a://`` paths the registered settings of their buckets are set as S3A's per-bucket
    Hadoop keys (``fs.s3a.bucket.<bucket>.<key>``)."""
    remote = [p for p in paths if fs.is_uri(p)]
    if not remote:
        return True
    if any(not p.lower().startswith("s3a://") for p in remote):
        return False
    if not s3a_on_classpath(spark):
        return False
    try:
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        for raw in fs.shipped_for(remote):
            bucket = str(raw["root"]).partition("://")[2]
            for key, value in raw["options"]:
                if key.startswith("fs.s3a."):
                    conf.set(f"fs.s3a.bucket.{bucket}.{key[len('fs.s3a.') :]}", value)
    except Exception as exc:  # a configuration Spark refuses: let the data source read
        _log.debug("S3A settings not applied: %s", exc)
        return False
    return True
