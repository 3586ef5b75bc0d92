"""The Spark side: session bootstrap, the ``auger`` data source, schema discovery, errors.

Modules, one concept each:

- ``bootstrap``: the process's SparkSession (confs, log silencing, shipping auger to a cluster,
  Spark Connect for ``sc://`` masters) and the data source's registration;
- ``datasource``: ``AugerDataSource`` / its readers: tasks and Arrow batches Spark accepts;
- ``direct``: scans planned from reader options for plain PySpark users;
- ``partitions``: files, Parquet row groups and text byte ranges into tasks of a target size;
- ``pushdown``: Spark's pushed filters used to skip files and Parquet row groups;
- ``discovery``: table schemas on the driver, cached, as a Spark job for many files;
- ``errors``: the one place Spark's exceptions become ``UserError``s;
- ``jobs``: running a statement's Spark work: job groups, progress, cancellation, Arrow batches;
- ``frame_sql``: Spark SQL over the planner's DataFrames, passed to ``spark.sql`` by name.

Only this package (and the engine) touches pyspark; executors import just ``datasource`` and
what it needs from ``scan`` and ``formats``.
"""
