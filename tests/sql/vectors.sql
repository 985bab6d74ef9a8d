-- Vector types, exact vector functions, HNSW and full-text indexes (fresh by default).
CREATE DATABASE vec;
USE vec;
CREATE TABLE docs (id BIGINT PRIMARY KEY, title VARCHAR(100), body TEXT, v VECF32(3), w VECF64(2));
INSERT INTO docs VALUES (1, 'Rust', 'rust database engine', '[1,0,0]', '[1,1]'), (2, 'Python', 'python web framework', '[0,1,0]', '[2,2]'), (3, 'Go', 'fast rust like services', '[0,0,1]', '[3,3]');
SELECT id, l2_distance(v, '[1,1,0]'), cosine_distance(v, '[1,0,0]'), inner_product(v, '[2,3,4]'), l2_norm(w) FROM docs ORDER BY id;
CREATE INDEX vidx USING HNSW ON docs(v) OP_TYPE 'vector_l2_ops' M 16 EF_CONSTRUCTION 128 EF_SEARCH 64 ASYNC;
CREATE FULLTEXT INDEX ft ON docs(title, body) ASYNC;
INSERT INTO docs VALUES (4, 'Zig', 'rust rust rust', '[0.9,0.1,0]', '[4,4]');
EXPLAIN SELECT id FROM docs ORDER BY l2_distance(v, '[1,0,0]') LIMIT 2;
SELECT id FROM docs ORDER BY l2_distance(v, '[1,0,0]') LIMIT 2;
SELECT id FROM docs WHERE id > 1 ORDER BY l2_distance(v, '[1,0.5,0]') LIMIT 2;
EXPLAIN SELECT id FROM docs WHERE id > 1 ORDER BY l2_distance(v, '[1,0.5,0]') LIMIT 2;
EXPLAIN SELECT id FROM docs WHERE MATCH(title, body) AGAINST('rust') ORDER BY l2_distance(v, '[1,0,0]') LIMIT 2;
SELECT id FROM docs WHERE MATCH(title, body) AGAINST('rust') ORDER BY l2_distance(v, '[1,0,0]') LIMIT 2;
EXPLAIN SELECT id FROM docs WHERE MATCH(title, body) AGAINST('rust');
EXPLAIN SELECT id FROM docs WHERE MATCH(title, body) AGAINST('rust') AND id > 1;
SELECT id FROM docs WHERE MATCH(title, body) AGAINST('rust') ORDER BY id;
SELECT id FROM docs WHERE MATCH(title, body) AGAINST('+rust -fast' IN BOOLEAN MODE) ORDER BY id;
DELETE FROM docs WHERE id = 4;
SELECT id FROM docs ORDER BY l2_distance(v, '[1,0,0]') LIMIT 1;
SHOW INDEX FROM docs;
CREATE INDEX bad USING HNSW ON docs(title);
CREATE INDEX bad USING HNSW ON docs(v) OP_TYPE 'vector_nope_ops';
DROP INDEX vidx ON docs;
DROP INDEX ft ON docs;
SELECT job_name, job_state FROM mo_catalog.mo_iscp_log ORDER BY job_name;
-- MatrixOne's vector functions (issue 10), with MatrixOne's semantics:
-- inner_product is the negated dot product (a distance: ascending = most
-- similar), subvector is 1-based with negative positions from the end.
SELECT inner_product('[1,2,3]', '[4,5,6]'), inner_product('[1,2,3]', '[1,2,3]');
SELECT l1_distance('[1,2]', '[4,6]'), l1_norm('[-1,2,-3]'), summation('[1,2,3.5]'), l2_norm('[3,4]');
SELECT normalize_l2('[3,4]'), normalize_l2('[0,0,5]');
SELECT subvector('[1,2,3]', 2), subvector('[1,2,3]', -1, 1), subvector('[1,2,3]', -1, 0), subvector('[1,2,3]', 1, 2), subvector('[1,2,3]', 0), subvector('[1,2,3]', 4), subvector('[1,2,3]', -3, 5);
SELECT subvector(NULL, 1), l1_distance(NULL, '[1]'), summation(NULL), normalize_l2(NULL);
SELECT normalize_l2('[0,0]');
SELECT l1_distance('[1,2]', '[1,2,3]');
SELECT subvector('[1,2,3]');
-- A vector_ip_ops index serves ORDER BY inner_product ascending (the
-- largest dot products first); descending is evaluated exactly.
CREATE TABLE ipt (id INT PRIMARY KEY, v VECF32(2));
INSERT INTO ipt VALUES (1, '[1,0]'), (2, '[3,3]'), (3, '[0,2]'), (4, '[-1,-1]'), (5, '[2,1]');
CREATE INDEX ipx USING hnsw ON ipt (v) OP_TYPE 'vector_ip_ops';
EXPLAIN SELECT id FROM ipt ORDER BY inner_product(v, '[1,1]') LIMIT 2;
SELECT id, inner_product(v, '[1,1]') FROM ipt ORDER BY inner_product(v, '[1,1]') LIMIT 2;
EXPLAIN SELECT id FROM ipt ORDER BY inner_product(v, '[1,1]') DESC LIMIT 2;
SELECT id, inner_product(v, '[1,1]') FROM ipt ORDER BY inner_product(v, '[1,1]') DESC LIMIT 2;
DROP TABLE ipt;
-- The session's HNSW beam (issue 14): the same answers at any width
-- (candidates are re-ranked exactly); a width below the index's EF_SEARCH
-- has no effect.
SELECT @@hnsw_ef_search;
SET hnsw_ef_search = 1;
SELECT id FROM docs ORDER BY l2_distance(v, '[1,0,0]') LIMIT 2;
SET hnsw_ef_search = 5000;
SELECT id FROM docs ORDER BY l2_distance(v, '[1,0,0]') LIMIT 2;
SET hnsw_ef_search = -1;
SET hnsw_ef_search = DEFAULT;
SELECT @@hnsw_ef_search;
