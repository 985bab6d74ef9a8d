-- Bad input gives a clear error with a MySQL code; nothing is written.
SELECT * FROM nowhere;
CREATE DATABASE e;
USE e;
SELECT * FROM nowhere;
SELEC 1;
USE nodb;
CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(3), v VECF32(2), n INT NOT NULL);
INSERT INTO t VALUES (1, 'abcd', '[1,2]', 1);
INSERT INTO t VALUES (1, 'ab', '[1,2,3]', 1);
INSERT INTO t VALUES (1, 'ab', '[1,nan]', 1);
INSERT INTO t VALUES (1, 'ab', '[1,2]', NULL);
INSERT INTO t VALUES (1, 'ab', '[1,2]', 1), (1, 'cd', '[3,4]', 2);
SELECT count(*) FROM t;
INSERT INTO t VALUES (1, 'ab', '[1,2]', 1);
INSERT INTO t VALUES (1, 'xy', '[1,2]', 1);
SELECT nosuch FROM t;
INSERT INTO t (id, name) VALUES (2, 'x');
INSERT INTO t VALUES (2);
SELECT l2_distance(v, '[1]') FROM t;
SELECT nosuchfn(1);
CREATE TABLE t (id INT);
DROP INDEX nope ON t;
SELECT add_fault_point('x', ':::', 'echo', 0, '');
SELECT * FROM t;
-- A value error names the statement's row it is in (MySQL counts from 1).
INSERT INTO t VALUES (7, 'ok', '[1,2]', 1), (8, 'toolong', '[1,2]', 2);
INSERT INTO t VALUES (7, 'ok', '[1,2]', 1), (8, 'ok', '[1,2]', 2), (9, 'ok', '[1,2]', 99999999999);
INSERT INTO t VALUES (7, 'ok', '[1,2]', 1), (8);
CREATE TABLE u (id INT PRIMARY KEY, n INT);
INSERT INTO u VALUES (1, 1), (2, 2), (3, 2147483647);
UPDATE u SET n = n + 1 WHERE id >= 2;
SELECT * FROM u ORDER BY id;
-- Writes name the missing database (1049) or the missing table (1146).
INSERT INTO nodb.t VALUES (1);
UPDATE nodb.t SET n = 1;
DELETE FROM nodb.t;
INSERT INTO nosuch VALUES (1);
