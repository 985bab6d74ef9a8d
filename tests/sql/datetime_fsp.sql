-- DATETIME(fsp) / TIMESTAMP(fsp): values rounded to the column's precision on
-- write, half up, as MySQL 8 does (MariaDB truncates instead); the precision
-- shown by SHOW CREATE TABLE and information_schema, values printed with
-- exactly fsp digits; CAST AS DATETIME(fsp) rounds the same way.
CREATE DATABASE fsp;
USE fsp;
CREATE TABLE f (id INT PRIMARY KEY, a DATETIME, b DATETIME(3), c TIMESTAMP(6), d DATETIME(0));
INSERT INTO f VALUES (1, '2024-01-01 10:00:00.4', '2024-01-01 10:00:00.12345', '2024-01-01 10:00:00', '2024-01-01 10:00:00.49');
-- .5 rounds up, and the carry runs into the next day / year.
INSERT INTO f VALUES (2, '2024-01-01 10:00:00.5', '2024-01-01 10:00:00.1235', '2024-01-01 10:00:00.5', '2024-12-31 23:59:59.5');
INSERT INTO f VALUES (3, '1969-12-31 23:59:59.6', '1969-12-31 23:59:59.9996', '1969-12-31 23:59:59.000001', NULL);
SELECT * FROM f ORDER BY id;
-- The stored value is the rounded one.
SELECT id FROM f WHERE a = '2024-01-01 10:00:01';
SELECT id FROM f WHERE b = '2024-01-01 10:00:00.124';
UPDATE f SET b = '2030-06-01 00:00:00.0005' WHERE id = 1;
SELECT b FROM f WHERE id = 1;
SELECT column_name, datetime_precision, column_type FROM information_schema.columns
 WHERE table_schema = 'fsp' AND table_name = 'f' ORDER BY ordinal_position;
SHOW CREATE TABLE f;
SELECT CAST('2024-01-01 10:00:00.123' AS DATETIME), CAST('2024-01-01 10:00:00.5' AS DATETIME);
SELECT CAST('2024-01-01 10:00:00.123456' AS DATETIME(3)), CAST('2024-01-01 10:00:00.1235' AS DATETIME(3)), CAST('2024-01-01 10:00:00.5' AS DATETIME(6));
-- UNION of two precisions: the wider.
SELECT a FROM f WHERE id = 1 UNION ALL SELECT b FROM f WHERE id = 2;
-- CREATE TABLE … AS SELECT keeps a column's precision.
CREATE TABLE g AS SELECT b, CAST(a AS DATETIME(2)) AS x FROM f WHERE id = 2;
SHOW CREATE TABLE g;
SELECT * FROM g;
-- NOW(fsp): the clock cut to fsp digits.
SELECT MICROSECOND(NOW()) = 0, NOW(0) <= NOW(6);
-- Precision above 6: MySQL's 1426.
CREATE TABLE bad (a DATETIME(7));
SELECT CAST('2024-01-01' AS DATETIME(7));
SELECT NOW(7);
