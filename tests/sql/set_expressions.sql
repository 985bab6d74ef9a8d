-- SET with expressions (issue 42): a user or system variable set from any
-- expression, a subquery included; checked against MariaDB 10.11.
CREATE DATABASE se;
USE se;
CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), score DECIMAL(5,2));
INSERT INTO t VALUES (1, 'ann', 10.50), (2, 'bob', 20.25), (3, 'cy', NULL);
SET @n = (SELECT COUNT(*) FROM t);
SET @top = (SELECT name FROM t ORDER BY score DESC LIMIT 1), @total := (SELECT SUM(score) FROM t);
SELECT @n, @top, @total;
SET @a = 1, @b = @a + 1, @c = CONCAT('x', @b);
SELECT @a, @b, @c;
SET @s = CONCAT('5'), @i = 5, @d = 0.5 * 2, @neg = - 5 + 1;
SELECT @s, @i, @d, @neg;
SET @m = (SELECT MAX(id) FROM t WHERE score IS NOT NULL) * 10;
SELECT @m;
SET @none = (SELECT name FROM t WHERE id = 99);
SELECT @none IS NULL;
SET sort_buffer_size = 1024 * 1024;
SELECT @@sort_buffer_size;
SET @@session.max_execution_time = (SELECT 2 * 1000);
SELECT @@max_execution_time;
SET max_execution_time = DEFAULT;
-- A subquery with more than one row, an unknown column, bad syntax.
SET @x = (SELECT id FROM t);
SET @x = (SELECT nope FROM t);
SET @x = 1 +;
SET @x = (1, 2);
-- SELECT … INTO @v, … (MySQL's leading form): one row to the variables.
SELECT COUNT(*), MAX(score) INTO @cnt, @best FROM t;
SELECT @cnt, @best;
SELECT name INTO @who FROM t WHERE id = 2;
SELECT @who;
-- No row: warning 1329, the variable keeps its value.
SELECT name INTO @who FROM t WHERE id = 99;
SHOW WARNINGS;
SELECT @who;
-- More than one row 1172, a column count that differs 1222, INTO a table or a file refused.
SELECT name INTO @who FROM t;
SELECT 1 INTO @a, @b;
SELECT 7 UNION SELECT 7 INTO @u;
SELECT id INTO OUTFILE '/tmp/x' FROM t;
SELECT id INTO t2 FROM t;
-- The trailing form (MySQL 8's preferred one): after the FROM clause, at
-- the end or before a locking clause.
SELECT name FROM t WHERE id = 1 INTO @who;
SELECT @who;
SELECT COUNT(*), SUM(id) FROM t WHERE id > 1 INTO @c, @s;
SELECT @c, @s;
SELECT name FROM t WHERE id = 3 FOR UPDATE INTO @who;
SELECT @who;
SELECT name FROM t WHERE id = 2 INTO @who FOR UPDATE;
SELECT @who;
SELECT name FROM t INTO @who;
SELECT name FROM t WHERE id = 1 INTO @a, @b;
SELECT id FROM t WHERE id = 1 INTO t2;
SELECT 'into' AS w FROM t WHERE name = 'into' INTO @w;
SELECT @w;
