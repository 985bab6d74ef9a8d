-- ALTER TABLE ADD / DROP CHECK and DROP CONSTRAINT (MySQL 8.0.19): a new
-- check is validated against every row (3819 and nothing changes); generated
-- names go on from the highest <table>_chk_<n>; DROP CHECK finds only checks,
-- DROP CONSTRAINT checks and foreign keys (3940 when none, 3939 when both).
CREATE DATABASE cka;
USE cka;
CREATE TABLE t (a INT, b INT CHECK (b < 100), CHECK (a <> 7));
INSERT INTO t VALUES (1, 10), (-2, 20), (3, 30);
ALTER TABLE t ADD CHECK (a > 0);
SHOW CREATE TABLE t;
ALTER TABLE t ADD CHECK (a > -5);
ALTER TABLE t ADD CONSTRAINT small CHECK (b <= 30), ADD CONSTRAINT big CHECK (b > 0);
SELECT CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = 'cka' ORDER BY CONSTRAINT_NAME;
INSERT INTO t VALUES (4, 40);
INSERT INTO t VALUES (-9, 5);
-- NOT ENFORCED: added without looking at the rows, never checked.
ALTER TABLE t ADD CONSTRAINT lax CHECK (a > 1000) NOT ENFORCED;
INSERT INTO t VALUES (5, 5);
ALTER TABLE t DROP CHECK small;
INSERT INTO t VALUES (4, 40);
ALTER TABLE t DROP CHECK small;
ALTER TABLE t DROP CONSTRAINT IF EXISTS small;
ALTER TABLE t DROP CONSTRAINT lax, DROP CHECK big;
-- Renewing a check under its own name in one statement.
ALTER TABLE t DROP CHECK t_chk_3, ADD CONSTRAINT t_chk_3 CHECK (a > -100);
SHOW CREATE TABLE t;
-- The name is unique in the database.
CREATE TABLE u (id INT PRIMARY KEY, x INT, CONSTRAINT other CHECK (x > 0));
ALTER TABLE t ADD CONSTRAINT other CHECK (a > 0);
-- A foreign key by DROP CONSTRAINT, not by DROP CHECK; a name both a check
-- and a foreign key needs the specific clause.
CREATE TABLE c (id INT PRIMARY KEY, uid INT, CONSTRAINT fk_u FOREIGN KEY (uid) REFERENCES u (id));
ALTER TABLE c DROP CHECK fk_u;
ALTER TABLE c DROP CONSTRAINT fk_u;
SHOW CREATE TABLE c;
ALTER TABLE c ADD CONSTRAINT twin FOREIGN KEY (uid) REFERENCES u (id), ADD CONSTRAINT twin CHECK (uid > 0);
ALTER TABLE c DROP CONSTRAINT twin;
ALTER TABLE c DROP CONSTRAINT `twin` RESTRICT;
-- A check on a column added in the same statement sees its default.
ALTER TABLE t ADD COLUMN d INT DEFAULT 5, ADD CHECK (d = 5);
ALTER TABLE t ADD COLUMN e INT DEFAULT 0, ADD CHECK (e > 0);
SELECT * FROM t ORDER BY a;
DROP DATABASE cka;
