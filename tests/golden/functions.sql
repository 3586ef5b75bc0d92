-- Drill in (first line), Spark out (second line); cases separated by blank lines.
-- Tables stand for the Spark views the planner registers.

-- integer division of two integers (Drill answers 3)
SELECT 7 / 2 FROM t
SELECT 7 DIV 2 AS `EXPR$0` FROM t

SELECT CAST(a AS INT) / 2 AS half, 7.0 / 2 FROM t
SELECT CAST(a AS INT) DIV 2 AS half, 7.0 / 2 AS `EXPR$1` FROM t

-- formats are kept verbatim (Joda and Java patterns agree); Drill's TIMESTAMP has no zone
SELECT TO_TIMESTAMP(s, 'dd/MM/yyyy HH:mm') AS ts, TO_DATE(s, 'yyyy-MM-dd') AS d FROM t
SELECT TO_TIMESTAMP_NTZ(s, 'dd/MM/yyyy HH:mm') AS ts, TO_DATE(s, 'yyyy-MM-dd') AS d FROM t

-- epoch seconds
SELECT TO_TIMESTAMP(1700000000) FROM t
SELECT CAST(FROM_UNIXTIME(1700000000) AS TIMESTAMP) AS `EXPR$0` FROM t

SELECT REPEATED_CONTAINS(arr, 1) AS c, REPEATED_COUNT(arr) AS n, STRPOS(s, 'x') AS p FROM t
SELECT ARRAY_CONTAINS(arr, 1) AS c, SIZE(arr) AS n, LOCATE('x', s) AS p FROM t

-- Drill's CONCAT skips nulls
SELECT CONCAT(a, b) AS ab FROM t
SELECT CONCAT(COALESCE(a, ''), COALESCE(b, '')) AS ab FROM t

-- Drill sorts nulls last
SELECT a FROM t ORDER BY a LIMIT 10 OFFSET 5
SELECT a AS `a` FROM t ORDER BY a NULLS LAST LIMIT 10 OFFSET 5

-- Drill's REGEXP_MATCHES matches the whole value
SELECT REGEXP_MATCHES(s, 'a.*') AS m FROM t
SELECT s RLIKE CONCAT('^(?:', 'a.*', ')$') AS m FROM t

-- Drill's LOG(x) is the natural logarithm
SELECT LOG(8) AS l FROM t
SELECT LN(8) AS l FROM t

-- Drill's TYPEOF names Drill's types
SELECT TYPEOF(a) AS t FROM x
SELECT CASE WHEN a IS NULL THEN 'NULL' WHEN TYPEOF(a) = 'tinyint' THEN 'TINYINT' WHEN TYPEOF(a) = 'smallint' THEN 'SMALLINT' WHEN TYPEOF(a) = 'int' THEN 'INT' WHEN TYPEOF(a) = 'bigint' THEN 'BIGINT' WHEN TYPEOF(a) = 'float' THEN 'FLOAT4' WHEN TYPEOF(a) = 'double' THEN 'FLOAT8' WHEN TYPEOF(a) = 'string' THEN 'VARCHAR' WHEN TYPEOF(a) = 'boolean' THEN 'BIT' WHEN TYPEOF(a) = 'date' THEN 'DATE' WHEN TYPEOF(a) = 'timestamp' THEN 'TIMESTAMP' WHEN TYPEOF(a) = 'timestamp_ntz' THEN 'TIMESTAMP' WHEN TYPEOF(a) LIKE 'time%' THEN 'TIME' WHEN TYPEOF(a) = 'binary' THEN 'VARBINARY' WHEN TYPEOF(a) LIKE 'decimal%' THEN 'VARDECIMAL' WHEN TYPEOF(a) LIKE 'struct%' THEN 'MAP' WHEN TYPEOF(a) LIKE 'array%' THEN 'LIST' WHEN TYPEOF(a) LIKE 'map%' THEN 'DICT' WHEN TYPEOF(a) LIKE 'interval year%' THEN 'INTERVALYEAR' WHEN TYPEOF(a) LIKE 'interval month%' THEN 'INTERVALYEAR' WHEN TYPEOF(a) = 'interval' THEN 'INTERVAL' WHEN TYPEOF(a) LIKE 'interval%' THEN 'INTERVALDAY' WHEN TYPEOF(a) = 'void' THEN 'NULL' ELSE UPPER(TYPEOF(a)) END AS t FROM x

-- Drill's MODEOF: arrays, else NOT NULL for a constant and NULLABLE for what reads a column
SELECT MODEOF(a) AS m, MODEOF(1 + 2) AS k FROM x
SELECT CASE WHEN TYPEOF(a) LIKE 'array<%' THEN 'ARRAY' ELSE 'NULLABLE' END AS m, CASE WHEN TYPEOF(1 + 2) LIKE 'array<%' THEN 'ARRAY' ELSE 'NOT NULL' END AS k FROM x
