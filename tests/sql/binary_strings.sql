-- Binary strings (BINARY / VARBINARY / BLOB): storage, keys in byte order,
-- literals and functions. Answers as MySQL 8 gives them; checked against
-- MariaDB 10.11, which agrees except where a comment says so (it has no
-- UUID_TO_BIN / BIN_TO_UUID: those follow MySQL 8's manual).
CREATE DATABASE bs;
USE bs;
-- SHOW CREATE TABLE prints a binary default as 0x… (MariaDB: 'xy'); both
-- read back to the same bytes.
CREATE TABLE b (id INT PRIMARY KEY, fx BINARY(4), vb VARBINARY(8) DEFAULT 'xy', bl BLOB, tb TINYBLOB, mb MEDIUMBLOB, lb LONGBLOB);
SHOW CREATE TABLE b;
SELECT COLUMN_NAME, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH, CHARACTER_SET_NAME, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'bs' AND TABLE_NAME = 'b' ORDER BY ORDINAL_POSITION;
INSERT INTO b VALUES (1, X'01', 0x00FF, 'abc', _binary 'x', NULL, '');
INSERT INTO b VALUES (2, 'ab', 'hello', X'00', NULL, NULL, NULL);
INSERT INTO b (id, fx) VALUES (3, NULL);
INSERT INTO b (id, vb) VALUES (4, 0x80);
-- BINARY(n) is right-padded with 0x00; DEFAULT applies; NULLs stay NULL.
SELECT id, HEX(fx), LENGTH(fx), HEX(vb), LENGTH(vb), HEX(bl), HEX(tb), mb IS NULL, LENGTH(lb) FROM b ORDER BY id;
-- Too long in strict mode: 1406.
INSERT INTO b (id, vb) VALUES (9, '123456789');
INSERT INTO b (id, fx) VALUES (9, 'abcde');
INSERT INTO b (id, tb) VALUES (9, REPEAT('x', 256));
UPDATE b SET vb = X'0102030405060708090A' WHERE id = 1;
-- Byte order, byte comparisons.
SELECT id, HEX(vb) FROM b ORDER BY vb, id;
SELECT id FROM b WHERE vb = 'hello';
SELECT id FROM b WHERE vb > X'7F' ORDER BY id;
SELECT id FROM b WHERE fx = 'ab';
SELECT id FROM b WHERE fx = X'61620000';
UPDATE b SET vb = CONCAT(vb, X'00') WHERE id = 2;
SELECT HEX(vb) FROM b WHERE id = 2;
-- BINARY(16) keys (UUIDs), in memcmp order.
CREATE TABLE k (u BINARY(16) PRIMARY KEY, name VARCHAR(10));
INSERT INTO k VALUES (UUID_TO_BIN('6ccd780c-baba-1026-9564-5b8c656024db'), 'a'), (UUID_TO_BIN('00000000-0000-0000-0000-000000000001'), 'b'), (X'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF', 'c'), (X'80000000000000000000000000000000', 'd');
SELECT BIN_TO_UUID(u), name FROM k ORDER BY u;
SELECT name FROM k WHERE u = UUID_TO_BIN('6ccd780c-baba-1026-9564-5b8c656024db');
SELECT name FROM k WHERE u > X'7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF' ORDER BY u DESC;
INSERT INTO k VALUES (X'80000000000000000000000000000000', 'dup');
-- UNIQUE and secondary indexes on VARBINARY.
CREATE TABLE s (id INT PRIMARY KEY, h VARBINARY(4));
CREATE UNIQUE INDEX uh ON s (h);
INSERT INTO s VALUES (1, X'00'), (2, X'0000'), (3, X'FF'), (4, ''), (5, NULL), (6, NULL), (7, X'7F'), (8, X'00FF');
INSERT INTO s VALUES (9, X'0000');
SELECT id, HEX(h) FROM s ORDER BY h, id;
SELECT id FROM s WHERE h = X'0000';
SELECT id FROM s WHERE h > X'00' ORDER BY h;
CREATE TABLE m (id INT PRIMARY KEY, h VARBINARY(4));
CREATE INDEX mh ON m (h);
INSERT INTO m SELECT * FROM s;
INSERT INTO m VALUES (10, X'0000');
SELECT id FROM m WHERE h >= X'7F' ORDER BY h, id;
SELECT id FROM m WHERE h = X'0000' ORDER BY id;
SELECT id FROM m WHERE h IS NULL ORDER BY id;
SELECT HEX(h), COUNT(*) FROM m GROUP BY h ORDER BY h;
-- A prefix key on a BLOB (MySQL requires one) holds whole values here.
CREATE TABLE p (id INT PRIMARY KEY, bl BLOB);
CREATE INDEX pb ON p (bl(4));
INSERT INTO p VALUES (1, X'0102030405'), (2, X'01020304'), (3, X'FF');
SELECT id FROM p WHERE bl = X'01020304';
SELECT id FROM p WHERE bl >= X'0102030400' ORDER BY bl;
SELECT COUNT(DISTINCT h) FROM m;
-- Literals: X'..' and 0x.. are binary strings, numbers in arithmetic and
-- CAST to a number (MySQL 8's manual: X'41' + 0 and CAST(X'41' AS
-- UNSIGNED) are 65; MariaDB reads X'..' (not 0x..) as a string there: 1, 12).
SELECT HEX(X'0AFF'), HEX(0x0AFF), HEX(0xAFF), 0x41, X'41' + 1, 0x41 + 0, 0x41 = 65, CAST(X'3132' AS UNSIGNED);
-- Beside a column a hexadecimal literal is a number or bytes as the
-- column's value is.
CREATE TABLE z (id INT PRIMARY KEY, v VARCHAR(10), b VARBINARY(4));
INSERT INTO z VALUES (65, 'A', 'A'), (1, 'x', X'01');
SELECT id FROM z WHERE id = 0x41;
SELECT id FROM z WHERE 0x41 = id;
SELECT id FROM z WHERE v = 0x41;
SELECT id FROM z WHERE b = 0x41;
SELECT id FROM z WHERE id IN (0x41, 1) ORDER BY id;
SELECT id FROM z WHERE v IN (0x41, 'x') ORDER BY id;
SELECT id FROM z WHERE id > 0x01 ORDER BY id;
SELECT HEX(_binary 'abc'), HEX(CAST('ab' AS BINARY(4))), HEX(BINARY 'é'), HEX(CONVERT('é' USING binary));
SELECT HEX(CAST('abcdef' AS BINARY(3)));
-- Bytes read as utf8mb4: a byte that starts no character is '?' (1300;
-- MariaDB's message shows the bytes as '\xFFA').
SELECT HEX(CAST(X'FF41' AS CHAR)), HEX(CONVERT(X'FF41' USING utf8mb4)), CAST(X'4142' AS CHAR), CAST(_binary 'é' AS CHAR(1));
-- LENGTH counts bytes; a binary string's characters are bytes.
SELECT LENGTH('é'), CHAR_LENGTH('é'), LENGTH(_binary 'é'), CHAR_LENGTH(_binary 'é'), CHAR_LENGTH(BINARY 'é');
SELECT HEX(CONCAT('a', X'00', 'b')), LENGTH(CONCAT(X'FF', 'é')), CHAR_LENGTH(CONCAT(X'FF', 'é')), HEX(CONCAT_WS(X'00', 'a', 'b'));
SELECT HEX(SUBSTRING(X'0102030405', 2, 3)), HEX(LEFT(X'010203', 2)), HEX(RIGHT(X'010203', 2)), HEX(SUBSTRING(_binary 'é!', 2));
SELECT HEX(UNHEX('0aff')), UNHEX('zz'), HEX(UNHEX('abc')), UNHEX(NULL), HEX(FROM_BASE64('AP8=')), TO_BASE64(X'00FF');
SELECT HEX(LOWER(_binary 'AbC')), HEX(UPPER(X'61')), HEX(REVERSE(X'0102')), HEX(REPEAT(X'01', 3));
SELECT HEX(LPAD(X'01', 4, X'0A0B')), HEX(RPAD(_binary 'é', 3, X'00')), HEX(LPAD(X'010203', 2, X'00')), HEX(TRIM(_binary '  a ')), HEX(RTRIM(X'2000')), HEX(TRIM(BOTH X'00' FROM X'000100'));
SELECT HEX(REPLACE(X'00010001', X'00', X'FF')), INSTR(_binary 'éa', 'a'), INSTR('éa', 'a'), LOCATE(X'01', X'000100', 3), LOCATE(X'01', X'000101', 3);
-- UUID_TO_BIN / BIN_TO_UUID, with and without the swap.
SELECT HEX(UUID_TO_BIN('6ccd780c-baba-1026-9564-5b8c656024db')), HEX(UUID_TO_BIN('{6CCD780C-BABA-1026-9564-5B8C656024DB}', 1));
SELECT BIN_TO_UUID(UUID_TO_BIN('6ccd780c-baba-1026-9564-5b8c656024db', 1), 1), BIN_TO_UUID(UNHEX('6CCD780CBABA102695645B8C656024DB')), BIN_TO_UUID(NULL);
SELECT UUID_TO_BIN('nope');
SELECT BIN_TO_UUID(X'00');
-- Digests of bytes.
SELECT MD5(X'00FF'), SHA2(X'00FF', 256), MD5(_binary 'abc') = MD5('abc'), HEX(X'00FF') = HEX(_binary X'00FF');
-- Binary beside text compares bytes: case and accents matter.
SELECT X'61' = 'a', _binary 'a' = 'A', _binary 'abc' < 'abd', X'FF' > 'z', (BINARY 'a') = 'a', BINARY('A') = 'a';
-- A text column takes UTF-8 bytes only (MySQL 8's utf8mb4: 1366; MariaDB's
-- latin1 default stores 0xFF); JSON takes no binary string (MySQL 8's 3144).
CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(10), j JSON);
INSERT INTO t VALUES (1, X'FF', NULL);
INSERT INTO t VALUES (2, X'616263', NULL);
INSERT INTO t VALUES (3, NULL, X'7B7D');
SELECT id, s FROM t;
DROP DATABASE bs;
