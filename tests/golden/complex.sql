-- FLATTEN, KVGEN, array indexes and map members.

-- Drill's FLATTEN is Spark's EXPLODE (Spark's flatten concatenates arrays)
SELECT FLATTEN(t.arr) AS x FROM t
SELECT EXPLODE(t.arr) AS x FROM t

SELECT FLATTEN(KVGEN(t.m)) AS kv FROM t
SELECT EXPLODE(MAP_ENTRIES(t.m)) AS kv FROM t

-- several FLATTENs make a cross product: lateral views (Spark allows one generator per SELECT)
SELECT id, FLATTEN(a) AS x, FLATTEN(b) FROM t
SELECT id AS `id`, __auger_flatten0.value AS x, __auger_flatten1.value AS `EXPR$2` FROM t LATERAL VIEW EXPLODE(a) __auger_flatten0 AS value LATERAL VIEW EXPLODE(b) __auger_flatten1 AS value

-- an index past the end is NULL in Drill, an error in ANSI Spark
SELECT columns[0], columns[1] AS b FROM t
SELECT GET(columns, 0) AS `EXPR$0`, GET(columns, 1) AS b FROM t

-- map member paths are named EXPR$n; duplicates get a counter
SELECT t.m.a, t.id, t.id, id FROM t
SELECT t.m.a AS `EXPR$0`, t.id AS `id`, t.id AS `id0`, id AS `id1` FROM t
