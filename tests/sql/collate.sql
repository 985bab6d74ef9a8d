-- COLLATE (issue 38 item 6b, first step): utf8mb4_bin in expressions and on columns; utf8mb4_general_ci came later (tests/sql/collations.sql), then utf8mb4_0900_ai_ci (tests/sql/collations_0900.sql); every other collation is refused (1235), never accepted and ignored.
-- Checked against MariaDB 10.11 with utf8mb4_bin columns; its default collation is case-insensitive, so its 'a' = 'A' is 1 where Tributary's default (utf8mb4_bin, unchanged) gives 0.
SELECT 'a' = 'A', 'a' = 'A' COLLATE utf8mb4_bin, 'a' COLLATE utf8mb4_bin = 'a', 'b' > 'A' COLLATE utf8mb4_bin, 'abc' COLLATE UTF8MB4_BIN LIKE 'a%';
SELECT 'a' = 'A' COLLATE utf8mb4_general_ci;
SELECT 'a' = 'A' COLLATE utf8mb4_0900_ai_ci;
CREATE DATABASE co;
USE co;
CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10) COLLATE utf8mb4_bin);
INSERT INTO t VALUES (1, 'b'), (2, 'B'), (3, 'a'), (4, 'A');
SELECT s FROM t ORDER BY s COLLATE utf8mb4_bin;
SELECT s COLLATE utf8mb4_bin AS c, COUNT(*) FROM t GROUP BY c ORDER BY c;
SELECT COUNT(*) FROM t WHERE s = 'a' COLLATE utf8mb4_bin;
SELECT s FROM t ORDER BY s COLLATE utf8mb4_general_ci;
CREATE TABLE u (id INT PRIMARY KEY, s VARCHAR(10) COLLATE utf8mb4_general_ci);
CREATE TABLE u (id INT PRIMARY KEY, s VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_0900_ai_ci);
ALTER TABLE t ADD COLUMN x VARCHAR(5) COLLATE utf8mb4_unicode_ci;
ALTER TABLE t ADD COLUMN y VARCHAR(5) COLLATE utf8mb4_bin;
SELECT * FROM t ORDER BY id;
DROP DATABASE co;
