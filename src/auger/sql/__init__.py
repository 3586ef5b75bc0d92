"""Drill's SQL on sqlglot: parsing, routing, name resolution, SELECT planning, DDL.

Layering: ``sql`` may import every lower layer (``types``, ``storage``, ``formats``, ``scan``,
``spark``); nothing below imports ``sql``.
"""
