-- MySQL 8 scalar string and math functions (NULL in, NULL out unless noted).
-- CONCAT_WS skips NULL arguments; a NULL separator gives NULL.
SELECT CONCAT_WS(',', 'a', 'b', 'c'), CONCAT_WS(',', 'a', NULL, 'c'), CONCAT_WS(NULL, 'a', 'b'), CONCAT_WS('-', 1, 2.5), CONCAT_WS(',', NULL), CONCAT_WS('', 'x', 'y');
SELECT CONCAT_WS(',');
-- SUBSTRING / SUBSTR / MID: 1-based, negative from the end, 0 gives ''.
SELECT SUBSTRING('Quadratically', 5), SUBSTRING('foobarbar' FROM 4), SUBSTRING('Quadratically', 5, 6), SUBSTRING('Sakila', -3), SUBSTRING('Sakila', -5, 3), SUBSTRING('Sakila' FROM -4 FOR 2);
SELECT SUBSTRING('abc', 0), SUBSTRING('abc', 0, 2), SUBSTRING('abc', 2, 0), SUBSTRING('abc', 2, -1), SUBSTRING('abc', 4), SUBSTRING('abc', -4), SUBSTRING('abc', 3, 100);
SELECT SUBSTR('héllo', 2, 3), MID('héllo', -4, 2), MID('abcdef', 3), SUBSTRING('héllo' FOR 2), SUBSTRING(NULL, 1), SUBSTRING('abc', NULL), SUBSTRING('abc', 1, NULL);
SELECT SUBSTRING('abc', 1, 2, 3);
-- LEFT / RIGHT.
SELECT LEFT('foobarbar', 5), RIGHT('foobarbar', 4), LEFT('héllo', 2), RIGHT('héllo', 4), LEFT('abc', 0), RIGHT('abc', -1), LEFT('abc', 10), LEFT(NULL, 1), RIGHT('abc', NULL);
SELECT LEFT('abc');
-- LPAD / RPAD: truncate to len, NULL for len < 0 and for an empty pad that would be needed.
SELECT LPAD('hi', 4, '??'), LPAD('hi', 1, '??'), RPAD('hi', 5, '?'), RPAD('hi', 1, '?'), LPAD('hi', 5, 'ab'), RPAD('hi', 6, 'xyz');
SELECT LPAD('hi', -1, 'x'), RPAD('hi', 0, 'x'), LPAD('hi', 5, ''), LPAD('hi', 2, ''), LPAD('héllo', 7, 'é'), RPAD('héllo', 3, 'x'), LPAD(NULL, 3, 'x'), LPAD('a', NULL, 'x'), RPAD('a', 3, NULL);
SELECT LPAD('a', 2);
SELECT RPAD('a', 100000000, 'x');
SELECT LENGTH(RPAD('a', 67108864, 'b')), LENGTH(REPEAT('ab', 33554432));
SELECT LPAD('', 33554433, 'é');
-- TRIM / LTRIM / RTRIM (spaces only by default; a removal string is removed repeatedly, whole).
SELECT CONCAT('[', TRIM('  bar   '), ']'), CONCAT('[', LTRIM('  barbar  '), ']'), CONCAT('[', RTRIM('  barbar  '), ']'), TRIM(LEADING 'x' FROM 'xxxbarxxx'), TRIM(BOTH 'x' FROM 'xxxbarxxx'), TRIM(TRAILING 'xyz' FROM 'barxxyz');
SELECT TRIM(BOTH 'ab' FROM 'ababcabab'), TRIM('ab' FROM 'abXab'), TRIM(LEADING 'é' FROM 'éébé'), TRIM('' FROM 'abc'), TRIM(NULL), TRIM('x' FROM NULL), TRIM(NULL FROM 'x'), LTRIM(NULL), RTRIM(NULL), LENGTH(TRIM('\tx\t')) AS tabs_kept;
SELECT TRIM(BOTH 'aa' FROM 'aaa'), TRIM(TRAILING 'a' FROM 'aaaa'), TRIM(LEADING ' ' FROM '  a  ');
SELECT LTRIM('a', 'b');
-- REPLACE (case-sensitive).
SELECT REPLACE('www.mysql.com', 'w', 'Ww'), REPLACE('abcabc', 'B', 'x'), REPLACE('abc', '', 'x'), REPLACE('héllo', 'é', 'e'), REPLACE('aaa', 'aa', 'b'), REPLACE(NULL, 'a', 'b'), REPLACE('a', NULL, 'b'), REPLACE('a', 'a', NULL);
SELECT REPLACE('a', 'b');
-- INSTR / LOCATE / POSITION: 1-based character positions, 0 when absent.
SELECT INSTR('foobarbar', 'bar'), INSTR('xbar', 'foobar'), INSTR('héllo', 'llo'), INSTR('abc', ''), INSTR('', ''), INSTR('', 'a'), INSTR('FooBar', 'bar'), INSTR(NULL, 'a'), INSTR('a', NULL);
SELECT LOCATE('bar', 'foobarbar'), LOCATE('xbar', 'foobar'), LOCATE('bar', 'foobarbar', 5), LOCATE('bar', 'foobarbar', 0), LOCATE('bar', 'foobarbar', -1), LOCATE('bar', 'foobarbar', 100), LOCATE('', 'abc', 2), LOCATE('', 'abc', 4), LOCATE('', 'abc', 5);
SELECT LOCATE('l', 'héllo'), LOCATE('l', 'héllo', 4), LOCATE(NULL, 'a'), LOCATE('a', NULL), LOCATE('a', 'a', NULL), POSITION('bar' IN 'foobarbar'), POSITION('é' IN 'héllo'), POSITION('z' IN 'abc'), POSITION(NULL IN 'abc');
SELECT INSTR('a');
SELECT LOCATE('a');
SELECT LOCATE('a', 'b', 1, 2);
-- REVERSE / REPEAT / SPACE.
SELECT REVERSE('abc'), REVERSE('héllo'), REVERSE(''), REVERSE(NULL), REVERSE(123);
SELECT REPEAT('ab', 3), REPEAT('é', 2), REPEAT('ab', 0), REPEAT('ab', -1), REPEAT('', 5), REPEAT(NULL, 2), REPEAT('a', NULL), LENGTH(REPEAT('x', 1000));
SELECT REPEAT('abc', 100000000);
SELECT REPEAT('a', 9223372036854775807);
SELECT CONCAT('[', SPACE(3), ']'), SPACE(0), SPACE(-2), SPACE(NULL), LENGTH(SPACE(100));
SELECT SPACE(1000000000);
SELECT REPEAT('a');
SELECT SPACE();
-- FLOOR / CEIL / CEILING.
SELECT FLOOR(1.23), FLOOR(-1.23), FLOOR(5), FLOOR(-5), FLOOR('2.7'), FLOOR(NULL), CEIL(1.23), CEIL(-1.23), CEILING(1.23), CEILING(-7), CEIL(NULL), CEIL(2.0);
SELECT CEIL(-0.5), FLOOR(-0.5), CEIL(5), FLOOR(2.5e0);
SELECT FLOOR(1.5, 1);
SELECT CEILING(1, 2);
-- MOD: NULL for a zero divisor.
SELECT MOD(234, 10), MOD(253, 7), MOD(29, 9), MOD(-7, 3), MOD(7, -3), MOD(34.5, 3), MOD(5, 0), MOD(5.5, 0), MOD(NULL, 2), MOD(2, NULL), MOD('7', '2'), MOD(-7.5, 2);
SELECT MOD(1);
-- POW / POWER / EXP / LN / LOG / LOG2 / LOG10.
SELECT POW(2, 2), POW(2, -2), POWER(2, 0.5), POW(-2, 3), POW(0, 0), POW(NULL, 2), POW(2, NULL);
SELECT POW(10, 400);
SELECT POW(-8, 0.5);
SELECT EXP(0), EXP(1), EXP(-1), EXP(NULL);
SELECT EXP(1000);
SELECT LN(1), LN(2), LN(0), LN(-1), LN(NULL);
SELECT LOG(2), LOG(-2), LOG(0), LOG(2, 65536), LOG(10, 100), LOG(1, 100), LOG(0.5, 4), LOG(2, 0), LOG(NULL), LOG(2, NULL);
SELECT LOG2(65536), LOG2(-100), LOG2(0), LOG10(2), LOG10(100), LOG10(-100), LOG10(NULL);
SELECT LOG();
SELECT LOG(1, 2, 3);
SELECT POW(2);
-- Trigonometry.
SELECT SIN(0), COS(0), TAN(0), SIN(PI()/2), COS(PI()), ASIN(1), ACOS(1), ASIN(2), ACOS(-1.5), ATAN(1), ATAN(-2, 2), ATAN2(-2, 2), ATAN2(PI(), 0);
SELECT SIN(NULL), COS(NULL), TAN(NULL), ASIN(NULL), ACOS(NULL), ATAN(NULL), ATAN(1, NULL), ATAN2(NULL, 1);
SELECT ATAN(1, 2, 3);
SELECT ATAN2(1);
SELECT SIN();
-- PI / SIGN / TRUNCATE.
SELECT PI(), PI() * 2;
SELECT PI(1);
SELECT SIGN(-32), SIGN(0), SIGN(234), SIGN(-0.5), SIGN(0.0), SIGN('3'), SIGN(NULL);
SELECT TRUNCATE(1.223, 1), TRUNCATE(1.999, 1), TRUNCATE(1.999, 0), TRUNCATE(-1.999, 1), TRUNCATE(122, -2), TRUNCATE(10.28 * 100, 0), TRUNCATE(0.29, 2), TRUNCATE(123.456, -1), TRUNCATE(5, 2), TRUNCATE(-129, -1), TRUNCATE(NULL, 1), TRUNCATE(1.5, NULL);
SELECT TRUNCATE(1.5);
-- GREATEST / LEAST: NULL if any argument is NULL; numbers compare numerically, otherwise as strings.
SELECT GREATEST(2, 0), GREATEST(34.0, 3.0, 5.0, 767.0), GREATEST('B', 'A', 'C'), GREATEST(1, 2.5), GREATEST(3, 2.5), GREATEST(10, 9), GREATEST('10', '9'), GREATEST(2, '10'), GREATEST('a', NULL);
SELECT LEAST(2, 0), LEAST(34.0, 3.0, 5.0, 767.0), LEAST('B', 'A', 'C'), LEAST(-1, -2.5), LEAST(10, 9), LEAST('10', '9'), LEAST(NULL, 1), LEAST('B', 'a'), GREATEST('B', 'a'), GREATEST('a', 'A'), LEAST('A', 'a');
SELECT GREATEST(1);
SELECT LEAST();
-- NULLIF.
SELECT NULLIF(1, 1), NULLIF(1, 2), NULLIF('a', 'a'), NULLIF('a', 'b'), NULLIF(NULL, 1), NULLIF(1, NULL), NULLIF(1, '1'), NULLIF(2, 2.0), NULLIF('a', 'A'), NULLIF('', 0);
SELECT NULLIF(1);
-- Over table rows (character functions count characters, LENGTH counts bytes).
CREATE DATABASE fn;
USE fn;
CREATE TABLE t (id BIGINT PRIMARY KEY, s VARCHAR(20), n DOUBLE);
INSERT INTO t VALUES (1, 'héllo', 2.5), (2, NULL, -3.7), (3, '', NULL);
SELECT id, LENGTH(s), CHAR_LENGTH(s), LEFT(s, 2), RIGHT(s, 2), REVERSE(s), UPPER(SUBSTRING(s, 2)), LPAD(s, 7, '*'), FLOOR(n), CEIL(n), SIGN(n), TRUNCATE(n, 0) FROM t ORDER BY id;
SELECT id FROM t WHERE LOCATE('l', s) > 0 ORDER BY id;
SELECT id, CONCAT_WS('|', id, s, n) FROM t ORDER BY id;
-- Substring search is linear: a needle that almost matches everywhere.
SELECT LOCATE(CONCAT(REPEAT('a', 100000), 'b'), REPEAT('a', 1000000)), INSTR(CONCAT(REPEAT('a', 1000000), 'b'), CONCAT(REPEAT('a', 100000), 'b'));
-- Vector arithmetic (MatrixOne): element-wise between vectors of one
-- dimension, and with a scalar; VECF32 ↔ VECF64 casts.
SELECT CAST('[1,2]' AS VECF32(2)) + CAST('[3,4]' AS VECF32(2)), CAST('[1,2]' AS VECF32(2)) - CAST('[3,4]' AS VECF64(2));
SELECT CAST('[1,2]' AS VECF32(2)) * CAST('[3,4]' AS VECF32(2)), CAST('[3,4]' AS VECF32(2)) / CAST('[2,8]' AS VECF32(2));
SELECT CAST('[1,2]' AS VECF32(2)) * 2, CAST('[1,2]' AS VECF32(2)) + 0.5, CAST('[1,2]' AS VECF32(2)) / 4, 2 * CAST('[1,2]' AS VECF32(2));
SELECT 3 - CAST('[1,2]' AS VECF64(2));
SELECT CAST('[1,2]' AS VECF32(2)) / 0;
SELECT CAST('[1,2]' AS VECF32(2)) / CAST('[1,0]' AS VECF32(2));
SELECT CAST('[1,2]' AS VECF32(2)) + CAST('[1,2,3]' AS VECF32(3));
SELECT CAST(CAST('[1.5,2]' AS VECF32(2)) AS VECF64(2)), CAST(CAST('[0.1,2]' AS VECF64(2)) AS VECF32(2));
SELECT CAST(CAST('[1,2]' AS VECF32(2)) AS VECF64(3));
SELECT vector_dims(CAST('[1,2]' AS VECF32(2)) * 3), l2_norm(CAST('[3,4]' AS VECF64(2)) + 0);
-- The function registry checks names and argument counts when a statement
-- is compiled, as MySQL does: even where no row would evaluate the call.
SELECT ABS(1, 2) FROM (SELECT 1 AS a) t WHERE a = 0;
SELECT nosuchfn(a) FROM (SELECT 1 AS a) t WHERE a = 0;
SELECT ROUND(1, 2, 3), CONCAT();
SELECT JSON_OBJECT('a');
-- UUID(): version 1, a different one per call (never folded); UUID_SHORT() counts up
SELECT LENGTH(UUID()) AS len, IS_UUID(UUID()) AS ok, SUBSTRING(UUID(), 15, 1) AS version, UUID() = UUID() AS same, UUID_SHORT() < UUID_SHORT() AS up;
SELECT COUNT(DISTINCT u) FROM (SELECT UUID() AS u FROM (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) t) d;
SELECT IS_UUID('6ccd780c-baba-1026-9564-5b8c656024db'), IS_UUID('{6ccd780c-baba-1026-9564-5b8c656024db}'), IS_UUID('6ccd780cbaba102695645b8c656024db'), IS_UUID('6ccd780c-baba-1026-9564-5b8c656024d'), IS_UUID(NULL);
SELECT UUID(1);
SELECT LENGTH(UUID_TO_BIN(UUID())), BIN_TO_UUID(UUID_TO_BIN('6ccd780c-baba-1026-9564-5b8c656024db'));
