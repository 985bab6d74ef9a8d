-- Hash and encoding functions (answers checked against MariaDB 10.11, except
-- SHA2(s, NULL): NULL as MySQL 8's manual says; MariaDB reads NULL as 0).
SELECT MD5('abc'), SHA1('abc'), SHA('abc');
SELECT SHA2('abc', 224), SHA2('abc', 0), SHA2('abc', 256), LENGTH(SHA2('abc', 384)), LENGTH(SHA2('abc', 512));
SELECT SHA2('abc', 100), SHA2(NULL, 256), SHA2('abc', NULL), MD5(NULL), SHA1(NULL);
SELECT MD5(123), MD5(1.50), MD5('é'), CRC32('MySQL'), CRC32(''), CRC32(NULL);
SELECT HEX(255), HEX(-1), HEX('abc'), HEX(1.5), HEX(2.5), HEX(0), HEX(''), HEX(NULL);
SELECT TO_BASE64('abc'), TO_BASE64(''), TO_BASE64(REPEAT('x', 60)), TO_BASE64(NULL);
SELECT UNHEX('41');
