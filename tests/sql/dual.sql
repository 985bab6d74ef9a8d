-- FROM DUAL: no table, as MySQL (checked against MariaDB 10.11); a quoted
-- `dual` is a table of that name.
SELECT 1 FROM DUAL;
SELECT 1 + 1 AS two FROM dual WHERE 1 = 1;
SELECT 'x' FROM DUAL WHERE 1 = 0;
SELECT COUNT(*) FROM DUAL;
CREATE DATABASE du;
USE du;
SELECT 1 FROM `dual`;
SELECT 1 FROM du.dual;
-- LOCK IN SHARE MODE: MySQL's older spelling of FOR SHARE (words inside a
-- string are left alone).
CREATE TABLE l (id INT PRIMARY KEY, v VARCHAR(30));
INSERT INTO l VALUES (1, 'lock in share mode'), (2, 'b');
SELECT id, v FROM l WHERE id = 1 LOCK IN SHARE MODE;
SELECT v FROM l WHERE v = 'lock in share mode' LOCK IN SHARE MODE;
-- UPDATE / DELETE modifiers: LOW_PRIORITY and QUICK change nothing for a
-- transactional table (as InnoDB); IGNORE is refused by name.
UPDATE LOW_PRIORITY l SET v = 'c' WHERE id = 2;
DELETE LOW_PRIORITY QUICK FROM l WHERE id = 1;
SELECT id, v FROM l ORDER BY id;
UPDATE IGNORE l SET id = 1;
DELETE IGNORE FROM l;
SELECT COUNT(*) FROM l;
