-- FOREIGN KEY constraints as InnoDB enforces them (MySQL 8's errors;
-- checked against MariaDB's InnoDB, differences noted where they are).
CREATE DATABASE fk;
USE fk;
CREATE TABLE p (id INT PRIMARY KEY, k INT, u INT UNIQUE, name VARCHAR(20));
-- Table constraint, column REFERENCES, named constraint with an index name.
CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE);
CREATE TABLE c2 (id INT PRIMARY KEY, pid INT REFERENCES p (id));
CREATE TABLE c3 (id INT, pid INT, CONSTRAINT myfk FOREIGN KEY fk_ix (pid) REFERENCES p (id) ON UPDATE SET NULL);
CREATE TABLE c4 (id INT PRIMARY KEY, pu INT, KEY pu_key (pu, id), FOREIGN KEY (pu) REFERENCES p (u) ON DELETE SET NULL ON UPDATE CASCADE);
SHOW CREATE TABLE c;
SHOW CREATE TABLE c2;
SHOW CREATE TABLE c3;
SHOW CREATE TABLE c4;
-- Refused definitions: no index on the referenced columns (1822), types
-- (3780), SET NULL on NOT NULL (1830), SET DEFAULT (1215), a missing
-- parent (1824), parent column (3734), child column (1072), arity (1239),
-- a name taken in the database (1826).
CREATE TABLE bad (id INT, pid INT, FOREIGN KEY (pid) REFERENCES p (k));
CREATE TABLE bad (id INT, pid BIGINT, FOREIGN KEY (pid) REFERENCES p (id));
CREATE TABLE bad (id INT, pid VARCHAR(10), FOREIGN KEY (pid) REFERENCES p (id));
CREATE TABLE bad (id INT, pid INT NOT NULL, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET NULL);
CREATE TABLE bad (id INT, pid INT, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET DEFAULT);
CREATE TABLE bad (id INT, pid INT, FOREIGN KEY (pid) REFERENCES nop (id));
CREATE TABLE bad (id INT, pid INT, FOREIGN KEY (pid) REFERENCES p (nocol));
CREATE TABLE bad (id INT, pid INT, FOREIGN KEY (nocol) REFERENCES p (id));
CREATE TABLE bad (id INT, pid INT, FOREIGN KEY (pid) REFERENCES p (id, k));
CREATE TABLE bad (id INT, pid INT, CONSTRAINT myfk FOREIGN KEY (pid) REFERENCES p (id));
SHOW TABLES;
-- A child row needs its parent (1452); NULL needs none.
INSERT INTO c VALUES (1, 5);
INSERT INTO p VALUES (1, 1, 10, 'one'), (2, 2, 20, 'two'), (3, 3, 30, 'three');
INSERT INTO c VALUES (1, 1), (2, 2), (3, NULL), (4, 1);
INSERT INTO c2 VALUES (1, 2), (2, 3);
INSERT INTO c3 VALUES (1, 2), (2, 3);
INSERT INTO c4 VALUES (1, 10), (2, 20), (3, 30);
-- INSERT IGNORE skips a row without its parent, with warning 1452.
INSERT IGNORE INTO c VALUES (5, 1), (6, 9), (8, NULL);
SHOW WARNINGS;
DELETE FROM c WHERE id IN (5, 8);
CHECK INDEX pid ON c;
UPDATE c SET pid = 9 WHERE id = 1;
UPDATE c SET pid = 3 WHERE id = 1;
SELECT * FROM c ORDER BY id;
-- ON DELETE CASCADE (c), RESTRICT by default (c2: 1451).
DELETE FROM p WHERE id = 1;
DELETE FROM p WHERE id = 2;
SELECT * FROM c ORDER BY id;
SELECT * FROM p ORDER BY id;
-- ON UPDATE SET NULL (c3) and ON UPDATE CASCADE (c4) through a UNIQUE key;
-- c's key has no ON UPDATE rule: NO ACTION refuses while c has children.
DELETE FROM c2;
UPDATE p SET id = 22 WHERE id = 2;
DELETE FROM c WHERE pid = 2;
UPDATE p SET id = 22 WHERE id = 2;
UPDATE p SET u = 21 WHERE id = 22;
SELECT * FROM c3 ORDER BY id;
SELECT * FROM c4 ORDER BY id;
-- ON DELETE SET NULL through the UNIQUE key.
DELETE FROM p WHERE id = 22;
SELECT * FROM c4 ORDER BY id;
SELECT * FROM c ORDER BY id;
-- A failed cascade leaves nothing behind (the statement is atomic).
INSERT INTO c2 VALUES (5, 3);
DELETE FROM p;
SELECT COUNT(*) FROM p;
SELECT * FROM c ORDER BY id;
-- REPLACE deletes: a referenced row's children follow its ON DELETE rule.
REPLACE INTO p VALUES (3, 3, 30, 'three again');
DELETE FROM c2;
INSERT INTO c VALUES (7, 3);
REPLACE INTO p VALUES (3, 3, 31, 'three once more');
SELECT * FROM c ORDER BY id;
-- INSERT … ON DUPLICATE KEY UPDATE is an update of the parent.
INSERT INTO c2 VALUES (6, 3);
INSERT INTO p VALUES (3, 0, 0, '') ON DUPLICATE KEY UPDATE id = 33;
INSERT INTO p VALUES (3, 0, 0, '') ON DUPLICATE KEY UPDATE name = 'kept';
SELECT * FROM p ORDER BY id;
-- DROP TABLE of a parent (MySQL 8: 3730; MariaDB answers 1451), DROP
-- INDEX a key needs (1553), TRUNCATE of a parent (1701).
DROP TABLE p;
DROP INDEX myfk ON c3;
DROP INDEX pu_key ON c4;
TRUNCATE TABLE p;
-- information_schema.
SELECT * FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = 'fk' ORDER BY CONSTRAINT_NAME;
SELECT CONSTRAINT_NAME, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, POSITION_IN_UNIQUE_CONSTRAINT, REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = 'fk' ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION;
SELECT CONSTRAINT_NAME, TABLE_NAME, CONSTRAINT_TYPE FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = 'fk' ORDER BY TABLE_NAME, CONSTRAINT_NAME;
-- Children and parent dropped together.
DROP TABLE c, c2, c3, c4, p;
SHOW TABLES;
