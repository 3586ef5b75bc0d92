"""File systems, workspaces, file selection, views, provided schemas and table writers.

Layering: ``storage`` may import ``types``, ``errors`` and ``config``; never ``sql`` or ``server``.
"""
