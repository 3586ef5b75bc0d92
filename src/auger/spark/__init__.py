"""The Spark side: session bootstrap, the ``auger`` data source, schema discovery, errors.

Only this package (and the engine) touches pyspark; executors import just ``datasource`` and
what it needs from ``scan`` and ``formats``.
"""
