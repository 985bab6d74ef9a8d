-- Issue 42 item 7: triggers, stored procedures and functions and events
-- are not implemented; every statement that would make, show, run or drop
-- one is refused by name (1235), never a syntax error, never accepted.
-- Tables and indexes whose names contain those words are not affected.
CREATE DATABASE sp;
USE sp;
CREATE TABLE t (a INT);
CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1;
CREATE DEFINER = `root`@`%` TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.a = 1;
CREATE PROCEDURE p() SELECT 1;
CREATE DEFINER=root@localhost PROCEDURE p() SELECT 1;
CREATE FUNCTION f() RETURNS INT DETERMINISTIC RETURN 1;
CREATE AGGREGATE FUNCTION g RETURNS STRING SONAME 'g.so';
CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO DELETE FROM t;
CREATE OR REPLACE PROCEDURE p() SELECT 1;
CALL p();
DROP TRIGGER tr;
DROP PROCEDURE IF EXISTS p;
DROP FUNCTION f;
DROP EVENT e;
DROP EVENT IF EXISTS e;
ALTER PROCEDURE p COMMENT 'x';
ALTER FUNCTION f SQL SECURITY INVOKER;
ALTER EVENT e DISABLE;
ALTER DEFINER = root EVENT e ENABLE;
SHOW TRIGGERS;
SHOW PROCEDURE STATUS;
SHOW FUNCTION STATUS WHERE Db = 'sp';
SHOW CREATE PROCEDURE p;
SHOW CREATE TRIGGER tr;
SHOW EVENTS;
CREATE TABLE trigger_log (function INT, event INT, procedure_name TEXT);
CREATE INDEX function_idx ON trigger_log (function);
ALTER TABLE trigger_log DROP COLUMN event;
SHOW TABLES;
