-- A LIMIT without ORDER BY stops the table scan once it has its rows (the
-- first in primary-key order that pass the WHERE); with ORDER BY,
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
