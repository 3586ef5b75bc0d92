"""SELECT planning: ``planner.plan_select`` runs the rules of ``planning.rules`` in order over a
``select_plan.SelectPlan``; ``tables`` finds, resolves and discovers a query's tables.

What the rules use: ``columns`` (what each scan must deliver), ``pruning``, ``row_counts``,
``compact_columns`` (``columns[n]``), ``missing_members``, ``star_columns``, ``local_answer``,
``dirfunctions`` (``MAXDIR``...), ``table_functions``, ``session_user``,
``no_temporary_in_views`` and ``diagnostics`` (what the user should hear about the scans).
"""
