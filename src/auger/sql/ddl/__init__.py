"""Statements that change what the workspaces hold: ``ctas`` (``CREATE [TEMPORARY] TABLE AS``),
``drop_table``, ``view_commands`` (``CREATE``/``DROP VIEW``) and ``schema_commands``
(``CREATE``/``DROP``/``DESCRIBE SCHEMA`` of provided schemas)."""
