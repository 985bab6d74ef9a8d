-- Issue 41 item 7: column pruning of join trees (plan/prune.rs). Each join leaf scans only the columns read above it and every reference is renumbered; these queries read columns at every position (first, middle, last, only in a key, only in WHERE, only in ORDER BY / HAVING / a window) across inner, outer, USING, NATURAL, comma and nested joins. Every answer was checked against MariaDB 10.11.
CREATE DATABASE jp;
USE jp;
CREATE TABLE a (id INT PRIMARY KEY, x INT, s VARCHAR(10), y INT, b_id INT);
CREATE TABLE b (id INT PRIMARY KEY, tag VARCHAR(10), w INT, c_id INT);
CREATE TABLE c (id INT PRIMARY KEY, name VARCHAR(10), z INT);
INSERT INTO a VALUES (1, 10, 'p', 100, 1), (2, 20, 'q', 200, 2), (3, 30, 'r', 300, 2), (4, 40, 's', NULL, 9), (5, NULL, 't', 500, NULL);
INSERT INTO b VALUES (1, 'red', 7, 1), (2, 'blue', 8, 2), (3, 'green', 9, NULL);
INSERT INTO c VALUES (1, 'one', 11), (2, 'two', 22), (3, 'three', 33);
-- Only the last column of the right table, only a key column, nothing but COUNT(*).
SELECT c.z FROM a JOIN b ON a.b_id = b.id JOIN c ON b.c_id = c.id ORDER BY c.z, a.id;
SELECT a.id FROM a JOIN b ON a.b_id = b.id ORDER BY a.id;
SELECT COUNT(*) FROM a JOIN b ON a.b_id = b.id JOIN c ON b.c_id = c.id;
-- A column read only by WHERE, only by ORDER BY.
SELECT a.s FROM a JOIN b ON a.b_id = b.id WHERE b.w > 7 ORDER BY a.s;
SELECT b.tag FROM a JOIN b ON a.b_id = b.id ORDER BY a.y DESC, b.tag;
-- Outer joins: NULL-padded sides keep their narrowed width.
SELECT a.id, b.tag FROM a LEFT JOIN b ON a.b_id = b.id ORDER BY a.id;
SELECT b.id, a.x FROM a RIGHT JOIN b ON a.b_id = b.id ORDER BY b.id, a.x;
SELECT a.id, c.name FROM a LEFT JOIN b ON a.b_id = b.id LEFT JOIN c ON b.c_id = c.id AND c.z > a.x ORDER BY a.id;
-- A residual condition reading both sides and columns nothing else reads.
SELECT a.id FROM a JOIN b ON a.b_id = b.id AND a.y > b.w * 30 ORDER BY a.id;
-- USING and * keep every column, in MySQL's order.
SELECT * FROM a JOIN b USING (id) ORDER BY id;
SELECT b.*, c.name FROM b LEFT JOIN c ON b.c_id = c.id ORDER BY b.id;
-- Comma joins (reordered by the cost model), GROUP BY / HAVING over joins.
SELECT c.name, SUM(a.x) AS sx, COUNT(*) AS n FROM a, b, c WHERE a.b_id = b.id AND b.c_id = c.id GROUP BY c.name HAVING SUM(a.y) > 150 ORDER BY c.name;
SELECT b.tag, MAX(a.s) AS m FROM a JOIN b ON a.b_id = b.id GROUP BY b.tag ORDER BY b.tag;
-- Window functions over a join: partition and order keys read pruned positions.
SELECT a.id, b.tag, ROW_NUMBER() OVER (PARTITION BY b.tag ORDER BY a.y DESC) AS rn, SUM(a.x) OVER (ORDER BY a.id) AS run FROM a JOIN b ON a.b_id = b.id ORDER BY a.id;
-- Subqueries: uncorrelated ones prune; correlated ones read the block's row as it is.
SELECT a.id FROM a JOIN b ON a.b_id = b.id WHERE b.w = (SELECT MAX(w) FROM b WHERE id < 3) ORDER BY a.id;
SELECT a.id, (SELECT c.name FROM c WHERE c.id = b.c_id) AS cn FROM a JOIN b ON a.b_id = b.id ORDER BY a.id;
SELECT a.id FROM a JOIN b ON a.b_id = b.id WHERE EXISTS (SELECT 1 FROM c WHERE c.z = b.w + 4) ORDER BY a.id;
SELECT b.tag FROM b WHERE EXISTS (SELECT 1 FROM a JOIN c ON a.b_id = c.id WHERE a.b_id = b.id AND c.z > 10) ORDER BY b.tag;
-- A derived table over a join, and a join of a derived table.
SELECT d.tag, d.s FROM (SELECT b.tag, a.s, a.y FROM a JOIN b ON a.b_id = b.id) d WHERE d.y > 100 ORDER BY d.s;
SELECT c.name, d.n FROM c JOIN (SELECT b.c_id, COUNT(*) AS n FROM a JOIN b ON a.b_id = b.id GROUP BY b.c_id) d ON d.c_id = c.id ORDER BY c.name;
-- Self join: the same table pruned differently on each side.
SELECT p.id, q.s FROM a p JOIN a q ON p.b_id = q.id ORDER BY p.id;
-- Equalities among integer columns are transitive: a.b_id = b.id AND b.id = c.id implies a.b_id = c.id, which the comma-join order and the join keys use (EXPLAIN: two keys where one was stated). Not among text and numbers ('01' = 1 and 1 = '1' but '01' <> '1').
SELECT a.id, b.tag, c.name FROM a, b, c WHERE a.b_id = b.id AND b.id = c.id ORDER BY a.id;
SELECT a.id, c.name FROM c, a, b WHERE c.id = b.id AND b.id = a.b_id AND a.x > 10 ORDER BY a.id;
EXPLAIN SELECT a.id, c.name FROM c, a, b WHERE c.id = b.id AND b.id = a.b_id AND a.x > 10;
CREATE TABLE m (k VARCHAR(10), v INT);
INSERT INTO m VALUES ('1', 1), ('01', 2), ('2', 3), ('02', 4);
SELECT a.id, m.v, b.id FROM a, m, b WHERE a.id = m.k AND m.k = b.id ORDER BY a.id, m.v;
SELECT m1.v, m2.v FROM m m1, a, m m2 WHERE m1.k = a.id AND a.id = m2.k ORDER BY m1.v, m2.v;
-- EXPLAIN FORMAT=TREE names the join keys after pruning renumbered them.
EXPLAIN FORMAT=TREE SELECT c.z FROM a JOIN b ON a.b_id = b.id JOIN c ON b.c_id = c.id WHERE a.x > 5;
EXPLAIN FORMAT=TREE SELECT a.id, c.name FROM c, a, b WHERE c.id = b.id AND b.id = a.b_id AND a.x > 10;
