-- Issue 41 item 5: EXPLAIN FORMAT=TREE prints the plan as MySQL 8 prints its iterator tree (one row, one column EXPLAIN; `-> ` lines, children 4 spaces deeper), one case per operator kind; MySQL's (cost=… rows=…) estimates are omitted (no cost model). EXPLAIN ANALYZE [FORMAT=TREE] adds what each operator did; times are masked by the golden runner (time=…), rows / loops / batches are deterministic.
CREATE DATABASE x;
USE x;
CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(10), KEY ia (a));
CREATE TABLE u (id INT PRIMARY KEY, t_id INT, c INT);
CREATE TABLE ck (k1 INT, k2 INT, v INT, PRIMARY KEY (k1, k2));
INSERT INTO t VALUES (1, 10, 'x'), (2, 20, 'y'), (3, 30, 'x'), (4, 10, 'z'), (5, 50, 'y');
INSERT INTO u VALUES (1, 1, 100), (2, 1, 200), (3, 3, 300), (4, 9, 400);
INSERT INTO ck VALUES (1, 1, 1), (1, 2, 2), (2, 1, 3);
-- scans: full, primary-key point, primary-key range, secondary index lookup and range, composite key
EXPLAIN FORMAT=TREE SELECT * FROM t;
EXPLAIN FORMAT=TREE SELECT * FROM t WHERE id = 3;
EXPLAIN FORMAT=TREE SELECT * FROM t WHERE id IN (1, 3, 5);
EXPLAIN FORMAT=TREE SELECT * FROM t WHERE id > 2;
EXPLAIN FORMAT=TREE SELECT * FROM t WHERE id BETWEEN 2 AND 4;
EXPLAIN FORMAT=TREE SELECT * FROM t WHERE a = 10;
EXPLAIN FORMAT=TREE SELECT * FROM t WHERE a >= 20 AND a < 50;
EXPLAIN FORMAT=TREE SELECT * FROM ck WHERE k1 = 1 AND k2 > 1;
-- filter, project (no line of its own in MySQL's tree), no table
EXPLAIN FORMAT=TREE SELECT id, a + 1 FROM t WHERE b = 'x' AND (a > 5 OR b IS NULL);
EXPLAIN FORMAT=TREE SELECT 1 + 1;
-- aggregate, group aggregate with HAVING, distinct
EXPLAIN FORMAT=TREE SELECT COUNT(*), SUM(a), MAX(b) FROM t;
EXPLAIN FORMAT=TREE SELECT b, COUNT(*) FROM t GROUP BY b HAVING COUNT(*) > 1;
EXPLAIN FORMAT=TREE SELECT DISTINCT b FROM t;
-- sort, top-N, limit, limit with offset
EXPLAIN FORMAT=TREE SELECT * FROM t ORDER BY a DESC, id;
EXPLAIN FORMAT=TREE SELECT * FROM t ORDER BY a LIMIT 2;
EXPLAIN FORMAT=TREE SELECT * FROM t ORDER BY a LIMIT 2 OFFSET 1;
EXPLAIN FORMAT=TREE SELECT * FROM t LIMIT 3;
-- window
EXPLAIN FORMAT=TREE SELECT id, ROW_NUMBER() OVER (PARTITION BY b ORDER BY a) FROM t;
EXPLAIN FORMAT=TREE SELECT id, SUM(a) OVER (ORDER BY id), RANK() OVER (ORDER BY a) FROM t;
-- joins: hash join, left hash join, right join (printed as MySQL's left join), lookup join, nested loop
EXPLAIN FORMAT=TREE SELECT t.id, u.c FROM t JOIN u ON u.t_id = t.id;
EXPLAIN FORMAT=TREE SELECT t.id, u.c FROM t LEFT JOIN u ON u.t_id = t.id AND u.c > t.a;
EXPLAIN FORMAT=TREE SELECT t.id, u.c FROM t RIGHT JOIN u ON u.t_id = t.id;
EXPLAIN FORMAT=TREE SELECT u.c, t.b FROM u JOIN t ON t.id = u.t_id;
EXPLAIN FORMAT=TREE SELECT t.id, u.id FROM t JOIN u ON u.c > t.a * 10;
-- a grouped join (aggregate over a join, sorted)
EXPLAIN FORMAT=TREE SELECT t.b, COUNT(*), SUM(u.c) FROM t JOIN u ON u.t_id = t.id WHERE u.c > 100 GROUP BY t.b ORDER BY 3 DESC;
-- union, union all, intersect, a chain of unions
EXPLAIN FORMAT=TREE SELECT a FROM t UNION SELECT c FROM u;
EXPLAIN FORMAT=TREE SELECT a FROM t UNION ALL SELECT c FROM u;
EXPLAIN FORMAT=TREE SELECT a FROM t INTERSECT SELECT c FROM u;
EXPLAIN FORMAT=TREE SELECT 1 UNION SELECT 2 UNION SELECT 3;
-- derived table, CTE, recursive CTE, generate_series
EXPLAIN FORMAT=TREE SELECT d.b, d.n FROM (SELECT b, COUNT(*) AS n FROM t GROUP BY b) AS d WHERE d.n > 1;
EXPLAIN FORMAT=TREE WITH c AS (SELECT a FROM t WHERE a > 10) SELECT * FROM c;
EXPLAIN FORMAT=TREE WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r;
EXPLAIN FORMAT=TREE WITH RECURSIVE r (n) AS (SELECT 1 UNION SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r ORDER BY n;
EXPLAIN FORMAT=TREE WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c LIMIT 5 OFFSET 2) SELECT * FROM c;
EXPLAIN FORMAT=TREE SELECT * FROM generate_series(1, 10) g WHERE result > 3;
-- subqueries: uncorrelated scalar, correlated EXISTS, IN, in the select list
EXPLAIN FORMAT=TREE SELECT * FROM t WHERE a > (SELECT AVG(c) / 10 FROM u);
EXPLAIN FORMAT=TREE SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.t_id = t.id);
EXPLAIN FORMAT=TREE SELECT id FROM t WHERE id IN (SELECT t_id FROM u);
EXPLAIN FORMAT=TREE SELECT id, (SELECT MAX(c) FROM u WHERE u.t_id = t.id) AS m FROM t;
EXPLAIN FORMAT=TREE SELECT id FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.id = t.id);
-- index top-k: vector (HNSW) and full-text, synchronous and ASYNC (fresh tail merged), fast_search (index only)
CREATE TABLE docs (id INT PRIMARY KEY, body TEXT, emb VECF32(2));
CREATE FULLTEXT INDEX ft ON docs(body);
CREATE INDEX hv USING HNSW ON docs(emb) OP_TYPE 'vector_l2_ops';
INSERT INTO docs VALUES (1, 'rust rust engine', '[5,0]'), (2, 'rust database', '[1,0]'), (3, 'go database', '[0,2]');
EXPLAIN FORMAT=TREE SELECT id FROM docs ORDER BY l2_distance(emb, '[0,0]') LIMIT 2;
EXPLAIN FORMAT=TREE SELECT id FROM docs WHERE MATCH(body) AGAINST('rust') ORDER BY MATCH(body) AGAINST('rust') DESC LIMIT 2;
EXPLAIN FORMAT=TREE SELECT id FROM docs WHERE id < 3 ORDER BY l2_distance(emb, '[0,0]') LIMIT 2;
-- the hybrid ranking query of issue 41 item 8: both branches are index top-k scans under their window and limit
EXPLAIN FORMAT=TREE WITH v AS (SELECT id, ROW_NUMBER() OVER (ORDER BY l2_distance(emb, '[0,0]')) AS r FROM docs ORDER BY l2_distance(emb, '[0,0]') LIMIT 2), f AS (SELECT id, ROW_NUMBER() OVER (ORDER BY MATCH(body) AGAINST('rust') DESC) AS r FROM docs WHERE MATCH(body) AGAINST('rust') ORDER BY MATCH(body) AGAINST('rust') DESC LIMIT 2), ids AS (SELECT id FROM v UNION SELECT id FROM f) SELECT ids.id, COALESCE(1/(60+v.r),0) + COALESCE(1/(60+f.r),0) AS rrf FROM ids LEFT JOIN v ON v.id = ids.id LEFT JOIN f ON f.id = ids.id ORDER BY rrf DESC, ids.id LIMIT 10;
CREATE TABLE adocs (id INT PRIMARY KEY, body TEXT, emb VECF32(2));
CREATE INDEX ahv USING HNSW ON adocs(emb) OP_TYPE 'vector_l2_ops' ASYNC;
EXPLAIN FORMAT=TREE SELECT id FROM adocs ORDER BY l2_distance(emb, '[0,0]') LIMIT 2;
SET fast_search = 1;
EXPLAIN FORMAT=TREE SELECT id FROM adocs ORDER BY l2_distance(emb, '[0,0]') LIMIT 2;
SET fast_search = 0;
-- EXPLAIN ANALYZE FORMAT=TREE: MySQL's (actual time=… rows=… loops=…) per loop, then batches and peak memory; a correlated subquery runs once per outer row (loops), a branch never run says so
EXPLAIN ANALYZE FORMAT=TREE SELECT t.id, u.c FROM t JOIN u ON u.t_id = t.id WHERE t.a > 5;
EXPLAIN ANALYZE FORMAT=TREE SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.t_id = t.id);
EXPLAIN ANALYZE FORMAT=TREE SELECT b, COUNT(*) FROM t GROUP BY b ORDER BY b LIMIT 2;
EXPLAIN ANALYZE FORMAT=TREE SELECT t.id, u.c FROM t JOIN u ON u.c = t.a WHERE t.a > 1000;
EXPLAIN ANALYZE FORMAT=TREE SELECT u.c, t.b FROM u JOIN t ON t.id = u.t_id;
EXPLAIN ANALYZE FORMAT=TREE WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT * FROM r;
-- an aggregate folds the union's rounds as they come: one batch each
EXPLAIN ANALYZE FORMAT=TREE WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT COUNT(*), SUM(n) FROM r;
-- EXPLAIN ANALYZE without FORMAT keeps Tributary's lines, each operator with its figures (totals over loops)
EXPLAIN ANALYZE SELECT b, COUNT(*) FROM t WHERE a > 5 GROUP BY b ORDER BY b LIMIT 2;
-- formats: MySQL's TRADITIONAL and JSON are refused (1235), an unknown name is MySQL's 1791, FORMAT after ANALYZE only
EXPLAIN FORMAT=JSON SELECT * FROM t;
EXPLAIN FORMAT=TRADITIONAL SELECT * FROM t;
EXPLAIN ANALYZE FORMAT=JSON SELECT * FROM t;
EXPLAIN FORMAT=XML SELECT * FROM t;
EXPLAIN FORMAT=TREE INSERT INTO t VALUES (9, 9, 'q');
