-- FOREIGN KEY constraints: self-referencing and multi-column keys, the
-- cascade depth limit, ALTER TABLE ADD / DROP FOREIGN KEY, renames,
-- foreign_key_checks and a mysqldump-style load.
CREATE DATABASE fk2;
USE fk2;
-- Self-referencing: a row may reference itself; ON DELETE CASCADE takes
-- the subtree; ON UPDATE CASCADE of the same table is refused (1451), as
-- InnoDB refuses a cascade that would update a table an update above it
-- writes.
CREATE TABLE tree (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES tree (id) ON DELETE CASCADE ON UPDATE CASCADE);
INSERT INTO tree VALUES (1, NULL), (2, 1), (3, 2), (4, 2), (5, 5), (6, 1);
INSERT INTO tree VALUES (7, 70);
UPDATE tree SET id = 10 WHERE id = 1;
UPDATE tree SET id = 60 WHERE id = 6;
DELETE FROM tree WHERE id = 2;
SELECT * FROM tree ORDER BY id;
DELETE FROM tree WHERE id = 5;
SELECT * FROM tree ORDER BY id;
-- RESTRICT refuses even a row's reference to itself (as InnoDB).
CREATE TABLE selfr (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES selfr (id));
INSERT INTO selfr VALUES (1, 1);
DELETE FROM selfr WHERE id = 1;
-- Self-referencing ON DELETE SET NULL.
CREATE TABLE sn (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES sn (id) ON DELETE SET NULL);
INSERT INTO sn VALUES (1, NULL), (2, 1), (3, 2);
DELETE FROM sn WHERE id = 1;
SELECT * FROM sn ORDER BY id;
-- The cascade depth limit: 15 levels (3008, the whole DELETE undone).
CREATE TABLE chain (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES chain (id) ON DELETE CASCADE);
INSERT INTO chain VALUES (1, NULL), (2, 1), (3, 2), (4, 3), (5, 4), (6, 5), (7, 6), (8, 7), (9, 8), (10, 9), (11, 10), (12, 11), (13, 12), (14, 13), (15, 14), (16, 15), (17, 16), (18, 17);
DELETE FROM chain WHERE id = 3;
SELECT COUNT(*) FROM chain;
DELETE FROM chain WHERE id = 4;
SELECT COUNT(*) FROM chain;
-- Multi-column key over a composite primary key, cascading through two
-- levels.
CREATE TABLE orders (region INT, num INT, note VARCHAR(10), PRIMARY KEY (region, num));
CREATE TABLE order_lines (id INT PRIMARY KEY, region INT, num INT, CONSTRAINT fk_order FOREIGN KEY (region, num) REFERENCES orders (region, num) ON UPDATE CASCADE ON DELETE CASCADE);
CREATE TABLE notes (id INT PRIMARY KEY, line INT, FOREIGN KEY (line) REFERENCES order_lines (id) ON DELETE CASCADE);
INSERT INTO orders VALUES (1, 1, 'a'), (1, 2, 'b'), (2, 1, 'c');
INSERT INTO order_lines VALUES (10, 1, 1), (11, 1, 2), (12, 2, 1), (13, NULL, 7);
INSERT INTO order_lines VALUES (14, 2, 2);
INSERT INTO notes VALUES (100, 10), (101, 11), (102, 11);
UPDATE orders SET num = 5 WHERE region = 1 AND num = 2;
SELECT * FROM order_lines ORDER BY id;
DELETE FROM orders WHERE region = 1;
SELECT * FROM order_lines ORDER BY id;
SELECT * FROM notes ORDER BY id;
SHOW CREATE TABLE order_lines;
-- ALTER TABLE ADD FOREIGN KEY checks the existing rows (1452) and adds an
-- index when none fits; DROP FOREIGN KEY keeps the index.
CREATE TABLE par (id INT PRIMARY KEY);
CREATE TABLE kid (id INT PRIMARY KEY, pid INT);
INSERT INTO par VALUES (1), (2);
INSERT INTO kid VALUES (1, 1), (2, 3);
ALTER TABLE kid ADD CONSTRAINT kfk FOREIGN KEY (pid) REFERENCES par (id);
UPDATE kid SET pid = 2 WHERE id = 2;
ALTER TABLE kid ADD CONSTRAINT kfk FOREIGN KEY (pid) REFERENCES par (id);
ALTER TABLE kid ADD FOREIGN KEY (pid) REFERENCES par (id) ON DELETE CASCADE;
SHOW CREATE TABLE kid;
DELETE FROM par WHERE id = 1;
ALTER TABLE kid DROP FOREIGN KEY kfk;
DELETE FROM par WHERE id = 1;
SELECT * FROM kid ORDER BY id;
ALTER TABLE kid DROP FOREIGN KEY nosuch;
-- Columns a key uses: dropped (1828 / 1829), renamed (followed),
-- retyped (3780).
ALTER TABLE kid DROP COLUMN pid;
CREATE TABLE up (id INT PRIMARY KEY, u INT UNIQUE);
CREATE TABLE uc (id INT PRIMARY KEY, u INT, FOREIGN KEY (u) REFERENCES up (u));
ALTER TABLE up DROP COLUMN u;
ALTER TABLE up MODIFY u BIGINT;
DROP TABLE uc, up;
ALTER TABLE kid MODIFY pid BIGINT;
ALTER TABLE kid RENAME COLUMN pid TO parent_id;
ALTER TABLE par RENAME COLUMN id TO pk;
SHOW CREATE TABLE kid;
-- A key and its column dropped by one ALTER.
CREATE TABLE k2 (id INT PRIMARY KEY, pid INT, CONSTRAINT k2fk FOREIGN KEY (pid) REFERENCES par (pk));
ALTER TABLE k2 DROP COLUMN pid;
ALTER TABLE k2 DROP FOREIGN KEY k2fk, DROP COLUMN pid;
SHOW CREATE TABLE k2;
DROP TABLE k2;
-- RENAME TABLE: both ends follow.
RENAME TABLE par TO parent2;
SHOW CREATE TABLE kid;
INSERT INTO kid VALUES (5, 9);
INSERT INTO kid VALUES (5, 2);
RENAME TABLE kid TO kid2;
DELETE FROM parent2;
SELECT * FROM kid2;
-- A key to another database.
CREATE DATABASE fk2b;
CREATE TABLE fk2b.child (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES fk2.parent2 (pk));
SHOW CREATE TABLE fk2b.child;
INSERT INTO fk2b.child VALUES (1, 8);
DROP DATABASE fk2b;
-- foreign_key_checks = 0 skips checks and cascades (mysqldump's load:
-- the child is created before its parent, rows load in any order).
SELECT @@foreign_key_checks, @@session.foreign_key_checks, @@global.foreign_key_checks;
SET FOREIGN_KEY_CHECKS = 0;
SELECT @@foreign_key_checks;
CREATE TABLE dump_child (id INT PRIMARY KEY, pid INT, CONSTRAINT dc FOREIGN KEY (pid) REFERENCES dump_parent (id) ON DELETE CASCADE);
INSERT INTO dump_child VALUES (1, 1), (2, 2), (3, 9);
CREATE TABLE dump_parent (id INT PRIMARY KEY);
INSERT INTO dump_parent VALUES (1), (2);
SET FOREIGN_KEY_CHECKS = 1;
SELECT * FROM dump_child ORDER BY id;
DELETE FROM dump_parent WHERE id = 1;
SELECT * FROM dump_child ORDER BY id;
INSERT INTO dump_child VALUES (4, 9);
DROP TABLE dump_parent;
SET foreign_key_checks = OFF;
DROP TABLE dump_parent;
INSERT INTO dump_child VALUES (4, 9);
SET foreign_key_checks = DEFAULT;
INSERT INTO dump_child VALUES (5, 2);
SELECT TABLE_NAME, REFERENCED_TABLE_NAME, UNIQUE_CONSTRAINT_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = 'fk2' ORDER BY TABLE_NAME, CONSTRAINT_NAME;
