-- ANALYZE / CHECK / OPTIMIZE TABLE answer as MySQL's (Table, Op, Msg_type, Msg_text)
CREATE DATABASE m;
USE m;
CREATE TABLE t (id INT PRIMARY KEY, a INT, body TEXT, v VECF32(2), KEY ka (a), FULLTEXT KEY fb (body));
CREATE INDEX hv USING HNSW ON t (v) OP_TYPE 'vector_l2_ops';
INSERT INTO t VALUES (1, 10, 'red fox', '[0,1]'), (2, 20, 'blue fox', '[1,0]'), (3, NULL, NULL, NULL);
ANALYZE TABLE t;
ANALYZE NO_WRITE_TO_BINLOG TABLE t;
ANALYZE LOCAL TABLE m.t;
CHECK TABLE t;
CHECK TABLE t QUICK;
CHECK TABLE t FOR UPGRADE EXTENDED;
OPTIMIZE TABLE t;
-- A missing table is reported in the result; the others still run.
CHECK TABLE nope, t;
ANALYZE TABLE t, nope;
-- Twice the same table: MySQL's 1066.
ANALYZE TABLE t, m.t;
-- System tables have no such operation.
CHECK TABLE information_schema.tables;
-- Bad syntax.
CHECK TABLE t SLOW;
OPTIMIZE t;
