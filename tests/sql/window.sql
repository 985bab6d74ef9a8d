-- Issue 41 item 2: window functions, the first subset (ROW_NUMBER, RANK, DENSE_RANK, COUNT/SUM/AVG/MIN/MAX OVER PARTITION BY / ORDER BY with MySQL's default frame). Every answer was checked against MariaDB 10.11; EXPLAIN lines are Tributary's own.
CREATE DATABASE w;
USE w;
CREATE TABLE emp (id INT PRIMARY KEY, dept VARCHAR(10), sal INT, bonus DECIMAL(6,2), f DOUBLE);
INSERT INTO emp VALUES (1, 'eng', 100, 1.50, 0.5), (2, 'eng', 200, NULL, 1.25), (3, 'eng', 200, 2.25, NULL), (4, 'ops', 50, 0.10, 2), (5, 'ops', NULL, 3.00, 4), (6, 'hr', 70, 1.00, 8), (7, NULL, 90, 0.05, 16), (8, 'eng', 300, 9.99, 32);
-- Ranking functions: ties share RANK, DENSE_RANK has no gaps, NULL sorts first ascending.
SELECT id, ROW_NUMBER() OVER (ORDER BY id) AS rn FROM emp ORDER BY id;
SELECT id, sal, RANK() OVER (ORDER BY sal) AS r, DENSE_RANK() OVER (ORDER BY sal) AS dr FROM emp ORDER BY sal, id;
SELECT id, sal, RANK() OVER (ORDER BY sal DESC) AS r, DENSE_RANK() OVER (ORDER BY sal DESC) AS dr FROM emp ORDER BY sal DESC, id;
SELECT id, dept, sal, ROW_NUMBER() OVER (PARTITION BY dept ORDER BY sal DESC, id) AS rn, RANK() OVER (PARTITION BY dept ORDER BY sal DESC) AS r FROM emp ORDER BY dept, rn;
-- Without ORDER BY every row of a partition is a peer (MySQL 8; MariaDB refuses RANK without ORDER BY with 4018).
SELECT id, RANK() OVER () AS r, DENSE_RANK() OVER (PARTITION BY dept) AS dr FROM emp ORDER BY id;
SELECT id, ROW_NUMBER() OVER (PARTITION BY dept ORDER BY id) AS rn FROM emp ORDER BY id;
-- Top-N per group through a derived table.
SELECT dept, id, sal FROM (SELECT dept, id, sal, ROW_NUMBER() OVER (PARTITION BY dept ORDER BY sal DESC, id) AS rn FROM emp) t WHERE rn <= 2 ORDER BY dept, rn;
-- Aggregates over the whole partition (no ORDER BY) and running (ORDER BY: peers share the value).
SELECT id, dept, COUNT(*) OVER (PARTITION BY dept) AS n, COUNT(sal) OVER (PARTITION BY dept) AS nsal, SUM(sal) OVER (PARTITION BY dept) AS s, AVG(sal) OVER (PARTITION BY dept) AS a, MIN(sal) OVER (PARTITION BY dept) AS lo, MAX(sal) OVER (PARTITION BY dept) AS hi FROM emp ORDER BY id;
SELECT id, sal, SUM(sal) OVER (ORDER BY sal) AS running, COUNT(*) OVER (ORDER BY sal) AS c, AVG(sal) OVER (ORDER BY sal) AS a FROM emp ORDER BY sal, id;
SELECT id, dept, sal, SUM(sal) OVER (PARTITION BY dept ORDER BY sal DESC) AS s, MAX(id) OVER (PARTITION BY dept ORDER BY sal DESC) AS m FROM emp ORDER BY dept, sal DESC, id;
SELECT id, SUM(sal) OVER () AS total, sal * 100 / SUM(sal) OVER () AS pct FROM emp ORDER BY id;
-- Exact DECIMAL sums and MySQL's types: SUM of DECIMAL(6,2) keeps scale 2, AVG adds 4; DOUBLE stays DOUBLE.
SELECT id, SUM(bonus) OVER (ORDER BY id) AS sb, AVG(bonus) OVER (PARTITION BY dept) AS ab, SUM(f) OVER (ORDER BY id) AS sf FROM emp ORDER BY id;
CREATE TABLE typed AS SELECT SUM(bonus) OVER () AS sb, AVG(bonus) OVER () AS ab FROM emp WHERE id = 1;
SHOW CREATE TABLE typed;
-- Window functions over a grouped block read its aggregates.
SELECT dept, SUM(sal) AS s, RANK() OVER (ORDER BY SUM(sal) DESC) AS r, SUM(SUM(sal)) OVER () AS total FROM emp GROUP BY dept ORDER BY r, dept;
SELECT dept, COUNT(*) AS n, ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC, dept) AS rn FROM emp GROUP BY dept HAVING COUNT(*) > 1 ORDER BY rn;
SELECT SUM(COUNT(*)) OVER () AS t FROM emp;
-- In expressions, ORDER BY, DISTINCT and with LIMIT (applied after the window).
SELECT id, ROW_NUMBER() OVER (ORDER BY sal DESC, id) + 10 AS x FROM emp ORDER BY ROW_NUMBER() OVER (ORDER BY sal DESC, id) LIMIT 3;
SELECT DISTINCT dept, COUNT(*) OVER (PARTITION BY dept) AS n FROM emp ORDER BY dept;
SELECT id, ROW_NUMBER() OVER (ORDER BY id DESC) AS rn FROM emp ORDER BY id LIMIT 2;
SELECT id, dept, RANK() OVER (ORDER BY dept) AS r FROM emp WHERE sal > 60 ORDER BY id;
-- In a view, a scalar subquery, and under a correlated filter (not pushed below the window: ranks are over every row).
CREATE VIEW ranked AS SELECT id, ROW_NUMBER() OVER (ORDER BY sal DESC, id) AS r FROM emp;
SELECT * FROM ranked WHERE r <= 3 ORDER BY id;
SELECT (SELECT ROW_NUMBER() OVER (ORDER BY id DESC) FROM emp LIMIT 1) AS x;
SELECT id FROM emp e WHERE 2 = (SELECT r FROM (SELECT id, RANK() OVER (ORDER BY sal) AS r FROM emp) t WHERE t.id = e.id) ORDER BY id;
SELECT COUNT(*), COUNT(*) OVER () FROM emp;
-- Empty input: no rows.
SELECT id, ROW_NUMBER() OVER () FROM emp WHERE id > 100;
-- Over a join and over generate_series.
CREATE TABLE d (name VARCHAR(10) PRIMARY KEY, floor INT);
INSERT INTO d VALUES ('eng', 3), ('ops', 1), ('hr', 1);
SELECT result, SUM(result) OVER (ORDER BY result) AS s, ROW_NUMBER() OVER (ORDER BY result DESC) AS rn FROM generate_series(1, 5) ORDER BY result;
SELECT e.id, d.floor, DENSE_RANK() OVER (ORDER BY d.floor) AS fr FROM emp e JOIN d ON d.name = e.dept ORDER BY e.id;
-- Text keys compare under the column's collation (utf8mb4_0900_ai_ci: 'A' and 'a' are peers).
CREATE TABLE ci (id INT PRIMARY KEY, s VARCHAR(5) COLLATE utf8mb4_0900_ai_ci);
INSERT INTO ci VALUES (1, 'a'), (2, 'A'), (3, 'b');
SELECT id, COUNT(*) OVER (PARTITION BY s) AS n, DENSE_RANK() OVER (ORDER BY s) AS r FROM ci ORDER BY id;
-- Refused where MySQL refuses (MariaDB: 4015 / 4074 for the same statements): window functions in WHERE / GROUP BY / HAVING / inside an aggregate or another window (3593), an alias of one there (3594); one inside a window's PARTITION BY / ORDER BY is 3595 (MySQL 8).
SELECT id FROM emp WHERE ROW_NUMBER() OVER () > 1;
SELECT dept FROM emp GROUP BY ROW_NUMBER() OVER ();
SELECT dept FROM emp GROUP BY dept HAVING RANK() OVER () > 0;
SELECT SUM(ROW_NUMBER() OVER ()) FROM emp;
SELECT SUM(ROW_NUMBER() OVER ()) OVER () FROM emp;
SELECT ROW_NUMBER() OVER (ORDER BY RANK() OVER ()) FROM emp;
SELECT ROW_NUMBER() OVER () AS rn FROM emp GROUP BY rn;
SELECT dept, ROW_NUMBER() OVER () AS rn FROM emp GROUP BY dept HAVING rn > 1;
-- LAG / LEAD (offset, default), FIRST_VALUE / LAST_VALUE / NTH_VALUE (the default frame ends at the row's last peer), NTILE, PERCENT_RANK, CUME_DIST (DOUBLE in MySQL 8; MariaDB prints DECIMAL(…,10)). Checked against MariaDB except what it lacks or refuses: LAG's third argument (MariaDB 1064), CUME_DIST() OVER () (4018; MySQL 8: every row is a peer, 1), a negative LAG offset (MySQL 8: 1210; MariaDB reads it as LEAD), NTH_VALUE(x, 0) (MySQL 8: 1210; MariaDB NULL) and NTILE(0) (MariaDB 4024). NTH_VALUE reads the frame (by default up to the row's last peer).
SELECT id, sal, LAG(sal) OVER (ORDER BY id) AS lg, LEAD(sal, 2) OVER (ORDER BY id) AS ld, LAG(sal, 1, -1) OVER (PARTITION BY dept ORDER BY id) AS lgd, LEAD(id, 0) OVER (ORDER BY id) AS l0 FROM emp ORDER BY id;
SELECT id, dept, FIRST_VALUE(id) OVER (PARTITION BY dept ORDER BY sal DESC, id) AS fv, LAST_VALUE(id) OVER (PARTITION BY dept ORDER BY sal) AS lv_peers, FIRST_VALUE(bonus) OVER (ORDER BY id DESC) AS fb FROM emp WHERE dept IS NOT NULL AND id <> 3 ORDER BY id;
-- Peers (sal 200: ids 2 and 3) share LAST_VALUE's frame end, whichever of them sorts last: one distinct value, not two.
SELECT COUNT(DISTINCT lv) AS n FROM (SELECT LAST_VALUE(id) OVER (ORDER BY sal) AS lv FROM emp WHERE sal = 200) t;
SELECT id, NTILE(3) OVER (ORDER BY id) AS t3, NTILE(5) OVER (PARTITION BY dept ORDER BY id) AS t5, NTILE(20) OVER (ORDER BY id) AS t20 FROM emp ORDER BY id;
SELECT id, sal, PERCENT_RANK() OVER (ORDER BY sal) AS pr, CUME_DIST() OVER (ORDER BY sal) AS cd, PERCENT_RANK() OVER (PARTITION BY dept ORDER BY sal) AS prd, CUME_DIST() OVER () AS c1 FROM emp ORDER BY sal, id;
SELECT id, sal, NTH_VALUE(sal, 2) OVER (ORDER BY id) AS n2, NTH_VALUE(id, 3) OVER (PARTITION BY dept ORDER BY id) AS n3, NTH_VALUE(sal, 2) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS nw, NTH_VALUE(id, 1) OVER (ORDER BY sal DESC) AS top FROM emp ORDER BY id;
SELECT id, NTH_VALUE(sal, 0) OVER (ORDER BY id) FROM emp;
SELECT id, LAG(sal, -1) OVER (ORDER BY id) FROM emp;
SELECT id, NTILE(0) OVER (ORDER BY id) FROM emp;
SELECT id, NTILE(sal) OVER (ORDER BY id) FROM emp;
SELECT id, LAG(sal, 1, 'none') OVER (ORDER BY id) FROM emp;
-- Named windows: OVER w, OVER (w ORDER BY …) adding an order, a window defined on another; MySQL's errors for misuse (3579 unknown, 3591 twice, 3580 a cycle, 3581 partitioning a reference, 3583 re-ordering an ordered one, 3582 inheriting a frame; MariaDB refuses the same statements with its 4009-4013).
SELECT id, dept, SUM(sal) OVER w AS s, ROW_NUMBER() OVER (w ORDER BY id) AS rn, RANK() OVER w2 AS r FROM emp WINDOW w AS (PARTITION BY dept), w2 AS (w ORDER BY sal DESC) ORDER BY id;
SELECT id, ROW_NUMBER() OVER w AS rn FROM emp WINDOW w AS (ORDER BY id DESC) ORDER BY id LIMIT 3;
SELECT id FROM emp WINDOW w AS (ORDER BY id), unused AS (PARTITION BY dept) ORDER BY id LIMIT 1;
SELECT id, SUM(sal) OVER nope FROM emp;
SELECT id FROM emp WINDOW w AS (), w AS (ORDER BY id);
SELECT id FROM emp WINDOW a AS (b), b AS (a);
SELECT id, SUM(sal) OVER (w PARTITION BY id) FROM emp WINDOW w AS (ORDER BY id);
SELECT id, SUM(sal) OVER (w ORDER BY sal) FROM emp WINDOW w AS (ORDER BY id);
SELECT id, SUM(sal) OVER (w ORDER BY sal) FROM emp WINDOW w AS (PARTITION BY dept ROWS UNBOUNDED PRECEDING);
-- Explicit frames: ROWS with offsets and UNBOUNDED ends (empty frames give NULL / 0), RANGE with UNBOUNDED / CURRENT ROW (peers) or an offset (more in window_frames.sql); MySQL's errors 3584 / 3585 / 3586.
SELECT id, sal, SUM(sal) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS s2, COUNT(sal) OVER (ORDER BY id ROWS 2 PRECEDING) AS c3, AVG(sal) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS a3, MAX(sal) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS mx, SUM(sal) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS bf, COUNT(*) OVER (ORDER BY id ROWS BETWEEN 2 FOLLOWING AND 3 FOLLOWING) AS ahead FROM emp ORDER BY id;
SELECT id, dept, sal, SUM(sal) OVER (PARTITION BY dept ORDER BY sal RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING) AS rest, SUM(sal) OVER (PARTITION BY dept ORDER BY sal RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS al, MIN(id) OVER (ORDER BY sal RANGE CURRENT ROW) AS peer_min FROM emp ORDER BY id;
SELECT id, FIRST_VALUE(sal) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 2 FOLLOWING) AS fv, LAST_VALUE(sal) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND 2 FOLLOWING) AS lv, LAST_VALUE(id) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS la FROM emp ORDER BY id;
SELECT id, SUM(sal) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED FOLLOWING AND UNBOUNDED FOLLOWING) FROM emp;
SELECT id, SUM(sal) OVER (ORDER BY id ROWS BETWEEN CURRENT ROW AND UNBOUNDED PRECEDING) FROM emp;
SELECT id, SUM(sal) OVER (ORDER BY id ROWS BETWEEN 1.5 PRECEDING AND CURRENT ROW) FROM emp;
SELECT id, SUM(sal) OVER (ORDER BY sal RANGE BETWEEN 10 PRECEDING AND CURRENT ROW) FROM emp;
-- Not implemented: refused with 1235, never approximated.
SELECT id, LAG(sal) IGNORE NULLS OVER (ORDER BY id) FROM emp;
SELECT id, COUNT(DISTINCT dept) OVER () FROM emp;
SELECT id, GROUP_CONCAT(dept) OVER () FROM emp;
-- EXPLAIN shows the window operator between the aggregate and the sort.
EXPLAIN SELECT dept, RANK() OVER (ORDER BY SUM(sal) DESC) FROM emp GROUP BY dept ORDER BY 2;
EXPLAIN SELECT id, ROW_NUMBER() OVER (PARTITION BY dept ORDER BY sal) FROM emp;
-- Issue 41 item 8: hybrid search by reciprocal-rank fusion of a vector ranking and a full-text ranking (two ROW_NUMBER()s; FULL JOIN written as the union of ids LEFT JOINed to both). Distances and scores are distinct, so each ranking is determined; the scores query shows the full-text order.
CREATE TABLE docs (id INT PRIMARY KEY, body TEXT, emb VECF32(2));
CREATE FULLTEXT INDEX ft ON docs(body);
CREATE INDEX hv USING HNSW ON docs(emb) OP_TYPE 'vector_l2_ops';
INSERT INTO docs VALUES (1, 'rust rust rust engine', '[5,0]'), (2, 'rust database', '[1,0]'), (3, 'go database', '[0,2]'), (4, 'rust rust parser', '[3,0]'), (5, 'python scripts', '[0,0.5]'), (6, 'c compiler', '[4,4]');
SELECT id, l2_distance(emb, '[0,0]') AS d, ROW_NUMBER() OVER (ORDER BY l2_distance(emb, '[0,0]')) AS r FROM docs ORDER BY l2_distance(emb, '[0,0]') LIMIT 3;
SELECT id, MATCH(body) AGAINST('rust') AS score, ROW_NUMBER() OVER (ORDER BY MATCH(body) AGAINST('rust') DESC) AS r FROM docs WHERE MATCH(body) AGAINST('rust') ORDER BY r;
WITH v AS (SELECT id, ROW_NUMBER() OVER (ORDER BY l2_distance(emb, '[0,0]')) AS r FROM docs ORDER BY l2_distance(emb, '[0,0]') LIMIT 3), f AS (SELECT id, ROW_NUMBER() OVER (ORDER BY MATCH(body) AGAINST('rust') DESC) AS r FROM docs WHERE MATCH(body) AGAINST('rust') ORDER BY MATCH(body) AGAINST('rust') DESC LIMIT 3), ids AS (SELECT id FROM v UNION SELECT id FROM f) SELECT ids.id, v.r AS vr, f.r AS fr, COALESCE(1/(60+v.r),0) + COALESCE(1/(60+f.r),0) AS rrf FROM ids LEFT JOIN v ON v.id = ids.id LEFT JOIN f ON f.id = ids.id ORDER BY rrf DESC, ids.id LIMIT 10;
-- Each ranking whose window orders as its block and keeps its first rows is still answered by its index's top-k (a number or rank depends only on the rows before it); a window that needs every row (a running SUM, PARTITION BY) is not.
EXPLAIN WITH v AS (SELECT id, ROW_NUMBER() OVER (ORDER BY l2_distance(emb, '[0,0]')) AS r FROM docs ORDER BY l2_distance(emb, '[0,0]') LIMIT 3), f AS (SELECT id, ROW_NUMBER() OVER (ORDER BY MATCH(body) AGAINST('rust') DESC) AS r FROM docs WHERE MATCH(body) AGAINST('rust') ORDER BY MATCH(body) AGAINST('rust') DESC LIMIT 3), ids AS (SELECT id FROM v UNION SELECT id FROM f) SELECT ids.id, v.r AS vr, f.r AS fr, COALESCE(1/(60+v.r),0) + COALESCE(1/(60+f.r),0) AS rrf FROM ids LEFT JOIN v ON v.id = ids.id LEFT JOIN f ON f.id = ids.id ORDER BY rrf DESC, ids.id LIMIT 10;
EXPLAIN SELECT id, SUM(id) OVER (ORDER BY l2_distance(emb, '[0,0]')) AS s FROM docs ORDER BY l2_distance(emb, '[0,0]') LIMIT 3;
SELECT id, SUM(id) OVER (ORDER BY l2_distance(emb, '[0,0]')) AS s FROM docs ORDER BY l2_distance(emb, '[0,0]') LIMIT 3;
-- A row without a vector ranks after every real neighbour in both directions (as ORDER BY by distance has it), so the index path and exact evaluation number rows alike.
INSERT INTO docs VALUES (7, 'rust', NULL);
SELECT id, ROW_NUMBER() OVER (ORDER BY l2_distance(emb, '[0,0]')) AS r FROM docs ORDER BY l2_distance(emb, '[0,0]') LIMIT 3;
SELECT id, ROW_NUMBER() OVER (ORDER BY l2_distance(emb, '[0,0]')) AS r, RANK() OVER (ORDER BY l2_distance(emb, '[0,0]') DESC) AS far FROM docs ORDER BY id;
