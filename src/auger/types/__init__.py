"""Drill's type system: ``MinorType``, ``DataMode``, ``ColumnMetadata``, ``TupleSchema``.

Arrow mappings live in ``auger.types.arrow``; Spark mappings in ``auger.types.spark`` (the only
module here that imports pyspark, lazily).
"""

from auger.types.metadata import ColumnMetadata, DataMode, MinorType, TupleSchema
from auger.types.schema_text import parse_schema, parse_type

__all__ = ["ColumnMetadata", "DataMode", "MinorType", "TupleSchema", "parse_schema", "parse_type"]
