-- Issue 9: the query engine. Joins, subqueries, derived tables, CTEs,
-- UNION, GROUP BY / HAVING / ORDER BY forms, EXPLAIN; with NULLs, empty
-- tables and duplicates. Answers were checked against SQLite / MySQL rules.
CREATE DATABASE q;
USE q;
CREATE TABLE owners (id INT PRIMARY KEY, name VARCHAR(20), team VARCHAR(10));
CREATE TABLE docs (id INT PRIMARY KEY, owner_id INT, title VARCHAR(40), score INT);
CREATE TABLE tags (doc_id INT, tag VARCHAR(10));
CREATE TABLE empty_t (id INT PRIMARY KEY, v INT);
INSERT INTO owners VALUES (1, 'ann', 'red'), (2, 'bob', 'blue'), (3, 'cy', 'red'), (4, 'dee', NULL);
INSERT INTO docs VALUES (10, 1, 'rust intro', 5), (11, 1, 'rust deep', 9), (12, 2, 'go tour', 7), (13, NULL, 'orphan', 3), (14, 9, 'dangling', 1), (15, 3, 'zig', NULL);
INSERT INTO tags VALUES (10, 'lang'), (10, 'lang'), (11, 'lang'), (12, 'web'), (NULL, 'none');
-- Inner joins: ON, USING, comma + WHERE, self-join, three tables.
SELECT d.id, o.name FROM docs d JOIN owners o ON d.owner_id = o.id ORDER BY d.id;
SELECT d.id, o.name FROM docs d INNER JOIN owners o ON o.id = d.owner_id AND d.score > 6 ORDER BY d.id;
SELECT d.id, o.name FROM docs d, owners o WHERE d.owner_id = o.id AND o.team = 'red' ORDER BY d.id;
SELECT * FROM docs JOIN tags ON docs.id = tags.doc_id ORDER BY docs.id, tags.tag;
SELECT a.name, b.name FROM owners a JOIN owners b ON a.team = b.team AND a.id < b.id ORDER BY 1, 2;
SELECT o.name, d.title, t.tag FROM owners o JOIN docs d ON d.owner_id = o.id JOIN tags t ON t.doc_id = d.id ORDER BY 1, 2, 3;
-- Outer joins: unmatched rows get NULLs; WHERE after the join, ON before.
SELECT o.name, d.id FROM owners o LEFT JOIN docs d ON d.owner_id = o.id ORDER BY o.name, d.id;
SELECT o.name, d.id FROM owners o LEFT JOIN docs d ON d.owner_id = o.id AND d.score > 6 ORDER BY o.name, d.id;
SELECT o.name, d.id FROM owners o LEFT JOIN docs d ON d.owner_id = o.id WHERE d.id IS NULL ORDER BY o.name;
SELECT o.name, d.id FROM owners o RIGHT JOIN docs d ON d.owner_id = o.id ORDER BY d.id;
SELECT COUNT(*) FROM owners CROSS JOIN docs;
SELECT o.name, e.v FROM owners o LEFT JOIN empty_t e ON e.id = o.id ORDER BY o.name;
SELECT COUNT(*) FROM owners o JOIN empty_t e ON e.id = o.id;
-- USING: the column appears once in *, and unqualified.
SELECT * FROM owners JOIN (SELECT owner_id AS id, title FROM docs) x USING (id) ORDER BY id, title;
SELECT id, name, title FROM owners LEFT JOIN (SELECT owner_id AS id, title FROM docs) x USING (id) ORDER BY id, title;
-- Subqueries: IN, NOT IN with NULLs, EXISTS, scalar, correlated.
SELECT id FROM owners WHERE id IN (SELECT owner_id FROM docs) ORDER BY id;
SELECT id FROM owners WHERE id NOT IN (SELECT owner_id FROM docs) ORDER BY id;
SELECT id FROM owners WHERE id NOT IN (SELECT owner_id FROM docs WHERE owner_id IS NOT NULL) ORDER BY id;
SELECT id FROM owners WHERE id IN (SELECT id FROM empty_t);
SELECT id FROM owners WHERE id NOT IN (SELECT id FROM empty_t) ORDER BY id;
SELECT name FROM owners o WHERE EXISTS (SELECT 1 FROM docs d WHERE d.owner_id = o.id AND d.score > 6) ORDER BY name;
SELECT name FROM owners o WHERE NOT EXISTS (SELECT 1 FROM docs d WHERE d.owner_id = o.id) ORDER BY name;
SELECT name, (SELECT MAX(score) FROM docs d WHERE d.owner_id = o.id) AS best FROM owners o ORDER BY name;
SELECT title FROM docs WHERE score > (SELECT AVG(score) FROM docs) ORDER BY title;
SELECT title FROM docs WHERE score = (SELECT MAX(score) FROM docs WHERE owner_id = 1);
SELECT (SELECT name FROM owners WHERE id = 99) AS nobody;
SELECT name FROM owners o WHERE (SELECT COUNT(*) FROM docs d WHERE d.owner_id = o.id) = 2;
SELECT name FROM owners o WHERE o.id IN (SELECT d.owner_id FROM docs d WHERE d.score > (SELECT AVG(score) FROM docs x WHERE x.owner_id = o.id) - 3) ORDER BY name;
-- Derived tables and CTEs.
SELECT t.owner_id, t.n FROM (SELECT owner_id, COUNT(*) AS n FROM docs GROUP BY owner_id) AS t WHERE t.n > 1;
SELECT o.name, s.total FROM owners o JOIN (SELECT owner_id, SUM(score) AS total FROM docs GROUP BY owner_id) s ON s.owner_id = o.id ORDER BY s.total DESC;
WITH busy AS (SELECT owner_id FROM docs GROUP BY owner_id HAVING COUNT(*) > 1) SELECT name FROM owners WHERE id IN (SELECT owner_id FROM busy);
WITH a AS (SELECT id, team FROM owners), b AS (SELECT team, COUNT(*) AS n FROM a GROUP BY team) SELECT team, n FROM b ORDER BY team;
WITH c(x, y) AS (SELECT id, name FROM owners) SELECT y FROM c WHERE x = 2;
WITH docs AS (SELECT 1 AS id) SELECT COUNT(*) FROM docs;
-- UNION and UNION ALL; ORDER BY / LIMIT apply to the union.
SELECT team FROM owners UNION SELECT tag FROM tags ORDER BY 1;
SELECT owner_id FROM docs UNION ALL SELECT id FROM owners ORDER BY owner_id LIMIT 4;
SELECT 1 UNION SELECT 1 UNION ALL SELECT 1;
(SELECT id FROM owners ORDER BY id DESC LIMIT 2) UNION ALL (SELECT id FROM docs ORDER BY id LIMIT 1);
-- DISTINCT, GROUP BY / HAVING / ORDER BY over expressions, aliases, ordinals.
SELECT DISTINCT doc_id, tag FROM tags ORDER BY doc_id, tag;
SELECT score % 2 AS parity, COUNT(*) FROM docs GROUP BY parity ORDER BY parity;
SELECT owner_id, COUNT(*) AS c FROM docs GROUP BY 1 HAVING c > 1;
SELECT owner_id, SUM(score) AS s FROM docs GROUP BY owner_id HAVING s + 1 > 10 ORDER BY s DESC;
SELECT o.team, COUNT(d.id) AS n FROM owners o LEFT JOIN docs d ON d.owner_id = o.id GROUP BY o.team ORDER BY n DESC, o.team;
SELECT title FROM docs ORDER BY score * -1 LIMIT 2;
-- INSERT … SELECT, UPDATE / DELETE with subqueries.
CREATE TABLE archive (id INT PRIMARY KEY, title VARCHAR(40));
INSERT INTO archive SELECT d.id, d.title FROM docs d LEFT JOIN owners o ON o.id = d.owner_id WHERE o.id IS NULL;
SELECT * FROM archive ORDER BY id;
UPDATE docs SET score = 0 WHERE owner_id IN (SELECT id FROM owners WHERE team = 'blue');
DELETE FROM docs WHERE id IN (SELECT id FROM archive);
SELECT id, score FROM docs ORDER BY id;
-- Bad input: each a MySQL error naming the culprit, nothing written.
SELECT id FROM docs JOIN owners ON docs.owner_id = owners.id;
SELECT nope FROM docs JOIN owners ON docs.owner_id = owners.id;
SELECT d.id FROM docs d JOIN owners o ON o.nope = d.id;
SELECT d.id FROM docs d JOIN owners o ON o.id = d.owner_id WHERE id > 1;
SELECT id FROM owners ORDER BY nope;
SELECT id FROM owners WHERE id = (SELECT id FROM docs);
SELECT id FROM owners WHERE id IN (SELECT id, title FROM docs);
SELECT id FROM owners UNION SELECT id, name FROM owners;
SELECT * FROM (SELECT id FROM owners);
SELECT * FROM owners JOIN owners;
SELECT * FROM owners FULL OUTER JOIN docs ON 1 = 1;
WITH RECURSIVE r AS (SELECT 1 AS n) SELECT n FROM r;
SELECT ROW_NUMBER() OVER (ORDER BY id) FROM owners;
UPDATE docs SET score = (SELECT 1) WHERE id = 10;
SELECT * FROM (SELECT 1 AS a, 2 AS a) x;
-- EXPLAIN shows the operator tree.
EXPLAIN SELECT d.title, o.name FROM docs d JOIN owners o ON d.owner_id = o.id WHERE o.id = 1;
EXPLAIN SELECT name FROM owners o WHERE EXISTS (SELECT 1 FROM docs d WHERE d.owner_id = o.id);
EXPLAIN SELECT id FROM owners UNION SELECT owner_id FROM docs ORDER BY 1;
-- Views: a stored query, read like a table (joins, filters), never written through.
CREATE VIEW owner_stats AS SELECT o.id, o.name, COUNT(d.id) AS docs, SUM(d.score) AS total FROM owners o LEFT JOIN docs d ON d.owner_id = o.id GROUP BY o.id, o.name;
SELECT * FROM owner_stats ORDER BY id;
SELECT s.name, d.title FROM owner_stats s JOIN docs d ON d.owner_id = s.id WHERE s.docs > 1 ORDER BY d.title;
CREATE VIEW red (who) AS SELECT name FROM owners WHERE team = 'red';
SELECT who FROM red ORDER BY who;
DESCRIBE red;
SHOW TABLES;
CREATE VIEW red AS SELECT 1;
CREATE OR REPLACE VIEW red (who) AS SELECT name FROM owners WHERE team = 'blue';
SELECT who FROM red;
INSERT INTO red VALUES ('x');
CREATE VIEW bad AS SELECT nope FROM owners;
CREATE VIEW bad2 (a, b) AS SELECT id FROM owners;
CREATE OR REPLACE VIEW owners AS SELECT 1;
DROP TABLE red;
DROP VIEW owners;
DROP VIEW red, owner_stats;
DROP VIEW red;
DROP VIEW IF EXISTS red;
SELECT * FROM red;
-- CREATE TABLE … AS SELECT takes the query's column names and types.
CREATE TABLE doc_owner AS SELECT d.id, d.title, o.name FROM docs d JOIN owners o ON o.id = d.owner_id;
SELECT * FROM doc_owner ORDER BY id;
DESCRIBE doc_owner;
CREATE TABLE doc_owner2 (x INT) AS SELECT 1;
-- A filter on a derived table's column is not pushed into its source by
-- position (found by tests/query_differential.rs).
SELECT o.id, d.k FROM owners o, (SELECT score AS k, id AS i FROM docs) AS d WHERE d.k = 9 AND o.id = 1;
WITH q AS (SELECT id AS i, score AS k FROM docs) SELECT o.name, q.i FROM owners o JOIN q ON q.k = o.id * 9 ORDER BY q.i;
-- Vector and full-text search inside real queries: filters on a joined
-- table, MATCH joined to another table, and a hybrid of both.
CREATE TABLE notes (id INT PRIMARY KEY, owner_id INT, body TEXT, v VECF32(2));
INSERT INTO notes VALUES (1, 1, 'rust async runtime', '[0,0]'), (2, 1, 'rust borrow checker', '[1,0]'), (3, 2, 'go channels', '[0,1]'), (4, 2, 'rust in production', '[5,5]'), (5, 3, 'zig comptime', '[2,2]'), (6, 4, 'rust and zig', '[0.5,0.5]'), (7, NULL, 'rust orphan', '[0.1,0]');
CREATE FULLTEXT INDEX ft_body ON notes(body);
CREATE INDEX hv USING HNSW ON notes(v) OP_TYPE 'vector_l2_ops';
SELECT n.id, o.name FROM notes n JOIN owners o ON o.id = n.owner_id WHERE o.team = 'red' ORDER BY l2_distance(n.v, '[0,0]') LIMIT 3;
SELECT n.id, o.name FROM notes n LEFT JOIN owners o ON o.id = n.owner_id ORDER BY l2_distance(n.v, '[0,0]'), n.id LIMIT 4;
SELECT n.id, o.name FROM notes n JOIN owners o ON o.id = n.owner_id WHERE MATCH(n.body) AGAINST('rust') ORDER BY n.id;
SELECT o.name, COUNT(*) FROM notes n JOIN owners o ON o.id = n.owner_id WHERE MATCH(n.body) AGAINST('rust') GROUP BY o.name ORDER BY o.name;
SELECT n.id FROM notes n JOIN owners o ON o.id = n.owner_id WHERE MATCH(o.name) AGAINST('ann');
SELECT ft.id, ft.score > 0 AS hit, vk.dist FROM (SELECT id, MATCH(body) AGAINST('rust') AS score FROM notes WHERE MATCH(body) AGAINST('rust')) ft JOIN (SELECT id, l2_distance(v, '[0,0]') AS dist FROM notes ORDER BY dist LIMIT 4) vk ON vk.id = ft.id ORDER BY vk.dist;
EXPLAIN SELECT ft.id FROM (SELECT id FROM notes WHERE MATCH(body) AGAINST('rust')) ft JOIN (SELECT id, l2_distance(v, '[0,0]') AS dist FROM notes ORDER BY dist LIMIT 4) vk ON vk.id = ft.id;
-- Text literals compared with DATE / DATETIME columns (parsed once at plan
-- time; a literal that is not a date compares as NULL, as before).
CREATE TABLE ev (id INT PRIMARY KEY, d DATE, ts DATETIME);
INSERT INTO ev VALUES (1, '2024-01-15', '2024-01-15 10:00:00'), (2, '2024-03-01', '2024-03-01 00:00:00'), (3, '2025-06-30', NULL), (4, NULL, '2023-12-31 23:59:59');
SELECT id FROM ev WHERE d <= '2024-03-01' ORDER BY id;
SELECT id FROM ev WHERE '2024-02-01' < d ORDER BY id;
SELECT id FROM ev WHERE d BETWEEN '2024-01-01' AND '2024-12-31' ORDER BY id;
SELECT id FROM ev WHERE ts >= '2024-03-01' ORDER BY id;
SELECT id FROM ev WHERE ts > '2024-01-15 09:59:59' AND ts < '2024-01-15 10:00:01';
SELECT id FROM ev WHERE d > 'not a date';
SELECT e.id, o.name FROM ev e JOIN owners o ON o.id = e.id WHERE e.d >= '2024-03-01' ORDER BY e.id;
-- INTERSECT / EXCEPT (MySQL 8.0.31+): distinct rows, NULLs equal.
SELECT owner_id FROM docs INTERSECT SELECT id FROM owners ORDER BY 1;
SELECT id FROM owners EXCEPT SELECT owner_id FROM docs ORDER BY 1;
SELECT team FROM owners EXCEPT SELECT 'red' ORDER BY 1;
SELECT team FROM owners INTERSECT SELECT NULL;
SELECT id FROM owners INTERSECT ALL SELECT id FROM owners;
-- Comma joins run in the order a small cost model picks (table sizes,
-- WHERE's constant filters, equalities on primary keys); `*` still lists
-- columns in FROM order.
SELECT * FROM docs d, owners o WHERE o.id = d.owner_id AND o.name = 'bob';
SELECT d.id, o.name, t.tag FROM tags t, docs d, owners o WHERE t.doc_id = d.id AND d.owner_id = o.id AND o.name = 'ann' ORDER BY d.id, t.tag;
EXPLAIN SELECT d.id FROM tags t, docs d, owners o WHERE t.doc_id = d.id AND d.owner_id = o.id AND o.name = 'ann';
-- 1,000 facts: the point filter on facts' key beats the name filter on the
-- 3-row table, so the join starts from facts and reads dims and cats by key.
CREATE TABLE digits (i INT PRIMARY KEY);
INSERT INTO digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9);
CREATE TABLE facts (id INT PRIMARY KEY, dim_id INT, v INT);
INSERT INTO facts SELECT a.i * 100 + b.i * 10 + c.i, c.i, a.i FROM digits a, digits b, digits c;
CREATE TABLE dims (id INT PRIMARY KEY, cat INT);
INSERT INTO dims SELECT i, i % 3 FROM digits;
CREATE TABLE cats (id INT PRIMARY KEY, name VARCHAR(10));
INSERT INTO cats VALUES (0, 'zero'), (1, 'one'), (2, 'two');
SELECT f.id, f.v, d.id, c.name FROM cats c, dims d, facts f WHERE d.cat = c.id AND f.dim_id = d.id AND c.name = 'one' AND f.id = 547;
SELECT COUNT(*), SUM(f.v) FROM cats c, dims d, facts f WHERE d.cat = c.id AND f.dim_id = d.id AND c.name = 'one';
EXPLAIN SELECT f.id FROM cats c, dims d, facts f WHERE d.cat = c.id AND f.dim_id = d.id AND c.name = 'one' AND f.id = 547;
DROP TABLE digits, facts, dims, cats;
