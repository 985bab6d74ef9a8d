-- Issue 15: answers that used to look right and were not. Each statement
-- here either gives MySQL's / MatrixOne's answer or a MySQL error naming
-- what is not implemented — never a silent approximation.
CREATE DATABASE c;
USE c;
CREATE TABLE t (id BIGINT PRIMARY KEY, body TEXT, v VECF32(2), c INT);
INSERT INTO t VALUES (1, 'rust database', '[1,2]', 7), (2, 'python web', '[3,4]', 1), (3, 'go services', '[0,0]', 7), (4, 'zig', NULL, 7);
-- A CTE shadows the table of the same name (it used to be ignored, and
-- the query read the base table named t). UNION and derived tables are
-- evaluated (issue 9).
WITH t AS (SELECT 1 a) SELECT COUNT(*) FROM t;
SELECT id FROM t UNION SELECT id FROM t;
SELECT id FROM (SELECT id FROM t) x;
-- Clauses the engine does not evaluate are refused, naming them.
SELECT COUNT(*) OVER () FROM t;
SELECT id FROM t WHERE body LIKE 'r!%' ESCAPE '!';
SELECT id FROM t AS q(a, b, c2, d);
SELECT c, COUNT(*) FROM t GROUP BY c WITH ROLLUP;
-- Vector arithmetic is element-wise (MatrixOne semantics).
SELECT id, v + v, v - 1, v * 2, 2 * v, v / 2, v - '[1,1]' FROM t ORDER BY id;
SELECT 1 - v FROM t;
SELECT v / 0 FROM t;
SELECT v + '[1,2,3]' FROM t;
-- MATCH needs a FULLTEXT index on exactly its columns (MySQL 1191).
SELECT id FROM t WHERE MATCH(body) AGAINST('rust');
CREATE FULLTEXT INDEX ft ON t(body);
SELECT id FROM t WHERE MATCH(body) AGAINST('rust');
SELECT id FROM t WHERE MATCH(body) AGAINST('rust') = 0 ORDER BY id;
-- A filtered vector search returns LIMIT rows whenever that many pass.
CREATE INDEX vi USING HNSW ON t(v) OP_TYPE 'vector_l2_ops';
SELECT id FROM t WHERE c = 7 ORDER BY l2_distance(v, '[1,2]') LIMIT 3;
SELECT id FROM t WHERE c = 7 ORDER BY l2_distance(v, '[1,2]') LIMIT 2 OFFSET 1;
SELECT id FROM t ORDER BY l2_distance(v, '[0,0]') LIMIT 4294967296;
-- Executable comments run as MySQL runs them; newer versions are skipped.
/*!40100 SET @@SQL_MODE='' */;
SELECT /*!40001 SQL_NO_CACHE */ COUNT(*) FROM t;
SELECT 1 /*!99999 + 1 */;
-- DATE, DECIMAL(p,s) and sized integers keep MySQL's types and ranges.
CREATE TABLE ty (id INT PRIMARY KEY, d DATE, p DECIMAL(6,2), ti TINYINT, u INT UNSIGNED, b BOOL);
INSERT INTO ty VALUES (1, '2024-01-05 10:11:12', 1.005, 127, 4294967295, 5);
INSERT INTO ty VALUES (2, '2024-02-29', '-2.5', -128, 0, 0);
SELECT id, d, p, ti, u, b FROM ty ORDER BY id;
SELECT SUM(p), AVG(p), p * 2, p + 1 FROM ty GROUP BY p ORDER BY p;
INSERT INTO ty (id, p) VALUES (3, 10000);
INSERT INTO ty (id, ti) VALUES (3, 128);
INSERT INTO ty (id, u) VALUES (3, -1);
CREATE TABLE wide (p DECIMAL(30,2));
SELECT CAST(1.005 AS DECIMAL(10,2)), CAST('2024-01-05 10:00' AS DATE), CAST('abcdef' AS CHAR(3)), CAST(1.5 AS SIGNED), CAST(-1.5 AS SIGNED), CAST('12abc' AS SIGNED);
SELECT CAST(-1 AS UNSIGNED);
SELECT CAST(1 AS JSON);
SHOW CREATE TABLE ty;
-- UPDATE/DELETE honour ORDER BY and LIMIT (DELETE … LIMIT used to delete every row).
CREATE TABLE q (id INT PRIMARY KEY, n INT);
INSERT INTO q VALUES (1, 30), (2, 10), (3, 20), (4, 40);
DELETE FROM q ORDER BY n LIMIT 1;
SELECT id FROM q ORDER BY id;
UPDATE q SET n = 0 ORDER BY n DESC LIMIT 2;
SELECT id, n FROM q ORDER BY id;
DELETE FROM q LIMIT 1;
SELECT COUNT(*) FROM q;
INSERT INTO q VALUES (5, 1) AS nw (a, b) ON DUPLICATE KEY UPDATE n = a;
SELECT id FROM q ORDER BY n NULLS LAST;
-- System and user variables.
SELECT @@version_comment, @@autocommit, @@transaction_isolation, @@session.sql_mode;
SET @a = 5, @b = @@max_allowed_packet;
SELECT @a + 1, @b, @unset;
SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ;
SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED;
SET sql_mode = 'ANSI_QUOTES';
SET time_zone = '+08:00';
SET NAMES latin1;
SET version = '9';
SET no_such_variable = 1;
SET GLOBAL wait_timeout = 5;
START TRANSACTION READ ONLY;
INSERT INTO q VALUES (9, 9);
ROLLBACK;
-- The consistency checker, for every index kind.
CREATE TABLE ck (id INT PRIMARY KEY, k INT, v VECF32(2), b TEXT);
INSERT INTO ck VALUES (1, 5, '[1,1]', 'one'), (2, 5, NULL, NULL), (3, NULL, '[2,2]', 'three');
CREATE INDEX ck_k ON ck(k);
CREATE UNIQUE INDEX ck_u ON ck(b);
CREATE INDEX ck_v USING HNSW ON ck(v) OP_TYPE 'vector_l2_ops';
CREATE FULLTEXT INDEX ck_f ON ck(b);
UPDATE ck SET k = 6, v = '[3,3]' WHERE id = 1;
DELETE FROM ck WHERE id = 3;
CHECK INDEX ck_k ON ck;
ADMIN CHECK INDEX ck ck_u;
CHECK INDEX ck_v ON ck;
CHECK INDEX ck_f ON ck;
ALTER TABLE ck ALTER REINDEX ck_v;
CHECK INDEX ck_v ON ck;
CHECK INDEX nope ON ck;
