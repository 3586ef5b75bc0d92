"""The SELECT planner's rules, one module each, run in the order of
:data:`auger.sql.planning.planner.RULES`.

Each rule is a function of a :class:`~auger.sql.planning.select_plan.SelectPlan` that reads what
the rules before it found and fills in what the rules after it need:

1. ``find_tables``: query directory functions evaluated, the tables the query reads;
2. ``resolve_tables``: each table resolved; file tables discovered, the others as DataFrames;
3. ``requested_columns``: which columns each table must deliver;
4. ``plan_scans``: each file table's planned scan and its DataFrame (or an answer read on the
   driver);
5. ``missing_members_as_null``: members of maps no file has, under ``*``, as NULL;
6. ``tables_as_frames``: table references replaced by the DataFrames' names;
7. ``drill_to_spark``: Drill's semantics spelled in Spark SQL (integer division, KVGEN,
   TO_CHAR of numbers, row weights of counting scans, the session's user);
8. ``run_spark_sql``: the Spark SQL over the DataFrames, the answer.
"""
