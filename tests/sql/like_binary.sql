-- LIKE with a binary string on either side (`x LIKE BINARY p`, `BINARY x
-- LIKE p`, `CAST(x AS BINARY) LIKE p`): bytes are matched, whatever the
-- collation, and `_` is one byte. Django's `contains`, `startswith` and
-- `endswith` lookups send it. Checked against MariaDB 10.11.
SELECT 'abc' LIKE BINARY 'ABC' AS c1, 'abc' LIKE BINARY 'abc' AS c2, 'abc' LIKE BINARY 'a%' AS c3, 'abc' LIKE BINARY '%C' AS c4;
SELECT 'abc' LIKE 'ABC' COLLATE utf8mb4_general_ci AS c1;
-- An explicit COLLATE outranks the binary string (MariaDB: 1): not yet.
SELECT 'abc' COLLATE utf8mb4_general_ci LIKE BINARY 'ABC' AS c2;
SELECT 'é' LIKE BINARY '_' AS c1, 'é' LIKE BINARY '__' AS c2, 'é' LIKE '_' AS c3, 'xéy' LIKE BINARY 'x%y' AS c4;
SELECT NULL LIKE BINARY 'a' AS c1, 'a' LIKE BINARY NULL AS c2, 'abc' NOT LIKE BINARY 'A%' AS c3, 'abc' NOT LIKE BINARY 'a%' AS c4;
SELECT 'a_c' LIKE BINARY 'a\_c' AS c1, 'abc' LIKE BINARY 'a\_c' AS c2, '50%' LIKE BINARY '%\%' AS c3, 123 LIKE BINARY '12%' AS c4;
SELECT (BINARY 'Abc') LIKE 'a%' AS c1, CAST('Abc' AS BINARY) LIKE 'A%' AS c2, 'Abc' LIKE (BINARY 'A%') AS c3;
-- The parser reads `BINARY x LIKE p` as BINARY (x LIKE p) (MySQL: (BINARY x)
-- LIKE p): refused. A binary string elsewhere compares bytes.
SELECT BINARY 'Abc' LIKE 'a%';
SELECT BINARY 'abc' = 'abc';
SELECT 'abc' = BINARY 'abc', 'abc' = BINARY 'ABC', BINARY ('a' = 'a');
CREATE DATABASE lb;
USE lb;
CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20) COLLATE utf8mb4_general_ci);
INSERT INTO t VALUES (1, 'Gone-1'), (2, 'gone-2'), (3, 'kept'), (4, NULL);
SELECT id FROM t WHERE name LIKE 'gone-%' ORDER BY id;
SELECT id FROM t WHERE name LIKE BINARY 'gone-%' ORDER BY id;
SELECT id FROM t WHERE name NOT LIKE BINARY '%-%' ORDER BY id;
SELECT COUNT(*) FROM t WHERE name LIKE BINARY '%one%';
DROP DATABASE lb;
