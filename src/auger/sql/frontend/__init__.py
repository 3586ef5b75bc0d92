"""The SQL front end: statement text in, a sqlglot tree (or a Drill command value) out, and the
finished tree back out as Spark SQL.

``parser`` (splitting and parsing, Drill's parse errors), ``dialect`` (sqlglot's Drill dialect
with Drill's functions), ``token_cursor``, ``command_grammar`` and ``statement_grammar`` (the
Drill statements sqlglot cannot parse), ``nesting`` (how deeply a statement may nest),
``rewrites`` and ``translate`` (Drill → Spark SQL).
"""
