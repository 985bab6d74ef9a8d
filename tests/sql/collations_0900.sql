-- utf8mb4_0900_ai_ci (issue 38 item 6): the primary weights of Unicode's DUCET 9.0.0 as MySQL 8's uca900 computes them, NO PAD.
-- MariaDB 10.11 has no utf8mb4_0900_ai_ci: every expected output is MySQL 8's, argued from allkeys-9.0.0.txt (primaries in the comments).
-- a 1C47 = A = á (á lists a's primary and a secondary only); ß 00DF lists 1E71 1E71 (= ss); Æ lists 1C47 1CAA (= AE); ﬁ lists 1CE5 1D32 (= fi).
SELECT 'a' = 'A' COLLATE utf8mb4_0900_ai_ci, 'a' = 'á' COLLATE utf8mb4_0900_ai_ci, 'ß' = 'ss' COLLATE utf8mb4_0900_ai_ci, 'Æ' = 'ae' COLLATE utf8mb4_0900_ai_ci, 'ﬁ' = 'FI' COLLATE utf8mb4_0900_ai_ci;
-- NO PAD: the space is a primary (0209, non-ignorable), so 'a' < 'a ' and 'a b' < 'ab' (0209 < b 1C60); ı 1D36 is not i 1D32; ø is o 1DDD plus a secondary.
SELECT 'a' = 'a ' COLLATE utf8mb4_0900_ai_ci, 'a' < 'a ' COLLATE utf8mb4_0900_ai_ci, 'a b' < 'ab' COLLATE utf8mb4_0900_ai_ci, 'ı' = 'i' COLLATE utf8mb4_0900_ai_ci, 'ø' = 'O' COLLATE utf8mb4_0900_ai_ci;
-- Implicit weights (FB40 + cp>>15, cp&0x7FFF|0x8000) sort ideographs after every listed letter; a soft hyphen (U+00AD) has no primary and is ignored; the syllable 가 weighs its jamo ᄀ 3BF5 + ᅡ 3C73.
SELECT '一' > 'z' COLLATE utf8mb4_0900_ai_ci, '一' < '丁' COLLATE utf8mb4_0900_ai_ci, 'co­op' = 'coop' COLLATE utf8mb4_0900_ai_ci, '가' = '가' COLLATE utf8mb4_0900_ai_ci, '가' = 'ᄀ' COLLATE utf8mb4_0900_ai_ci;
-- LIKE compares character by character (my_wildcmp_uca): 'ß' is one character, 'ss' two.
SELECT 'ß' LIKE 'ss' COLLATE utf8mb4_0900_ai_ci, 'straße' LIKE 'STRA_E' COLLATE utf8mb4_0900_ai_ci, 'Ébc' LIKE 'e%' COLLATE utf8mb4_0900_ai_ci, 'a' LIKE 'a ' COLLATE utf8mb4_0900_ai_ci, 'ABC' LIKE 'a%';
-- INSTR / LOCATE compare byte windows of the needle's length (my_instr_mb): 'ß' is two bytes, as 'SS' is.
SELECT INSTR('Straße' COLLATE utf8mb4_0900_ai_ci, 'SS'), LOCATE('É', 'café' COLLATE utf8mb4_0900_ai_ci), INSTR('Straße', 'SS');
SELECT 'ABC' REGEXP 'abc' COLLATE utf8mb4_0900_ai_ci, 'ABC' REGEXP 'abc';
SELECT 'a' COLLATE utf8mb4_0900_ai_ci = 'A' COLLATE utf8mb4_general_ci;
SELECT 'a' COLLATE utf8mb4_0900_ai_ci = 'A', 'a' COLLATE utf8mb4_0900_ai_ci = 'A' COLLATE utf8mb4_0900_ai_ci;
SET NAMES utf8mb4 COLLATE utf8mb4_0900_ai_ci;
SELECT @@collation_connection, @@collation_database, @@collation_server, 'a' = 'A';
SHOW COLLATION LIKE 'utf8mb4_0900%';
SELECT COLLATION_NAME, ID, IS_DEFAULT, SORTLEN, PAD_ATTRIBUTE FROM information_schema.COLLATIONS WHERE COLLATION_NAME = 'utf8mb4_0900_ai_ci';
-- Tributary keeps the database default utf8mb4_bin (MySQL 8 accepts this): refused, never ignored.
CREATE DATABASE d9 COLLATE utf8mb4_0900_ai_ci;
CREATE DATABASE u9;
USE u9;
CREATE TABLE w (id INT PRIMARY KEY, s VARCHAR(20) COLLATE utf8mb4_0900_ai_ci);
SHOW CREATE TABLE w;
INSERT INTO w VALUES (1, 'Straße'), (2, 'STRASSE'), (3, 'strasse '), (4, 'Æsop'), (5, 'aesop'), (6, 'Zoë'), (7, 'zoe'), (8, 'éclair'), (9, 'Eclair'), (10, '一'), (11, 'a-b'), (12, 'ab'), (13, NULL);
SELECT id FROM w WHERE s = 'strasse' ORDER BY id;
SELECT id FROM w WHERE s IN ('AESOP', 'ZOE') ORDER BY id;
SELECT id FROM w WHERE s > 'z' ORDER BY id;
SELECT id FROM w WHERE s = 'zoe' COLLATE utf8mb4_bin ORDER BY id;
-- '-' 020D sorts before letters; 'a-b' < 'ab' < 'aesop'; ideographs last; NULL first.
SELECT s FROM w ORDER BY s, id;
SELECT s FROM w ORDER BY s DESC, id;
SELECT MIN(id), COUNT(*) FROM w GROUP BY s ORDER BY MIN(id);
SELECT COUNT(DISTINCT s), MIN(s), MAX(s) FROM w;
SELECT DISTINCT s FROM w WHERE id IN (4, 5, 6, 7, 10) ORDER BY s;
SELECT id FROM w WHERE s LIKE 'stra%e' ORDER BY id;
SELECT id FROM w WHERE s LIKE '%ss%' ORDER BY id;
SELECT x.id, y.id FROM w x JOIN w y ON x.s = y.s AND x.id < y.id ORDER BY x.id;
-- A table default applies to its text columns.
CREATE TABLE d (s VARCHAR(5)) COLLATE=utf8mb4_0900_ai_ci;
SHOW CREATE TABLE d;
INSERT INTO d VALUES ('A'), ('a'), ('á'), ('b');
SELECT COUNT(DISTINCT s) FROM d;
-- Keys over such a column key by its weight string: case, accents and
-- expansions collide (MySQL 8: 1062 each), trailing spaces do not (NO PAD).
CREATE TABLE k (s VARCHAR(5) COLLATE utf8mb4_0900_ai_ci PRIMARY KEY);
INSERT INTO k VALUES ('a'), ('ss'), ('ae');
INSERT INTO k VALUES ('Á');
INSERT INTO k VALUES ('ß');
INSERT INTO k VALUES ('Æ');
INSERT INTO k VALUES ('a ');
SELECT s FROM k WHERE s = 'A';
SELECT s FROM k WHERE s = 'SS';
SELECT COUNT(*) FROM k;
CREATE TABLE ku (id INT PRIMARY KEY, s VARCHAR(10) COLLATE utf8mb4_0900_ai_ci, UNIQUE KEY us (s));
INSERT INTO ku VALUES (1, 'Straße');
INSERT INTO ku VALUES (2, 'STRASSE');
INSERT INTO ku VALUES (3, 'strasse ');
SELECT id FROM ku WHERE s = 'strasse';
CREATE TABLE g (s VARCHAR(5) COLLATE utf8mb4_general_ci);
INSERT INTO g VALUES ('a');
SELECT COUNT(*) FROM g JOIN w ON g.s = w.s;
DROP DATABASE u9;
