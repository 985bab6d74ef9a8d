-- Key-part lengths (issue 38 item 4). A plain KEY on a prefix is accepted and holds
-- the whole values (every answer is the same as with the prefix); a UNIQUE or
-- PRIMARY KEY on a prefix is refused (1235) everywhere, never accepted and ignored;
-- MySQL's own checks on lengths apply (1089, 1391).
CREATE DATABASE pk;
USE pk;
CREATE TABLE a1 (a VARCHAR(10), UNIQUE KEY (a(1)));
CREATE TABLE a2 (a VARCHAR(10), UNIQUE (a(1)));
CREATE TABLE a3 (a VARCHAR(10), PRIMARY KEY (a(2)));
CREATE TABLE a4 (a VARCHAR(10), b TEXT, n INT, KEY k (a(3)), INDEX (b(20)), UNIQUE KEY (n));
INSERT INTO a4 VALUES ('bx', 'long text one', 1), ('by', 'long text two', 2), ('bx', 'other', 3);
SELECT n FROM a4 WHERE a = 'bx' ORDER BY n;
SELECT n FROM a4 WHERE b = 'long text two';
CREATE UNIQUE INDEX u1 ON a4 (a(2));
ALTER TABLE a4 ADD UNIQUE KEY u2 (a(1));
ALTER TABLE a4 ADD KEY k2 (a(1), n);
SELECT n FROM a4 WHERE a = 'by' AND n = 2;
CREATE INDEX k3 ON a4 (a(11));
CREATE INDEX k4 ON a4 (n(2));
CREATE INDEX k5 ON a4 (a(0));
CREATE FULLTEXT INDEX f1 ON a4 (b(5));
CHECK INDEX k ON a4;
CHECK INDEX k2 ON a4;
