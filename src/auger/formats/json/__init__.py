"""JSON files: record streaming, Drill's type rules, conversion to Arrow, the plugin."""

from auger.formats.json.infer import SchemaBuilder, infer_value
from auger.formats.json.plugin import JsonFormat

__all__ = ["JsonFormat", "SchemaBuilder", "infer_value"]
