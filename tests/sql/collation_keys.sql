-- Keys over a utf8mb4_general_ci column (issue 38 item 6): PRIMARY KEY, UNIQUE and B-tree indexes key by the collation's weight string, so 'a', 'A', 'á', 'a ' (PAD SPACE) are one key, as in MySQL.
-- Every SELECT / error here was checked against MariaDB 10.11 with the same schema (its utf8mb4_general_ci has MySQL's weights; the database there was created utf8mb4_bin, Tributary's default). EXPLAIN lines are Tributary's own: they show the key path is taken.
CREATE DATABASE ck;
USE ck;
CREATE TABLE u (id INT PRIMARY KEY, c VARCHAR(10) COLLATE utf8mb4_general_ci, b VARCHAR(10) COLLATE utf8mb4_bin, n INT, UNIQUE KEY u (c), KEY kb (b));
-- UNIQUE: equal under the collation is a duplicate; the message shows the new row's value (MySQL 8 names the key 'u.u', MariaDB and Tributary 'u'). A multi-row INSERT that fails inserts nothing.
INSERT INTO u VALUES (1, 'a', 'a', 0);
INSERT INTO u VALUES (2, 'A', 'A', 0);
INSERT INTO u VALUES (3, 'a ', 'a ', 0);
INSERT INTO u VALUES (4, 'á', 'á', 0);
INSERT INTO u VALUES (5, 'b', 'b', 0), (6, 'B', 'B', 0);
INSERT INTO u VALUES (7, NULL, NULL, 0), (8, NULL, 'A', 0), (9, 'ß', 's', 0), (10, 'c', 'c', 0);
INSERT INTO u VALUES (11, 'S', 'x', 0);
SELECT id, c FROM u ORDER BY id;
-- Lookups through the ci index: equality, PAD SPACE, IN, ranges in the collation's order; a binary comparison over the ci column (its key range is a superset, the row re-checked) and a ci comparison over a binary column (no key range: scanned).
SELECT id FROM u WHERE c = 'A';
EXPLAIN SELECT id FROM u WHERE c = 'A';
SELECT id FROM u WHERE c = 'Á  ';
SELECT id FROM u WHERE c = 'A' COLLATE utf8mb4_bin;
EXPLAIN SELECT id FROM u WHERE c = 'A' COLLATE utf8mb4_bin;
SELECT id FROM u WHERE c = 'a' COLLATE utf8mb4_bin;
SELECT id FROM u WHERE c IN ('A', 'C') ORDER BY id;
SELECT id FROM u WHERE c BETWEEN 'A' AND 'B' ORDER BY id;
EXPLAIN SELECT id FROM u WHERE c BETWEEN 'A' AND 'B' ORDER BY id;
SELECT id FROM u WHERE c > 'a' ORDER BY id;
SELECT id FROM u WHERE c >= 'B' AND c < 'SS' ORDER BY id;
SELECT id FROM u WHERE c > 'a' COLLATE utf8mb4_bin ORDER BY id;
EXPLAIN SELECT id FROM u WHERE c > 'a' COLLATE utf8mb4_bin ORDER BY id;
SELECT id FROM u WHERE b = 'a' COLLATE utf8mb4_general_ci ORDER BY id;
EXPLAIN SELECT id FROM u WHERE b = 'a' COLLATE utf8mb4_general_ci ORDER BY id;
SELECT id FROM u WHERE b > 'a' COLLATE utf8mb4_general_ci ORDER BY id;
SELECT id FROM u WHERE b = 'A' ORDER BY id;
SELECT c FROM u WHERE c IS NOT NULL ORDER BY c;
SELECT c, COUNT(*) FROM u GROUP BY c ORDER BY c;
-- UPDATE to a value equal under the collation keeps the entry; to another row's value is 1062. ON DUPLICATE KEY UPDATE and REPLACE find the row through the collation.
UPDATE u SET c = 'A' WHERE id = 1;
SELECT id, c FROM u WHERE c = 'a';
UPDATE u SET c = 'b ' WHERE id = 1;
UPDATE u SET c = 'Ç' WHERE id = 1;
SELECT id, c FROM u WHERE c = 'c' ORDER BY id;
INSERT INTO u VALUES (12, 'B', 'z', 0) ON DUPLICATE KEY UPDATE n = n + 1, b = 'dup';
SELECT id, c, b, n FROM u WHERE c = 'b';
REPLACE INTO u VALUES (13, 'C', 'r', 0);
SELECT id, c, b FROM u WHERE c = 'c' ORDER BY id;
DELETE FROM u WHERE c = 'C';
SELECT COUNT(*) FROM u WHERE c = 'c';
INSERT INTO u VALUES (14, 'c', 'c', 0);
-- PRIMARY KEY over a ci column: the row's storage key is the weight string; the value shown is the stored text.
CREATE TABLE p (c VARCHAR(10) COLLATE utf8mb4_general_ci PRIMARY KEY, n INT);
INSERT INTO p VALUES ('ä', 1);
INSERT INTO p VALUES ('A', 2);
INSERT INTO p VALUES ('a   ', 2);
INSERT INTO p VALUES ('b', 2), ('Ab', 3), ('ab ', 4);
INSERT INTO p VALUES ('B', 5) ON DUPLICATE KEY UPDATE n = n + 10;
SELECT c, n FROM p ORDER BY c;
SELECT c, n FROM p WHERE c = 'AB';
EXPLAIN SELECT c, n FROM p WHERE c = 'AB';
SELECT c, n FROM p WHERE c = 'A' COLLATE utf8mb4_bin;
SELECT c, n FROM p WHERE c IN ('B', 'AB ') ORDER BY n;
SELECT c, n FROM p WHERE c >= 'A' AND c < 'B' ORDER BY n;
EXPLAIN SELECT c, n FROM p WHERE c >= 'A' AND c < 'B' ORDER BY n;
SELECT c FROM p WHERE c BETWEEN 'AA' AND 'Z' ORDER BY c;
REPLACE INTO p VALUES ('AB', 9);
SELECT c, n FROM p ORDER BY c;
UPDATE p SET c = 'Ä' WHERE c = 'a';
SELECT c, n FROM p ORDER BY c;
SELECT c FROM p WHERE c > 'A' COLLATE utf8mb4_bin ORDER BY c;
EXPLAIN SELECT c FROM p WHERE c > 'A' COLLATE utf8mb4_bin ORDER BY c;
SELECT c FROM p WHERE c = 'ä' COLLATE utf8mb4_bin;
EXPLAIN SELECT c FROM p WHERE c = 'ä' COLLATE utf8mb4_bin;
UPDATE p SET c = 'B' WHERE n = 1;
UPDATE p SET n = n + 100 WHERE c = 'AB';
DELETE FROM p WHERE c = 'B ';
SELECT c, n FROM p ORDER BY c;
SELECT DISTINCT c FROM p ORDER BY c;
SELECT x.c, y.n FROM p x JOIN p y ON x.c = y.c ORDER BY x.c;
-- A composite primary key with a ci part.
CREATE TABLE q (c VARCHAR(10) COLLATE utf8mb4_general_ci, k INT, v INT, PRIMARY KEY (c, k));
INSERT INTO q VALUES ('a', 1, 1), ('A', 2, 2), ('b', 1, 3);
INSERT INTO q VALUES ('Á', 1, 4);
SELECT c, k, v FROM q WHERE c = 'a' ORDER BY k;
SELECT c, k, v FROM q WHERE c = 'a' AND k = 2;
-- DDL: UNIQUE over a ci column with equal values fails with 1062 and changes nothing; MODIFY of an indexed column to / from a ci collation rebuilds its index under the new collation (1062 on a collision, the ALTER undone).
CREATE TABLE w (id INT PRIMARY KEY, c VARCHAR(10) COLLATE utf8mb4_bin, d VARCHAR(10) COLLATE utf8mb4_general_ci);
-- (MariaDB's ALTER shows 'NULL' as the duplicate entry of a rebuilt index; Tributary shows the value, as MySQL 8 does. Which of two equal values a build reports is its row order's.)
INSERT INTO w VALUES (1, 'a', 'x'), (2, 'A', 'X'), (3, 'b', 'y');
CREATE UNIQUE INDEX wc ON w (c);
ALTER TABLE w MODIFY c VARCHAR(10) COLLATE utf8mb4_general_ci;
SELECT id FROM w WHERE c = 'A' COLLATE utf8mb4_bin;
ALTER TABLE w ADD UNIQUE wd (d);
CREATE UNIQUE INDEX wd2 ON w (d);
SELECT id, c, d FROM w ORDER BY id;
UPDATE w SET c = 'B' WHERE id = 2;
ALTER TABLE w MODIFY c VARCHAR(10) COLLATE utf8mb4_general_ci;
-- Binary collations are NO PAD in Tributary (docs/COMPATIBILITY.md): 'b ' is not 'b' under utf8mb4_bin (MariaDB's utf8mb4_bin is PAD SPACE and says 1062).
INSERT INTO w VALUES (4, 'b ', 'z');
SELECT id, c FROM w WHERE c = 'B' ORDER BY id;
CREATE INDEX wdx ON w (d);
SELECT id FROM w WHERE d = 'X' ORDER BY id;
ALTER TABLE w MODIFY d VARCHAR(10) COLLATE utf8mb4_bin;
SELECT id FROM w WHERE d = 'X' ORDER BY id;
ALTER TABLE w MODIFY c VARCHAR(10) COLLATE utf8mb4_bin;
INSERT INTO w VALUES (5, 'B', 'v');
SELECT id, c FROM w WHERE c = 'b' ORDER BY id;
-- Joins: a binary equality against a ci primary key (a lookup join probes the ci key, a superset, and re-checks), and under the ci collation; a full-text search that returns a ci primary key reads it from the row, not from the key (which holds weights).
CREATE TABLE x (id INT PRIMARY KEY, b VARCHAR(10) COLLATE utf8mb4_bin);
INSERT INTO x VALUES (1, 'A'), (2, 'a'), (3, 'ä'), (4, 'q');
CREATE TABLE y (c VARCHAR(10) COLLATE utf8mb4_general_ci PRIMARY KEY, n INT);
INSERT INTO y VALUES ('a', 1), ('Q', 2);
SELECT x.id, y.c FROM x JOIN y ON x.b = y.c ORDER BY x.id;
EXPLAIN SELECT x.id, y.c FROM x JOIN y ON x.b = y.c ORDER BY x.id;
SELECT x.id, y.c FROM x JOIN y ON x.b COLLATE utf8mb4_general_ci = y.c ORDER BY x.id;
SELECT x.id, y.c FROM x LEFT JOIN y ON y.c = x.b ORDER BY x.id;
CREATE TABLE f (c VARCHAR(10) COLLATE utf8mb4_general_ci PRIMARY KEY, body TEXT, FULLTEXT KEY fb (body));
INSERT INTO f VALUES ('Abc', 'hello world'), ('b', 'other text');
SELECT c FROM f WHERE MATCH(body) AGAINST('hello');
-- Changing the collation of a primary-key column would re-key every row: refused (1235), never half done.
ALTER TABLE y MODIFY c VARCHAR(10) COLLATE utf8mb4_bin;
DROP DATABASE ck;
