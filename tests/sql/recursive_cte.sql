-- Issue 41 item 3: WITH RECURSIVE, MySQL 8 semantics. Answers checked
-- against MariaDB 10.11; where MariaDB differs from MySQL 8 (its depth
-- variable is max_recursive_iterations and it stops silently; its error
-- codes for the restrictions differ) the MySQL 8 code and text are used.
CREATE DATABASE rc;
USE rc;
-- A sequence 1..10.
WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 10) SELECT n FROM seq ORDER BY n;
WITH RECURSIVE seq AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM seq WHERE n < 10) SELECT COUNT(*), SUM(n), MIN(n), MAX(n) FROM seq;
-- Fibonacci.
WITH RECURSIVE fib (i, a, b) AS (SELECT 1, 0, 1 UNION ALL SELECT i + 1, b, a + b FROM fib WHERE i < 15) SELECT i, a FROM fib ORDER BY i;
-- A tree walk over a parent-child table, with depth and path strings.
CREATE TABLE node (id INT PRIMARY KEY, parent INT, name VARCHAR(20));
INSERT INTO node VALUES (1, NULL, 'root'), (2, 1, 'a'), (3, 1, 'b'), (4, 2, 'a1'), (5, 2, 'a2'), (6, 3, 'b1'), (7, 6, 'b1x'), (8, NULL, 'other');
WITH RECURSIVE t (id, depth, path) AS (SELECT id, 0, CAST(name AS CHAR(200)) FROM node WHERE parent IS NULL UNION ALL SELECT n.id, t.depth + 1, CONCAT(t.path, '/', n.name) FROM t JOIN node n ON n.parent = t.id) SELECT id, depth, path FROM t ORDER BY path;
-- The CTE may be the right side of a join, and joined in the outer query.
WITH RECURSIVE t (id, depth) AS (SELECT 1, 0 UNION ALL SELECT n.id, t.depth + 1 FROM node n JOIN t ON n.parent = t.id) SELECT n.name, t.depth FROM t JOIN node n ON n.id = t.id WHERE t.depth >= 2 ORDER BY n.name;
-- Ancestors of one node (walking up).
WITH RECURSIVE up (id, parent) AS (SELECT id, parent FROM node WHERE id = 7 UNION ALL SELECT n.id, n.parent FROM node n, up WHERE n.id = up.parent) SELECT id FROM up ORDER BY id;
-- UNION DISTINCT stops on a graph with a cycle.
CREATE TABLE edge (src INT, dst INT);
INSERT INTO edge VALUES (1, 2), (2, 3), (3, 1), (3, 4), (5, 6);
WITH RECURSIVE reach (v) AS (SELECT 1 UNION SELECT e.dst FROM edge e JOIN reach r ON e.src = r.v) SELECT v FROM reach ORDER BY v;
WITH RECURSIVE reach (v) AS (SELECT 1 UNION DISTINCT SELECT e.dst FROM reach r JOIN edge e ON e.src = r.v) SELECT COUNT(*) FROM reach;
-- Several seeds and several recursive blocks.
WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT 100 UNION ALL SELECT n + 1 FROM s WHERE n < 3 UNION ALL SELECT n + 10 FROM s WHERE n < 20) SELECT n FROM s ORDER BY n;
-- Several CTEs in one WITH, some recursive, some not.
WITH RECURSIVE lim AS (SELECT 5 AS m), seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq, lim WHERE n < lim.m), sq AS (SELECT n * n AS q FROM seq) SELECT q FROM sq ORDER BY q;
-- Under WITH RECURSIVE a CTE that does not read itself is an ordinary one.
WITH RECURSIVE x AS (SELECT 1 AS a UNION SELECT 2) SELECT a FROM x ORDER BY a;
-- A recursive CTE read twice, and in a subquery.
WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 4) SELECT a.n, b.n FROM seq a JOIN seq b ON b.n = a.n + 1 ORDER BY a.n;
SELECT (WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 100) SELECT SUM(n) FROM seq) AS total;
-- In a view, and in a prepared statement with a parameter.
CREATE VIEW subtree AS WITH RECURSIVE t (id, depth) AS (SELECT id, 0 FROM node WHERE id = 2 UNION ALL SELECT n.id, t.depth + 1 FROM t JOIN node n ON n.parent = t.id) SELECT id, depth FROM t;
SELECT * FROM subtree ORDER BY id;
PREPARE walk FROM 'WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < ?) SELECT COUNT(*), SUM(n) FROM seq';
SET @k = 6;
EXECUTE walk USING @k;
SET @k = 20;
EXECUTE walk USING @k;
DEALLOCATE PREPARE walk;
-- An empty seed yields nothing.
WITH RECURSIVE e (n) AS (SELECT id FROM node WHERE id > 100 UNION ALL SELECT n + 1 FROM e) SELECT COUNT(*) FROM e;
-- cte_max_recursion_depth (MySQL 8; MariaDB's max_recursive_iterations
-- stops without an error): the default 1000 allows 1000 rows here.
SELECT @@cte_max_recursion_depth;
WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 1000) SELECT COUNT(*) FROM seq;
WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 1001) SELECT COUNT(*) FROM seq;
SET cte_max_recursion_depth = 5;
WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 6) SELECT COUNT(*) FROM seq;
WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 7) SELECT COUNT(*) FROM seq;
SET cte_max_recursion_depth = 0;
WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 7) SELECT COUNT(*) FROM seq;
SET cte_max_recursion_depth = 100000;
WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 5000) SELECT COUNT(*), SUM(n) FROM seq;
SET cte_max_recursion_depth = -1;
SET cte_max_recursion_depth = DEFAULT;
SELECT @@cte_max_recursion_depth;
-- SET GLOBAL: the value new sessions start with.
SET GLOBAL cte_max_recursion_depth = 3;
SELECT @@global.cte_max_recursion_depth, @@session.cte_max_recursion_depth;
SET GLOBAL cte_max_recursion_depth = DEFAULT;
-- MySQL 8's restrictions (codes and texts as MySQL 8; MariaDB answers
-- other codes for some of them).
WITH RECURSIVE c (n) AS (SELECT n FROM c) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT n + 1 FROM c WHERE n < 3 UNION ALL SELECT 1) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT MAX(n) + 1 FROM c WHERE n < 3) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3 GROUP BY n) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT DISTINCT n + 1 FROM c WHERE n < 3) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL (SELECT n + 1 FROM c WHERE n < 3 ORDER BY n)) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT e.src FROM edge e LEFT JOIN c ON c.n = e.src) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT e.src FROM c RIGHT JOIN edge e ON c.n = e.src) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT ROW_NUMBER() OVER (ORDER BY n) FROM c WHERE n < 3) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM (SELECT n FROM c) AS d WHERE n < 3) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT c.n + 1 FROM c JOIN c AS d ON d.n = c.n WHERE c.n < 3) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3 AND n IN (SELECT n FROM c)) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1, n FROM c WHERE n < 3) SELECT * FROM c;
WITH RECURSIVE c (n, m) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3) SELECT * FROM c;
-- LIMIT [OFFSET] on the CTE's union (MySQL 8.0.19+; MariaDB 10.11 refuses
-- it with 1235): the rounds stop once enough rows exist, so an unbounded
-- recursion ends; rows in the order the rounds produce them.
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3 LIMIT 2) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 5 OFFSET 2) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 3, 2) SELECT SUM(n) FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 0) SELECT COUNT(*) FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 2000) SELECT COUNT(*) FROM c;
-- Not implemented: refused with 1235.
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3 ORDER BY n) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3 UNION SELECT n + 2 FROM c WHERE n < 3) SELECT * FROM c;
-- EXPLAIN shows the operator and its working table.
EXPLAIN WITH RECURSIVE seq (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM seq WHERE n < 10) SELECT n FROM seq;
-- The seed fixes the column types (MySQL 8; MariaDB 10.11 agrees): a
-- longer string from a recursive block is 1406 in strict mode, cut with
-- warning 1265 otherwise; numbers are converted to the seed's type.
-- Rows are numbered in the messages as MariaDB does (MySQL 8 may differ).
WITH RECURSIVE c AS (SELECT 1 AS n, 'abc' AS str UNION ALL SELECT n + 1, CONCAT(str, str) FROM c WHERE n < 3) SELECT * FROM c;
WITH RECURSIVE c AS (SELECT 1 AS n, CAST('abc' AS CHAR(20)) AS str UNION ALL SELECT n + 1, CONCAT(str, str) FROM c WHERE n < 3) SELECT * FROM c;
WITH RECURSIVE c (n, s) AS (SELECT 1, name FROM node WHERE id = 1 UNION ALL SELECT n + 1, CONCAT(s, s, s, s, s, s) FROM c WHERE n < 3) SELECT * FROM c;
WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 0.5 FROM c WHERE n < 3) SELECT n FROM c;
WITH RECURSIVE c (n, d) AS (SELECT 1, 1.5 UNION ALL SELECT n + 1, d * 1.25 FROM c WHERE n < 4) SELECT n, d FROM c;
SET sql_mode = '';
WITH RECURSIVE c AS (SELECT 1 AS n, 'abc' AS str UNION ALL SELECT n + 1, CONCAT(str, str) FROM c WHERE n < 3) SELECT * FROM c;
SHOW WARNINGS;
SET sql_mode = DEFAULT;
