"""Drill's SQL on sqlglot: parsing, routing, name resolution, SELECT planning, DDL.

Layering: ``sql`` may import every lower layer (``types``, ``storage``, ``formats``, ``scan``,
``spark``); nothing below imports ``sql`` (``scripts/check_layers.py`` checks it).

Sub-packages, one concern each: ``frontend`` (sqlglot's Drill dialect, the grammars of the Drill
statements sqlglot cannot parse, how deeply a statement may nest, Drill → Spark SQL),
``planning`` (the SELECT planner, its rules in ``planning.rules``, and what they use: column
analysis, pruning, row counts, ``columns[n]``, directory and table functions), ``ddl``
(``CREATE TABLE AS``, ``DROP TABLE``, views, provided schemas) and ``catalog`` (name
resolution, ``INFORMATION_SCHEMA``, ``sys``, ``SHOW``/``DESCRIBE``/``EXPLAIN``). ``router``
sends a statement to its handler; ``result`` is what every statement answers.

``context`` defines what a statement runs with (``StatementContext``: the catalog, options,
user, engine services and the statement's ``recordings``); the session builds one per
statement, and nothing here names the session (``scripts/check_layers.py`` checks it).
"""
