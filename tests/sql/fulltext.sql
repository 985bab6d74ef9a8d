-- Full-text semantics (issue 14, item 2), answered the same from the index,
-- from rows the index has not seen yet (ASYNC index, rows written after a
-- stall would be there; here: the table `late` gets its rows after an
-- ASYNC index) and without an index path.
CREATE DATABASE fts;
USE fts;
CREATE TABLE d (id INT PRIMARY KEY, title VARCHAR(100), body TEXT, n INT);
INSERT INTO d VALUES
  (1, 'Rust systems', 'rust database engine written in rust', 1),
  (2, 'Python web', 'python web framework and database driver', 2),
  (3, 'Go services', 'go concurrency for database services', 3),
  (4, 'Databases', 'a relational database with full-text search', 4),
  (5, 'Zig', 'zig systems programming', 5);
CREATE FULLTEXT INDEX ft_body ON d(body);
CREATE FULLTEXT INDEX ft_title ON d(title);
-- MATCH on columns without a FULLTEXT index on exactly them: 1191.
SELECT id FROM d WHERE MATCH(title, body) AGAINST('rust');
SELECT id FROM d WHERE MATCH(n) AGAINST('rust');
-- Natural language mode: any word; the score is BM25 (> 0 for a match).
SELECT id FROM d WHERE MATCH(body) AGAINST('rust zig') ORDER BY id;
SELECT id, MATCH(body) AGAINST('rust') > 0 AS hit FROM d ORDER BY id;
SELECT id FROM d WHERE MATCH(body) AGAINST('rust') ORDER BY MATCH(body) AGAINST('rust') DESC LIMIT 1;
-- Boolean mode: + must, - must not, * prefix, "phrase", groups.
SELECT id FROM d WHERE MATCH(body) AGAINST('+database -python' IN BOOLEAN MODE) ORDER BY id;
SELECT id FROM d WHERE MATCH(body) AGAINST('+database +(rust go)' IN BOOLEAN MODE) ORDER BY id;
SELECT id FROM d WHERE MATCH(body) AGAINST('data*' IN BOOLEAN MODE) ORDER BY id;
SELECT id FROM d WHERE MATCH(body) AGAINST('"database engine"' IN BOOLEAN MODE) ORDER BY id;
SELECT id FROM d WHERE MATCH(body) AGAINST('"engine database"' IN BOOLEAN MODE) ORDER BY id;
SELECT id FROM d WHERE MATCH(body) AGAINST('-rust' IN BOOLEAN MODE) ORDER BY id;
-- Malformed boolean queries are errors, not empty answers.
SELECT id FROM d WHERE MATCH(body) AGAINST('"database engine' IN BOOLEAN MODE);
SELECT id FROM d WHERE MATCH(body) AGAINST('+(rust go' IN BOOLEAN MODE);
SELECT id FROM d WHERE MATCH(body) AGAINST('rust' WITH QUERY EXPANSION);
-- Two MATCHes (one index answers, the other is scored on its rows) and
-- MATCH with other predicates, COUNT and GROUP BY.
SELECT id FROM d WHERE MATCH(body) AGAINST('database') AND MATCH(title) AGAINST('rust') ORDER BY id;
SELECT id, MATCH(title) AGAINST('systems') > 0 AS t FROM d WHERE MATCH(body) AGAINST('systems') ORDER BY id;
-- Top-k by relevance with a second MATCH (or a column) in the WHERE: the
-- best hit of the first may fail the second; the answer still has k rows.
SELECT id FROM d WHERE MATCH(body) AGAINST('database') AND MATCH(title) AGAINST('rust') ORDER BY MATCH(body) AGAINST('database') DESC LIMIT 1;
SELECT id FROM d WHERE MATCH(body) AGAINST('database') AND n = 1 ORDER BY MATCH(body) AGAINST('database') DESC LIMIT 1;
SELECT id FROM d WHERE MATCH(body) AGAINST('database') ORDER BY MATCH(body) AGAINST('database') DESC, id LIMIT 2;
SELECT COUNT(*) FROM (SELECT id FROM d WHERE MATCH(body) AGAINST('database') ORDER BY MATCH(body) AGAINST('database') DESC LIMIT 3) t;
SELECT COUNT(*) FROM d WHERE MATCH(body) AGAINST('database');
SELECT COUNT(*) FROM d WHERE MATCH(body) AGAINST('database') AND n > 2;
SELECT n % 2 AS odd, COUNT(*) FROM d WHERE MATCH(body) AGAINST('database') GROUP BY odd ORDER BY odd;
EXPLAIN SELECT COUNT(*) FROM d WHERE MATCH(body) AGAINST('database');
-- Rows an ASYNC index has not indexed yet are matched with the same rules.
CREATE TABLE late (id INT PRIMARY KEY, body TEXT);
CREATE FULLTEXT INDEX fl ON late(body) ASYNC;
INSERT INTO late SELECT id, body FROM d;
SELECT id FROM late WHERE MATCH(body) AGAINST('+database +(rust go)' IN BOOLEAN MODE) ORDER BY id;
SELECT id FROM late WHERE MATCH(body) AGAINST('data*' IN BOOLEAN MODE) ORDER BY id;
SELECT id FROM late WHERE MATCH(body) AGAINST('"database engine"' IN BOOLEAN MODE) ORDER BY id;
-- The score's scale (docs/COMPATIBILITY.md): BM25, k1 = 1.2, b = 0.75. By
-- hand for 'zig' in row 5 ('zig systems programming', 3 words; the 5 bodies
-- hold 27 words, so the average is 5.4; 1 of 5 rows has 'zig'):
-- ln(1 + 4.5/1.5) * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 3/5.4)) = 1.6944.
SELECT id, ROUND(MATCH(body) AGAINST('zig'), 4) AS score FROM d WHERE MATCH(body) AGAINST('zig');
-- The same scale from the index, from the rows an ASYNC index has not
-- applied (`late`), and without the index (a join): equal corpora, equal values.
SELECT id, ROUND(MATCH(body) AGAINST('database rust'), 4) AS score FROM d WHERE MATCH(body) AGAINST('database rust') ORDER BY score DESC, id;
SELECT id, ROUND(MATCH(body) AGAINST('database rust'), 4) AS score FROM late WHERE MATCH(body) AGAINST('database rust') ORDER BY score DESC, id;
SELECT d.id, ROUND(MATCH(d.body) AGAINST('database rust'), 4) AS score FROM d JOIN late ON late.id = d.id WHERE MATCH(d.body) AGAINST('database rust') ORDER BY score DESC, d.id;
SELECT id, ROUND(MATCH(body) AGAINST('+database rust' IN BOOLEAN MODE), 4) AS score FROM d ORDER BY score DESC, id;
-- A table without a primary key: COUNT and the rows still come out right.
CREATE TABLE nopk (body TEXT, n INT);
INSERT INTO nopk SELECT body, n FROM d;
CREATE FULLTEXT INDEX fn ON nopk(body);
SELECT COUNT(*) FROM nopk WHERE MATCH(body) AGAINST('database');
SELECT n FROM nopk WHERE MATCH(body) AGAINST('database') ORDER BY n;
DROP DATABASE fts;
