"""Delimited text files (csv, tsv, psv, csvh): options, header clean-up, two parsers, plugin."""

from auger.formats.text.header import clean_header
from auger.formats.text.plugin import TextFormat, columns_indexes
from auger.formats.text.text_options import TextOptions

__all__ = ["TextFormat", "TextOptions", "clean_header", "columns_indexes"]
