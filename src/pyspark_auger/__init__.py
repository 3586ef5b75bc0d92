"""Makes ``spark.read.format("auger")`` work in any SparkSession once auger is installed.

Spark 4 looks, the first time a session meets a data source name it does not know, for
top-level modules named ``pyspark_*`` on its Python workers' path that define ``DefaultSource``
(a ``pyspark.sql.datasource.DataSource``) and registers each under ``DefaultSource.name()``.
This module is that hook for auger's data source; nothing here needs to be imported by hand.
"""

from auger.spark.datasource import AugerDataSource as DefaultSource

__all__ = ["DefaultSource"]
