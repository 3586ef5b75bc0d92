"""What names mean and what the schemas hold: ``resolution`` (``SessionCatalog``, the one name
resolver: a table name → a temporary table, view, file table or system table),
``table_listing`` (each schema's tables, cheaply), ``information_schema`` and ``sys_tables``
(the metadata tables) and ``show`` (``SHOW``, ``DESCRIBE``, ``REFRESH TABLE METADATA``,
``EXPLAIN``)."""
