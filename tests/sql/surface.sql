-- Issue 10: statements clients and dump tools send. Index definitions
-- inside CREATE TABLE (MatrixOne's HNSW / full-text options included),
-- SHOW CREATE TABLE read back by CREATE TABLE, SHOW FULL TABLES,
-- ALTER TABLE … DISABLE / ENABLE KEYS.
CREATE DATABASE surf;
USE surf;
CREATE TABLE docs (id INT PRIMARY KEY, owner INT, body TEXT, title VARCHAR(30), v VECF32(3), KEY k_owner (owner), UNIQUE KEY uq_title (title), FULLTEXT ft (body) ASYNC, KEY hv USING hnsw (v) OP_TYPE 'vector_l2_ops' M 16 EF_CONSTRUCTION 64, INDEX (owner, title));
SHOW CREATE TABLE docs;
SHOW INDEX FROM docs;
INSERT INTO docs VALUES (1, 7, 'rust engines', 'a', '[1,0,0]'), (2, 7, 'go tour', 'b', '[0,1,0]'), (3, 8, 'rust deep', 'c', '[0,0,1]');
SET iscp_wait_fresh = 1;
SELECT id FROM docs WHERE MATCH(body) AGAINST('rust') ORDER BY id;
SELECT id FROM docs ORDER BY l2_distance(v, '[0.9,0.1,0]') LIMIT 1;
INSERT INTO docs VALUES (4, 9, 'dup', 'a', NULL);
-- The text SHOW CREATE TABLE printed creates the same table again.
CREATE TABLE copy (
  `id` int NOT NULL,
  `owner` int DEFAULT NULL,
  `body` text DEFAULT NULL,
  `title` varchar(30) DEFAULT NULL,
  `v` vecf32(3) DEFAULT NULL,
  PRIMARY KEY (`id`),
  KEY `k_owner` (`owner`),
  UNIQUE KEY `uq_title` (`title`),
  FULLTEXT KEY `ft` (`body`) ASYNC,
  KEY `hv` USING hnsw (`v`) OP_TYPE 'vector_l2_ops' M 16 EF_CONSTRUCTION 64 EF_SEARCH 64
);
SHOW CREATE TABLE copy;
-- Bad index definitions fail the whole statement: no table is left.
CREATE TABLE bad (id INT PRIMARY KEY, v VECF32(2), KEY hv USING hnsw (v) OP_TYPE 'nope');
CREATE TABLE bad (id INT PRIMARY KEY, KEY k (missing));
CREATE TABLE bad (KEY k (id));
-- Commas and parentheses inside quotes do not split the list (comments: a unit test in parse.rs).
CREATE TABLE cm (id INT PRIMARY KEY, /* a, (b */ v VECF32(2), note VARCHAR(9) DEFAULT 'x, (y', KEY hv USING hnsw (v) OP_TYPE 'vector_l2_ops');
SHOW CREATE TABLE cm;
DROP TABLE cm;
SHOW FULL TABLES;
CREATE VIEW titles AS SELECT title FROM docs;
SHOW FULL TABLES;
SHOW FULL TABLES FROM information_schema;
ALTER TABLE docs DISABLE KEYS;
SHOW WARNINGS;
ALTER TABLE docs ENABLE KEYS;
ALTER TABLE nosuch DISABLE KEYS;
-- DROP INDEX IF EXISTS (MariaDB / MatrixOne): a missing index is a warning.
DROP INDEX IF EXISTS nosuch ON docs;
SHOW WARNINGS;
DROP INDEX IF EXISTS k_owner ON docs;
ALTER TABLE docs DROP INDEX IF EXISTS k_owner;
DROP INDEX k_owner ON docs;
DROP INDEX IF EXISTS k ON nosuch;
-- @@global: the value a new session starts with; SET GLOBAL changes it
-- (for new sessions: this one keeps its own).
SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION';
SET autocommit = 0;
SELECT @@sql_mode, @@global.sql_mode, @@session.autocommit, @@global.autocommit, @@global.version_comment, @@GLOBAL.transaction_isolation;
SET autocommit = 1;
SELECT @@global.nosuch;
SET GLOBAL wait_timeout = 10;
SELECT @@global.wait_timeout, @@wait_timeout, @@session.wait_timeout;
SHOW GLOBAL VARIABLES LIKE 'wait_timeout';
SHOW SESSION VARIABLES LIKE 'wait_timeout';
SHOW GLOBAL VARIABLES WHERE Variable_name = 'autocommit';
SET GLOBAL autocommit = 0;
SELECT @@global.autocommit, @@autocommit;
SET GLOBAL version = '9';
SET GLOBAL wait_timeout = -1;
SET GLOBAL wait_timeout = DEFAULT;
SET GLOBAL autocommit = DEFAULT;
SELECT @@global.wait_timeout, @@global.autocommit;
-- SQL-level prepared statements: PREPARE … FROM text or @var, EXECUTE
-- … USING user variables (bound as literals: quotes cannot escape),
-- DEALLOCATE / DROP PREPARE.
PREPARE s1 FROM 'SELECT id, title FROM docs WHERE owner = ? AND title <> ? ORDER BY id';
SET @o = 7, @t = 'zz''; DROP TABLE docs; --';
EXECUTE s1 USING @o, @t;
SET @o = 8;
EXECUTE s1 USING @o, @t;
EXECUTE s1 USING @o;
EXECUTE s1;
SET @q = 'INSERT INTO docs (id, owner, title) VALUES (?, ?, ?)';
PREPARE ins FROM @q;
SET @i = 50, @n = NULL, @ti = 'prepared';
EXECUTE ins USING @i, @n, @ti;
SELECT id, owner, title FROM docs WHERE id = 50;
PREPARE s1 FROM 'SELECT ? + 1 AS x';
SET @v = 41;
EXECUTE s1 USING @v;
PREPARE bad FROM 'SELEC 1';
PREPARE nest FROM 'EXECUTE s1';
DEALLOCATE PREPARE s1;
EXECUTE s1 USING @v;
DROP PREPARE ins;
DEALLOCATE PREPARE ins;
SELECT COUNT(*) FROM docs;
-- SHOW … LIKE / WHERE filter the rows; a clause a SHOW form does not
-- take is a syntax error, never ignored.
SHOW DATABASES LIKE 'sur%';
SHOW TABLES LIKE 'd%';
SHOW TABLES WHERE Tables_in_surf <> 'docs';
SHOW FULL TABLES WHERE Table_type = 'BASE TABLE' AND Tables_in_surf LIKE 'doc%';
SHOW INDEX FROM docs WHERE Key_name = 'PRIMARY';
SHOW INDEX FROM docs WHERE Nope = 1;
SHOW INDEX FROM docs LIKE 'x';
SHOW VARIABLES WHERE Variable_name IN ('autocommit', 'max_execution_time');
SHOW COLLATION WHERE Charset = 'ascii';
SHOW STATUS WHERE Variable_name = 'none';
SHOW WARNINGS LIMIT 1;
SHOW DATABASES WHERE;
DESCRIBE docs id;
DROP DATABASE surf;
