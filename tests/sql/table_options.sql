-- Clauses that change what a table holds or how text compares are honoured or refused,
-- never accepted and ignored (issue 38 item 4, docs/COMPATIBILITY.md "Accepted clauses").
CREATE DATABASE o1 CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
CREATE DATABASE o2 DEFAULT CHARSET = latin1;
CREATE DATABASE o3 COLLATE utf8mb4_general_ci;
USE o1;
-- Storage hints of InnoDB change no answer: accepted.
CREATE TABLE t1 (id INT PRIMARY KEY) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 ROW_FORMAT = DYNAMIC KEY_BLOCK_SIZE = 8 STATS_PERSISTENT = 1 COMMENT = 'c';
-- Another engine, character set or collation: refused.
CREATE TABLE t2 (id INT) ENGINE = MyISAM;
CREATE TABLE t3 (id INT) DEFAULT CHARSET = latin1;
CREATE TABLE t4 (id INT) COLLATE = utf8mb4_unicode_ci;
CREATE TABLE t5 (a VARCHAR(10) CHARACTER SET latin1);
CREATE TABLE t6 (a VARCHAR(10) COLLATE utf8mb4_general_ci);
CREATE TABLE t7 (a VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin);
-- AUTO_INCREMENT = n: the first value generated.
CREATE TABLE t8 (id INT AUTO_INCREMENT PRIMARY KEY, x INT) AUTO_INCREMENT = 100;
INSERT INTO t8 (x) VALUES (1), (2);
SELECT id, x FROM t8 ORDER BY id;
-- A session's private table is not offered.
CREATE TEMPORARY TABLE t9 (id INT);
-- FLOAT(M,D) rounds what it stores: refused; FLOAT(p > 24) and REAL are DOUBLE.
CREATE TABLE t10 (a FLOAT(7,4));
CREATE TABLE t11 (a DOUBLE(10,2));
CREATE TABLE t12 (a FLOAT(30), b REAL, c FLOAT(10));
SHOW CREATE TABLE t12;
SET NAMES utf8mb4 COLLATE utf8mb4_bin;
SET NAMES utf8mb4 COLLATE utf8mb4_0900_ai_ci;
SET NAMES latin1 COLLATE latin1_swedish_ci;
SET NAMES utf8mb4 COLLATE latin1_swedish_ci;
SET collation_connection = utf8mb4_general_ci;
SELECT @@collation_connection;
