-- CHECK constraints (MySQL 8.0.16+): column and table constraints, their
-- names, ENFORCED / NOT ENFORCED, the checks on INSERT, UPDATE, REPLACE,
-- ON DUPLICATE KEY UPDATE and INSERT IGNORE, what information_schema and
-- SHOW CREATE TABLE show, and MySQL 8's refusals. Checked against
-- MariaDB 10.11 where it agrees (it names constraints and prints clauses
-- differently, and has no NOT ENFORCED); codes as MySQL 8.
CREATE DATABASE ck;
USE ck;
-- Django's PositiveSmallIntegerField: a column check.
CREATE TABLE log (id INT AUTO_INCREMENT PRIMARY KEY, flag SMALLINT UNSIGNED NOT NULL CHECK (flag >= 0), msg VARCHAR(20));
CREATE TABLE t (a INT CONSTRAINT a_pos CHECK (a > 0), b INT, c VARCHAR(10) CHECK (c <> 'bad'), CHECK (a < b), CONSTRAINT named CHECK (b < 100) NOT ENFORCED, CHECK (b <> 42) ENFORCED);
SHOW CREATE TABLE t;
-- MySQL's manual example: generated names numbered in the order written,
-- columns' and the table's checks interleaved; SHOW CREATE lists by name.
CREATE TABLE t1 (CHECK (c1 <> c2), c1 INT CHECK (c1 > 10), c2 INT CONSTRAINT c2_positive CHECK (c2 > 0), c3 INT CHECK (c3 < 100), CONSTRAINT c1_nonzero CHECK (c1 <> 0), CHECK (c1 > c3));
SHOW CREATE TABLE t1;
DROP TABLE t1;
SELECT CONSTRAINT_SCHEMA, CONSTRAINT_NAME, CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = 'ck' ORDER BY CONSTRAINT_NAME;
SELECT CONSTRAINT_NAME, TABLE_NAME, CONSTRAINT_TYPE, ENFORCED FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = 'ck' ORDER BY TABLE_NAME, CONSTRAINT_NAME;
-- TRUE and NULL pass; FALSE is 3819 naming the constraint.
INSERT INTO log (flag, msg) VALUES (0, 'ok'), (7, 'ok');
INSERT INTO t VALUES (1, 2, 'x'), (NULL, NULL, NULL), (5, NULL, 'y');
INSERT INTO t VALUES (0, 2, 'x');
INSERT INTO t VALUES (3, 2, 'x');
INSERT INTO t VALUES (1, 2, 'bad');
INSERT INTO t VALUES (1, 42, 'x');
-- NOT ENFORCED is kept but never checked.
INSERT INTO t VALUES (1, 500, 'x');
-- A multi-row INSERT stops at the failing row, leaving none of its rows.
INSERT INTO t VALUES (2, 3, 'm'), (2, 1, 'n');
SELECT * FROM t ORDER BY a, b;
-- UPDATE checks the new row.
UPDATE t SET b = 0 WHERE a = 1;
UPDATE t SET a = a + 10 WHERE a = 1;
SELECT * FROM t ORDER BY a, b;
-- INSERT IGNORE skips the row with warning 3819.
INSERT IGNORE INTO t VALUES (-1, 2, 'i'), (20, 30, 'j');
SHOW WARNINGS;
SELECT * FROM t ORDER BY a, b;
-- REPLACE and ON DUPLICATE KEY UPDATE check the row they write.
CREATE TABLE u (id INT PRIMARY KEY, v INT CHECK (v BETWEEN 1 AND 9));
INSERT INTO u VALUES (1, 5);
REPLACE INTO u VALUES (1, 10);
INSERT INTO u VALUES (1, 6) ON DUPLICATE KEY UPDATE v = v * 3;
INSERT INTO u VALUES (1, 6) ON DUPLICATE KEY UPDATE v = v + 1;
SELECT * FROM u;
-- Definitions MySQL refuses: another column in a column check (3813), a
-- non-deterministic function (3814), a subquery (3815), a variable (3816),
-- an AUTO_INCREMENT column (3818), an unknown column (3820), a name taken
-- in the database (3822), a column a foreign key's action writes (3823).
CREATE TABLE bad (a INT CHECK (b > 0), b INT);
CREATE TABLE bad (a DATETIME CHECK (a < NOW()));
CREATE TABLE bad (a VARCHAR(40) CHECK (a <> UUID()));
CREATE TABLE bad (a DATETIME, CHECK (a < DATE_ADD(CURRENT_TIMESTAMP, INTERVAL 1 DAY)));
CREATE TABLE bad (a DOUBLE CHECK (a < RAND()));
CREATE TABLE bad (a VARCHAR(40) CHECK (a <> CONNECTION_ID()));
-- (a volatile function the registry knows, refused once compiled)
CREATE TABLE bad (a TEXT CHECK (a <> LIST_FAULT_POINTS()));
CREATE TABLE bad (a INT CHECK (a IN (SELECT 1)));
CREATE TABLE bad (a INT CHECK (a > @x));
CREATE TABLE bad (a INT AUTO_INCREMENT PRIMARY KEY, CHECK (a > 0));
CREATE TABLE bad (a INT, CHECK (nope > 0));
CREATE TABLE bad (a INT, CONSTRAINT a_pos CHECK (a > 0));
CREATE TABLE bad (a INT, CONSTRAINT dup CHECK (a > 0), CONSTRAINT dup CHECK (a < 9));
CREATE TABLE bad (id INT, pid INT CHECK (pid > 0), FOREIGN KEY (pid) REFERENCES u (id) ON DELETE CASCADE);
CREATE TABLE fkok (id INT, pid INT CHECK (pid > 0), FOREIGN KEY (pid) REFERENCES u (id));
SHOW TABLES;
-- ALTER TABLE: dropping or renaming a column a check reads is 3959;
-- other columns change freely; a renamed table's generated names follow.
ALTER TABLE t DROP COLUMN b;
ALTER TABLE t RENAME COLUMN a TO aa;
ALTER TABLE t CHANGE c cc VARCHAR(10);
ALTER TABLE t ADD COLUMN d INT;
ALTER TABLE t MODIFY a BIGINT;
ALTER TABLE t ADD CONSTRAINT later CHECK (d > 0);
ALTER TABLE fkok ADD CONSTRAINT fk2 FOREIGN KEY (pid) REFERENCES u (id) ON UPDATE SET NULL;
RENAME TABLE t TO t2;
SELECT CONSTRAINT_NAME, TABLE_NAME FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = 'ck' AND CONSTRAINT_TYPE = 'CHECK' ORDER BY CONSTRAINT_NAME;
INSERT INTO t2 (a, b, c) VALUES (-5, 1, 'z');
DROP DATABASE ck;
