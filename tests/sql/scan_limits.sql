-- A LIMIT without ORDER BY, or with an ORDER BY on a prefix of an integer
-- primary key ascending, stops the table scan once it has its rows (the
-- first in primary-key order that pass the WHERE); with another ORDER BY,
-- DISTINCT, GROUP BY or an aggregate every row is read first. Aggregates
-- over a scan fold rows as they come: the same answers as before.
CREATE DATABASE lim;
USE lim;
CREATE TABLE t (id INT PRIMARY KEY, g INT, s VARCHAR(5));
INSERT INTO t VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 1, 'c'), (4, 2, NULL), (5, 1, 'e'), (6, 3, 'f');
SELECT id FROM t LIMIT 2;
SELECT id FROM t LIMIT 2 OFFSET 3;
SELECT id FROM t LIMIT 0;
SELECT id FROM t WHERE g = 1 LIMIT 2;
SELECT id FROM t WHERE g = 1 LIMIT 5 OFFSET 2;
SELECT id FROM t WHERE id > 2 AND s IS NOT NULL LIMIT 2;
SELECT id FROM t WHERE id IN (6, 2, 4) LIMIT 2;
SELECT id FROM t ORDER BY id DESC LIMIT 2;
SELECT id, g FROM t ORDER BY id LIMIT 2 OFFSET 1;
SELECT id FROM t WHERE g = 1 ORDER BY id LIMIT 2;
SELECT id FROM t WHERE id > 2 ORDER BY id LIMIT 2;
SELECT id FROM t WHERE id IN (6, 2, 4) ORDER BY id LIMIT 2;
SELECT id FROM t ORDER BY g, id LIMIT 3;
-- A secondary-index range yields rows in index order, not key order: no
-- early stop under ORDER BY id there.
CREATE INDEX ig ON t (g);
SELECT id FROM t WHERE g >= 1 ORDER BY id LIMIT 2;
SELECT id FROM t WHERE g >= 2 ORDER BY id LIMIT 2;
EXPLAIN SELECT id FROM t WHERE g >= 2 ORDER BY id LIMIT 2;
SELECT id FROM t ORDER BY id, g DESC LIMIT 2;
CREATE TABLE c (a INT, b INT, s VARCHAR(5), PRIMARY KEY (a, b));
INSERT INTO c VALUES (2, 1, 'x'), (1, 9, 'y'), (1, -3, 'z'), (-5, 0, 'w'), (2, 0, 'v');
SELECT a, b FROM c ORDER BY a LIMIT 3;
SELECT a, b FROM c ORDER BY a, b LIMIT 4;
SELECT a, b FROM c ORDER BY b LIMIT 2;
SELECT a, b FROM c WHERE a = 1 ORDER BY a, b LIMIT 1;
CREATE TABLE s (k BIGINT PRIMARY KEY, n INT);
INSERT INTO s VALUES (4000000000, 1), (-4000000000, 2), (0, 3), (-1, 4), (9223372036854775807, 5), (-9223372036854775808, 6);
SELECT k FROM s ORDER BY k LIMIT 3;
SELECT MAX(k), MIN(k), COUNT(*) FROM s;
SELECT DISTINCT g FROM t LIMIT 2;
SELECT g, COUNT(*), MIN(s), MAX(s) FROM t GROUP BY g LIMIT 2;
SELECT COUNT(*), COUNT(s), SUM(g), AVG(g), MIN(s) FROM t WHERE g < 3;
SELECT COUNT(*) FROM t WHERE g > 5;
SELECT g FROM t WHERE id > (SELECT MIN(id) FROM t) LIMIT 3;
SELECT id FROM t AS a WHERE g = (SELECT MAX(g) FROM t AS b WHERE b.id < a.id) LIMIT 2;
BEGIN;
INSERT INTO t VALUES (0, 9, 'z');
SELECT id FROM t LIMIT 2;
SELECT COUNT(*), MAX(g) FROM t;
ROLLBACK;
SELECT id FROM t LIMIT 1;
