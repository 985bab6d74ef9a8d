-- Issue 10: INSERT … ON DUPLICATE KEY UPDATE (VALUES(), a row alias,
-- assignments left to right) and INSERT IGNORE, on the primary key and on
-- UNIQUE indexes; affected rows as MySQL counts them (1 inserted, 2
-- updated, 0 unchanged); indexes kept right.
CREATE DATABASE ups;
USE ups;
CREATE TABLE kv (id INT PRIMARY KEY, email VARCHAR(30), hits INT NOT NULL DEFAULT 0, note VARCHAR(20));
CREATE UNIQUE INDEX uq_email ON kv (email);
INSERT INTO kv VALUES (1, 'a@x', 1, 'first'), (2, 'b@x', 1, 'second');
INSERT INTO kv VALUES (1, 'a@x', 5, 'again') ON DUPLICATE KEY UPDATE hits = hits + 1;
INSERT INTO kv VALUES (3, 'c@x', 1, 'new') ON DUPLICATE KEY UPDATE hits = hits + 1;
INSERT INTO kv VALUES (9, 'b@x', 7, 'by email') ON DUPLICATE KEY UPDATE hits = hits + VALUES(hits), note = VALUES(note);
INSERT INTO kv VALUES (2, 'b@x', 0, 'x') ON DUPLICATE KEY UPDATE note = note;
INSERT INTO kv VALUES (3, 'c@x', 4, 'aliased') AS nw ON DUPLICATE KEY UPDATE hits = nw.hits * 10, note = nw.note;
INSERT INTO kv VALUES (1, 'a@x', 0, NULL) ON DUPLICATE KEY UPDATE hits = hits + 100, note = CONCAT('hits ', hits);
INSERT INTO kv VALUES (4, 'd@x', 1, 'd'), (4, 'd@x', 1, 'd'), (4, 'e@x', 1, 'e') ON DUPLICATE KEY UPDATE hits = hits + 1, email = VALUES(email);
SELECT * FROM kv ORDER BY id;
SELECT id FROM kv WHERE email = 'e@x';
SELECT id FROM kv WHERE email = 'd@x';
-- The update itself colliding on a UNIQUE key is an error; nothing of the statement stays.
INSERT INTO kv VALUES (1, 'zz', 0, NULL), (5, 'f@x', 0, NULL) ON DUPLICATE KEY UPDATE email = 'b@x';
SELECT COUNT(*) FROM kv WHERE id = 5;
-- INSERT IGNORE: duplicates are skipped with warning 1062, the rest inserted.
INSERT IGNORE INTO kv VALUES (1, 'q@x', 0, NULL), (6, 'f@x', 0, 'six'), (7, 'b@x', 0, NULL), (8, 'h@x', 0, 'eight');
SHOW WARNINGS;
SELECT id, email, note FROM kv WHERE id >= 5 ORDER BY id;
-- Other errors are not ignored (MySQL would store an adjusted value; Tributary refuses).
INSERT IGNORE INTO kv VALUES (10, 'j@x', NULL, NULL);
SELECT COUNT(*) FROM kv WHERE id = 10;
-- AUTO_INCREMENT: an updated row does not change LAST_INSERT_ID().
CREATE TABLE ai (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(10), n INT);
CREATE UNIQUE INDEX uq_name ON ai (name);
INSERT INTO ai (name, n) VALUES ('a', 1), ('b', 1);
SELECT LAST_INSERT_ID();
INSERT INTO ai (name, n) VALUES ('a', 1) ON DUPLICATE KEY UPDATE n = n + 1;
SELECT LAST_INSERT_ID();
SELECT * FROM ai ORDER BY id;
INSERT INTO kv VALUES (1, 'a@x', 0, NULL) ON DUPLICATE KEY UPDATE nosuch = 1;
INSERT INTO kv VALUES (1, 'a@x', 0, NULL) ON DUPLICATE KEY UPDATE hits = VALUES(nosuch);
REPLACE INTO kv VALUES (1, 'a@x', 0, NULL) ON DUPLICATE KEY UPDATE hits = 1;
-- REPLACE deletes every row the new one collides with, on the primary key or any UNIQUE index (hidden primary key too), and counts them (MySQL: deleted + inserted).
CREATE TABLE rp (id INT PRIMARY KEY, email VARCHAR(20), tag VARCHAR(10), UNIQUE KEY ue (email), UNIQUE KEY ut (tag));
INSERT INTO rp VALUES (1, 'a@x', 't1'), (2, 'b@x', 't2'), (3, 'c@x', 't3');
REPLACE INTO rp VALUES (4, 'a@x', 't4');
REPLACE INTO rp VALUES (5, 'b@x', 't3');
REPLACE INTO rp VALUES (4, 'z@x', 'tz');
REPLACE INTO rp VALUES (6, 'n@x', NULL), (7, 'm@x', NULL);
SELECT * FROM rp ORDER BY id;
CREATE TABLE rh (email VARCHAR(20), n INT, UNIQUE KEY ue (email));
INSERT INTO rh VALUES ('a@x', 1), ('b@x', 2);
REPLACE INTO rh VALUES ('a@x', 3);
SELECT * FROM rh ORDER BY email;
DROP DATABASE ups;
-- UPDATE assignments run left to right as in MySQL: b sees the new a.
CREATE DATABASE upd;
USE upd;
CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT);
INSERT INTO t VALUES (1, 1, 0), (2, 5, 0);
UPDATE t SET a = a + 1, b = a;
SELECT * FROM t ORDER BY id;
UPDATE t SET b = a, a = a * 10 WHERE id = 2;
SELECT * FROM t ORDER BY id;
DROP DATABASE upd;
-- Functions in VALUES see the session as the statement began: the
-- database, the last id generated before this statement, user and system
-- variables.
CREATE DATABASE fns;
USE fns;
CREATE TABLE fv (id INT PRIMARY KEY AUTO_INCREMENT, a VARCHAR(20), b BIGINT);
INSERT INTO fv (a) VALUES ('first');
SET @who = 'var';
INSERT INTO fv (a, b) VALUES (DATABASE(), LAST_INSERT_ID()), (@who, @@auto_increment_increment), ('plain', 7);
SELECT * FROM fv ORDER BY id;
DROP DATABASE fns;
