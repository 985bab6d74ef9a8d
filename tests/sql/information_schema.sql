-- Issue 10: information_schema as queryable tables (filters, joins,
-- aggregates), computed from the catalog at the statement's snapshot.
CREATE DATABASE isx;
USE isx;
CREATE TABLE owners (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, score DECIMAL(6,2) DEFAULT 1.5);
CREATE TABLE docs (id BIGINT PRIMARY KEY AUTO_INCREMENT, owner_id INT, body TEXT, v VECF32(3), at DATETIME);
CREATE UNIQUE INDEX uname ON owners (name);
CREATE INDEX by_owner ON docs (owner_id);
CREATE INDEX hv USING hnsw ON docs (v) OP_TYPE 'vector_l2_ops';
CREATE FULLTEXT INDEX ft ON docs (body) ASYNC;
CREATE TABLE pairs (a INT, b INT, c INT, PRIMARY KEY (a, b));
CREATE VIEW rich AS SELECT id, name FROM owners WHERE score > 2;
INSERT INTO owners VALUES (1, 'ann', 3), (2, 'bob', 1);
SELECT schema_name, default_character_set_name FROM information_schema.schemata WHERE schema_name IN ('isx', 'information_schema', 'mo_catalog') ORDER BY 1;
SELECT table_name, table_type, engine, table_rows FROM information_schema.tables WHERE table_schema = 'isx' ORDER BY table_name;
SELECT column_name, ordinal_position, column_default, is_nullable, data_type, character_maximum_length, numeric_precision, numeric_scale, column_type, column_key, extra FROM information_schema.columns WHERE table_schema = 'isx' AND table_name IN ('owners', 'docs') ORDER BY table_name, ordinal_position;
SELECT table_name, index_name, non_unique, seq_in_index, column_name, index_type, comment FROM information_schema.statistics WHERE table_schema = 'isx' ORDER BY table_name, index_name, seq_in_index;
SELECT constraint_name, table_name, constraint_type FROM information_schema.table_constraints WHERE table_schema = 'isx' ORDER BY table_name, constraint_name;
SELECT constraint_name, table_name, column_name, ordinal_position FROM information_schema.key_column_usage WHERE table_schema = 'isx' ORDER BY table_name, constraint_name, ordinal_position;
SELECT table_name, view_definition, is_updatable FROM information_schema.views WHERE table_schema = 'isx';
-- Joins and aggregates over it, in any case of names.
SELECT t.TABLE_NAME, COUNT(c.COLUMN_NAME) AS n FROM INFORMATION_SCHEMA.TABLES t JOIN information_schema.COLUMNS c ON c.table_schema = t.table_schema AND c.table_name = t.table_name WHERE t.table_schema = 'isx' GROUP BY t.TABLE_NAME ORDER BY 1;
SELECT table_name FROM information_schema.tables WHERE table_schema = 'isx' AND table_name NOT IN (SELECT table_name FROM information_schema.statistics WHERE table_schema = 'isx' AND index_type = 'HNSW') ORDER BY 1;
SELECT engine, support, transactions, savepoints FROM information_schema.engines;
SELECT character_set_name, default_collate_name, maxlen FROM information_schema.character_sets ORDER BY 1;
SELECT collation_name, character_set_name, id FROM information_schema.collations ORDER BY id;
SELECT COUNT(*) > 5 FROM information_schema.tables WHERE table_schema = 'information_schema';
-- A transaction sees its own DDL; a dropped table is gone.
BEGIN;
CREATE TABLE later (x INT PRIMARY KEY);
SELECT table_name FROM information_schema.tables WHERE table_schema = 'isx' AND table_name = 'later';
ROLLBACK;
DROP TABLE pairs;
SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = 'isx' AND table_name = 'pairs';
-- Read-only: DDL and DML are refused, nothing changes.
INSERT INTO information_schema.tables (table_name) VALUES ('x');
DELETE FROM information_schema.schemata;
CREATE TABLE information_schema.t (a INT);
DROP DATABASE information_schema;
CREATE DATABASE information_schema;
SELECT * FROM information_schema.nosuch;
USE information_schema;
SHOW TABLES;
SELECT COUNT(*) FROM schemata WHERE schema_name = 'isx';
USE isx;
DROP DATABASE isx;
SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'isx';
-- SHOW forms over the same rows, with MySQL's column names.
SHOW ENGINES;
SHOW COLLATION;
SHOW COLLATION LIKE 'utf8mb4%';
SHOW CHARSET;
SHOW CHARACTER SET LIKE 'utf8%';
SHOW SESSION VARIABLES LIKE 'version_comment';
-- The process list: this session, running this very statement.
SELECT USER, HOST, COMMAND, STATE, INFO FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID();
SELECT COUNT(*) FROM information_schema.PROCESSLIST p JOIN information_schema.PROCESSLIST q ON p.ID = q.ID WHERE p.ID = CONNECTION_ID();
