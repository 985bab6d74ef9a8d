-- Synchronous (non-ASYNC) HNSW and full-text indexes: maintained by the writing
-- transaction; fast_search = 1 answers from the index alone, so every result below
-- comes from the index, right after the write.
CREATE DATABASE syn;
USE syn;
CREATE TABLE docs (id BIGINT PRIMARY KEY, body TEXT, v VECF32(3));
INSERT INTO docs VALUES (1, 'rust database engine', '[1,0,0]'), (2, 'python web framework', '[0,1,0]');
CREATE INDEX vidx USING HNSW ON docs(v) OP_TYPE 'vector_l2_ops';
CREATE FULLTEXT INDEX ft ON docs(body);
SET fast_search = 1;
EXPLAIN SELECT id FROM docs ORDER BY l2_distance(v, '[1,0,0]') LIMIT 2;
EXPLAIN SELECT id FROM docs WHERE MATCH(body) AGAINST('rust');
INSERT INTO docs VALUES (3, 'rust web services', '[0,0,1]');
SELECT id FROM docs ORDER BY l2_distance(v, '[0,0,0.9]') LIMIT 1;
SELECT id FROM docs WHERE MATCH(body) AGAINST('rust') ORDER BY id;
UPDATE docs SET body = 'go services', v = '[0,0.9,0.1]' WHERE id = 3;
SELECT id FROM docs WHERE MATCH(body) AGAINST('rust') ORDER BY id;
SELECT id FROM docs ORDER BY l2_distance(v, '[0,1,0]') LIMIT 2;
BEGIN;
INSERT INTO docs VALUES (4, 'rust again', '[5,5,5]');
DELETE FROM docs WHERE id = 1;
ROLLBACK;
SELECT id FROM docs WHERE MATCH(body) AGAINST('rust') ORDER BY id;
SELECT id FROM docs ORDER BY l2_distance(v, '[5,5,5]') LIMIT 1;
DELETE FROM docs WHERE id = 1;
SELECT id FROM docs WHERE MATCH(body) AGAINST('rust') ORDER BY id;
SELECT job_name, job_state FROM mo_catalog.mo_iscp_log ORDER BY job_name;
DROP INDEX vidx ON docs;
DROP INDEX ft ON docs;
SELECT job_name, job_state FROM mo_catalog.mo_iscp_log ORDER BY job_name;
