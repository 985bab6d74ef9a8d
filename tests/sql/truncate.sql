-- TRUNCATE [TABLE] t: rows gone, AUTO_INCREMENT back to 1 (also for a
-- table created with AUTO_INCREMENT = n, as MariaDB and MySQL), 0 rows
-- affected, an implicit commit, errors as MySQL's. The plain-SQL part was
-- checked against MariaDB 10.11; the vector / full-text part is
-- Tributary's (tests/ddl_matrix.rs kills and crashes it at each step).
CREATE DATABASE tr;
USE tr;
CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20), n INT, UNIQUE KEY un (n), KEY kv (v)) AUTO_INCREMENT = 100;
INSERT INTO t (v, n) VALUES ('a', 1), ('b', 2), ('c', 3);
SELECT * FROM t ORDER BY id;
TRUNCATE TABLE t;
SELECT COUNT(*) FROM t;
SELECT * FROM t WHERE v = 'a';
SELECT * FROM t WHERE n = 1;
INSERT INTO t (v, n) VALUES ('a', 1), ('d', 4);
SELECT * FROM t ORDER BY id;
SELECT * FROM t WHERE n = 1;
INSERT INTO t (v, n) VALUES ('e', 4);
SELECT id, v FROM t WHERE v = 'd';
CHECK INDEX un ON t;
CHECK INDEX kv ON t;
-- Without the TABLE keyword, qualified, and again on an empty table.
TRUNCATE tr.t;
TRUNCATE t;
INSERT INTO t (v, n) VALUES ('x', 9);
SELECT * FROM t;
-- An implicit commit: the open transaction's insert is committed, then
-- truncated; ROLLBACK has nothing left to undo.
START TRANSACTION;
INSERT INTO t (v, n) VALUES ('y', 10);
TRUNCATE TABLE t;
ROLLBACK;
SELECT COUNT(*) FROM t;
SET autocommit = 0;
INSERT INTO t (v, n) VALUES ('z', 11);
TRUNCATE TABLE t;
ROLLBACK;
SELECT * FROM t;
SET autocommit = 1;
-- Errors.
TRUNCATE TABLE nosuch;
TRUNCATE TABLE nodb.t;
CREATE VIEW vw AS SELECT id FROM t;
TRUNCATE TABLE vw;
TRUNCATE TABLE t, vw;
-- Under LOCK TABLES: the table must be WRITE-locked (1100 / 1099 as
-- MySQL); a WRITE-locked one is refused with 1192 like other DDL here
-- (MySQL truncates it: a documented difference).
CREATE TABLE u (id INT PRIMARY KEY);
LOCK TABLES t READ;
TRUNCATE TABLE t;
TRUNCATE TABLE u;
LOCK TABLES t WRITE;
TRUNCATE TABLE t;
UNLOCK TABLES;
-- Synchronous full-text and vector indexes answer nothing right after,
-- and the new rows once inserted.
CREATE TABLE docs (id INT PRIMARY KEY, body TEXT, v VECF32(2), FULLTEXT ft (body), KEY hv USING HNSW (v) OP_TYPE 'vector_l2_ops');
INSERT INTO docs VALUES (1, 'rust database', '[0,0]'), (2, 'tea garden', '[5,5]');
SELECT id FROM docs WHERE MATCH(body) AGAINST('rust');
TRUNCATE TABLE docs;
SELECT id FROM docs WHERE MATCH(body) AGAINST('rust');
SELECT id FROM docs ORDER BY l2_distance(v, '[0,0]') LIMIT 1;
INSERT INTO docs VALUES (3, 'rust again', '[1,1]');
SELECT id FROM docs WHERE MATCH(body) AGAINST('rust');
SELECT id FROM docs ORDER BY l2_distance(v, '[0,0]') LIMIT 1;
CHECK INDEX ft ON docs;
CHECK INDEX hv ON docs;
