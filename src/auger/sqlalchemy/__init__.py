"""auger's SQLAlchemy 2 dialects, found by SQLAlchemy through the ``sqlalchemy.dialects`` entry
points of auger's package metadata.

- ``auger://`` runs statements on the embedded engine (``auger.connect``); ``auger:///dfs.tmp``
  makes ``dfs.tmp`` the default schema, ``?config=/path/auger.toml`` names a configuration file
  and ``auger://alice@/...`` the session's user.
- ``auger+http://host:8047/dfs.tmp`` (and ``auger+https://``) talks to a running ``auger
  serve`` (or a Drill) over Drill's REST API, through the client that ``auger sql --connect``
  uses; ``user:password@`` logs in.

The inspector (``sqlalchemy.inspect(engine)``) lists schemas, tables, views and columns with
their types from ``INFORMATION_SCHEMA``, reading a file table's columns from its plan when no
schema is stored for it. Identifiers are quoted with backticks, as Drill quotes them.

This package sits in the top layer beside ``cli``: it imports the DB-API, the embedded engine
and the shell's REST client, and nothing imports it.
"""

from auger.sqlalchemy.dialect import AugerDialect, AugerHttpDialect, AugerHttpsDialect

__all__ = ["AugerDialect", "AugerHttpDialect", "AugerHttpsDialect"]
