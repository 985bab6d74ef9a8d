-- A correlated scalar or EXISTS subquery runs once per distinct set of
-- outer values it reads; the other rows take the answer kept for them
-- (MariaDB's subquery cache). Answers checked against MariaDB 10.11.
CREATE DATABASE sm;
USE sm;
CREATE TABLE c (id INT PRIMARY KEY, g INT);
CREATE TABLE o (id INT PRIMARY KEY, cid INT, amt INT);
INSERT INTO c VALUES (1, 1), (2, 1), (3, 2), (4, NULL);
INSERT INTO o VALUES (1, 1, 10), (2, 1, 20), (3, 1, 30), (4, 2, 5), (5, 2, 50), (6, 3, 7), (7, 4, 1), (8, NULL, 3), (9, NULL, 4);
SELECT id, amt FROM o WHERE amt > (SELECT AVG(amt) FROM o o2 WHERE o2.cid = o.cid) ORDER BY id;
-- 9 rows, 5 distinct cid values (NULL is one): the subquery runs 5 times.
EXPLAIN ANALYZE SELECT id, amt FROM o WHERE amt > (SELECT AVG(amt) FROM o o2 WHERE o2.cid = o.cid);
-- EXISTS reading two outer columns: keyed by both.
SELECT id, (SELECT COUNT(*) FROM o o2 WHERE o2.cid = o.cid) AS n,
       EXISTS (SELECT 1 FROM o o3 WHERE o3.cid = o.cid AND o3.amt > o.amt) AS e
FROM o ORDER BY id;
-- A subquery inside a subquery reading the outermost row: the middle one
-- is keyed by what its inner one reads too.
SELECT c.id, (SELECT SUM(o.amt) FROM o WHERE o.cid = c.id
                AND o.amt > (SELECT MIN(o2.amt) FROM o o2 WHERE o2.cid = c.g)) AS s
FROM c ORDER BY c.id;
CREATE TABLE d (id INT PRIMARY KEY, k INT, g INT);
INSERT INTO d VALUES (1, 1, 1), (2, 1, 2), (3, 1, 1);
-- Rows 1 and 2 share k but not g: 50 and 60, not 50 twice.
SELECT d.id, (SELECT SUM(o.amt) FROM o WHERE o.cid = d.k
                AND o.amt > (SELECT MIN(o2.amt) FROM o o2 WHERE o2.cid = d.g)) AS s
FROM d ORDER BY d.id;
SELECT id, (SELECT MAX(o2.amt) FROM o o2 WHERE o2.cid = o.cid AND o2.id <> o.id) AS m FROM o ORDER BY id;
-- Values of different types are different keys (1 and '1', 1 and 1.0).
SELECT v, (SELECT COUNT(*) FROM c WHERE CONCAT(c.id, '') = CONCAT(t.v, '')) AS n
FROM (SELECT 1 AS v UNION ALL SELECT '1' UNION ALL SELECT 1.0 UNION ALL SELECT 1) t;
-- A volatile call: never answered from the memo (three different values).
SELECT COUNT(DISTINCT (SELECT UUID_SHORT() FROM c WHERE c.id = o.cid)) FROM o WHERE cid = 1;
