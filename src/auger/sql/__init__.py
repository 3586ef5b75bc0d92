"""Drill's SQL on sqlglot: parsing, routing, name resolution, SELECT planning, DDL.

Layering: ``sql`` may import every lower layer (``types``, ``storage``, ``formats``, ``scan``,
``spark``); nothing below imports ``sql``.

Modules: ``parser``/``dialect`` (sqlglot), ``grammar``/``commands``/``statements`` (the Drill
statements sqlglot cannot parse), ``router`` (statement → handler), ``catalog`` (names →
tables, views, system tables), ``planner`` (SELECT → Spark DataFrame), ``columns`` (what each
scan must deliver), ``rewrites``/``translate`` (Drill → Spark SQL), ``views``,
``schema_commands``, ``show``, ``metadata``, ``information_schema``, ``sys_tables``,
``nesting`` (how deeply a statement may nest),
``table_functions``, ``dirfunctions``, ``temporary``.
"""
