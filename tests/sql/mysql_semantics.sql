-- Issue 38: conversions and three-valued logic as MySQL 8 in its default sql_mode (checked against MariaDB).
-- BETWEEN with a NULL bound: one false bound decides.
SELECT 5 NOT BETWEEN NULL AND 3, 1 BETWEEN 2 AND NULL, 2 BETWEEN NULL AND 3, 4 NOT BETWEEN 1 AND NULL;
CREATE DATABASE sem;
USE sem;
CREATE TABLE b (id INT PRIMARY KEY, c INT);
INSERT INTO b VALUES (1, 10), (2, 24), (3, 30), (4, NULL);
SELECT id FROM b WHERE c NOT BETWEEN 24 AND NULL ORDER BY id;
SELECT id FROM b WHERE c BETWEEN NULL AND 20 ORDER BY id;
SELECT id FROM b WHERE NOT (c BETWEEN 25 AND NULL) ORDER BY id;
-- IS TRUE / FALSE / UNKNOWN test the truth value.
SELECT 2 IS TRUE, 0.5 IS TRUE, 'abc' IS FALSE, NULL IS UNKNOWN, 0 IS NOT TRUE, NULL IS NOT FALSE;
-- Row constructors.
SELECT (1, 2) = (1, 2), (1, NULL) = (1, 2), (1, NULL) < (2, 1), (1, 2) IN ((3, 4), (1, 2)), (1, 3) NOT IN ((1, 2), (3, NULL)), (1, NULL) <=> (1, NULL);
SELECT (1, 2) = (1, 2, 3);
SELECT id FROM b WHERE (id, c) IN ((1, 10), (2, 99), (3, 30)) ORDER BY id;
-- A string in a numeric context: its longest numeric prefix, warning 1292.
SELECT '3x' + 1, '3 ' + 1, '' + 1, '1e2x' + 0, '.5x' * 2, '-x' + 0, '0x10' + 0, 'abc' = 0, '3x' = 3;
SELECT '3' + 1, -'2.5', ABS('-3');
SELECT CAST('12abc' AS SIGNED), CAST(' 7 ' AS SIGNED), CAST('' AS SIGNED);
-- Invalid dates: NULL with a warning in expressions, 1292 on write.
SELECT CAST('2020-02-30' AS DATE), CAST('2020-02-29' AS DATE), CAST('2021-13-01' AS DATETIME), DATE('2021-02-29'), CAST('x' AS DATE);
CREATE TABLE w (id INT PRIMARY KEY, i INT, d DATE, s VARCHAR(10));
INSERT INTO w (id, d) VALUES (1, '2020-02-30');
-- Strict mode (the default): a conversion warning while rows are written is an error, nothing is written.
INSERT INTO w (id, i) VALUES (2, '3x' + 1);
INSERT INTO w (id, i) VALUES (3, 1), (4, '3x' + 1);
SELECT COUNT(*) FROM w;
INSERT INTO w (id, s) VALUES (5, 'a'), (6, '7');
UPDATE w SET i = 1 WHERE s = 0;
DELETE FROM w WHERE s = 0;
SELECT id, i, s FROM w ORDER BY id;
-- INSERT IGNORE keeps them warnings.
INSERT IGNORE INTO w (id, i) VALUES (7, '3x' + 1);
SELECT id, i FROM w WHERE id = 7;
-- Without a strict mode they are warnings.
SET sql_mode = 'NO_ENGINE_SUBSTITUTION';
INSERT INTO w (id, i) VALUES (8, '3x' + 1);
UPDATE w SET i = 2 WHERE s = 0;
SELECT id, i, s FROM w ORDER BY id;
SET sql_mode = DEFAULT;
SELECT @@sql_mode;
SET sql_mode = 'TRADITIONAL';
INSERT INTO w (id, i) VALUES (9, '3x' + 1);
SET sql_mode = 'ANSI_QUOTES';
-- BIGINT overflow is 1690; the smallest BIGINT is one literal.
SELECT -9223372036854775808, -9223372036854775808 + 0;
SELECT -9223372036854775808 - 1;
SELECT 9223372036854775807 + 1;
SELECT -(-9223372036854775808);
SELECT ABS(-9223372036854775808), ABS(-9223372036854775807);
-- Only the arguments that decide the answer are evaluated; LOG with a base below 1; WEEK with a NULL mode.
SELECT COALESCE(1, COT(0)), IFNULL(2, COT(0)), IF(1, 3, COT(0)), IF(0, COT(0), 4), WEEK('2024-02-29', NULL), LOG(0.5e0, 8e0), LOG(1, 8), -(1 + 2), CASE WHEN TRUE THEN 1 END;
SELECT 7 MOD 3, -7 MOD 3, 7.5 MOD 2, MOD(7, 3);
SELECT ROUND(2.5e0), ROUND(-2.5e0), ROUND(3.5e0), ROUND(25, -1), ROUND(2.5), ROUND(-2.5), CAST(2.5e0 AS SIGNED), CAST(-3.5e0 AS SIGNED), ROUND(1.5, NULL), ROUND(1.5e0, NULL);
SELECT CAST(1e300 AS SIGNED), CAST(-1e300 AS SIGNED), CAST(EXP(100) AS SIGNED);
-- A DOUBLE MySQL types with fixed decimals converts to text with them (CAST / CONCAT); the value is not rounded.
SELECT CAST(PI() AS CHAR), CONCAT(PI(), 'x'), CAST(TRUNCATE(1e3, 4) AS CHAR), CAST(1e0 + 0.5 AS CHAR), PI() * 1e0 = PI(), CAST(ROUND(-0.4e0) AS CHAR);
SELECT CAST(MOD(PI(), 2) AS CHAR), CAST(PI() MOD 2 AS CHAR), CAST(MOD(PI(), 1e0) AS CHAR);
-- The negation of BIGINT's minimum is the DECIMAL 9223372036854775808 (was a panic); FLOOR/CEIL of a DOUBLE are DOUBLEs with no fractional digits.
SELECT -(-9223372036854775808), -(0 - 2), -CEILING(-5), CAST(CEIL(2.5e0) / 0.5 AS CHAR), CEIL(-0.5e0), FLOOR('2.5') + 0.25;
