-- SAVEPOINT / ROLLBACK TO [SAVEPOINT] / RELEASE SAVEPOINT as MySQL (answers
-- checked against MariaDB): later savepoints go on ROLLBACK TO, the named
-- one stays; RELEASE drops it and every later one; names are
-- case-insensitive; a name set again moves; the end of the transaction
-- (COMMIT, ROLLBACK, an implicit commit) drops them all.
CREATE DATABASE sp;
USE sp;
CREATE TABLE t (a INT PRIMARY KEY);
-- Outside a transaction a savepoint lives for its own statement only.
SAVEPOINT x;
ROLLBACK TO x;
RELEASE SAVEPOINT x;
BEGIN;
INSERT INTO t VALUES (1);
SAVEPOINT s1;
INSERT INTO t VALUES (2);
SAVEPOINT s2;
INSERT INTO t VALUES (3);
ROLLBACK TO SAVEPOINT S1;
SELECT * FROM t;
ROLLBACK TO s2;
-- s1 stays after rolling back to it.
INSERT INTO t VALUES (4);
ROLLBACK TO s1;
INSERT INTO t VALUES (4);
RELEASE SAVEPOINT s1;
ROLLBACK WORK TO s1;
SAVEPOINT a;
INSERT INTO t VALUES (5);
SAVEPOINT a;
INSERT INTO t VALUES (6);
ROLLBACK TO a;
-- A failed statement rolls back only itself; savepoints are untouched.
INSERT INTO t VALUES (7), (1);
ROLLBACK TO a;
SELECT * FROM t;
COMMIT;
ROLLBACK TO a;
SELECT * FROM t;
-- autocommit = 0: SAVEPOINT opens the transaction.
SET autocommit = 0;
SAVEPOINT b;
INSERT INTO t VALUES (8);
ROLLBACK TO b;
INSERT INTO t VALUES (9);
ROLLBACK TO SAVEPOINT b;
COMMIT;
SELECT * FROM t;
SAVEPOINT c;
INSERT INTO t VALUES (10);
-- DDL commits implicitly: the savepoint is gone with its transaction.
CREATE TABLE u (b INT);
ROLLBACK TO c;
SET autocommit = 1;
SELECT * FROM t;
-- Syntax: RELEASE needs the SAVEPOINT keyword.
RELEASE c;
