"""File systems, workspaces and their denied paths, file selection, views, provided schemas,
table writers, and the sweep of what dead processes left behind.

Layering: ``storage`` may import ``types``, ``errors`` and ``config``; never ``sql`` or ``server``.
"""
