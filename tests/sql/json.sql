-- JSON type and functions, `->` / `->>`, CAST … AS JSON, CONVERT, and
-- MatrixOne's generate_series.
CREATE DATABASE js;
USE js;
CREATE TABLE d (id INT PRIMARY KEY, doc JSON);
INSERT INTO d VALUES (1, '{"b": [1, 2, {"c": "x"}], "a": 1, "aa": null}');
INSERT INTO d VALUES (2, '[3, "three", true, 1.5]'), (3, NULL), (4, '"just text"');
INSERT INTO d VALUES (5, '{"a": }');
INSERT INTO d VALUES (6, 42);
SELECT id, doc FROM d ORDER BY id;
SHOW CREATE TABLE d;
SELECT id, JSON_TYPE(doc), JSON_VALID(doc), JSON_LENGTH(doc), JSON_DEPTH(doc) FROM d ORDER BY id;
SELECT doc->'$.b[2].c', doc->>'$.b[2].c', JSON_EXTRACT(doc, '$.a', '$.b[0]') FROM d WHERE id = 1;
SELECT id FROM d WHERE doc->>'$.a' = '1';
SELECT JSON_UNQUOTE(JSON_EXTRACT(doc, '$[1]')) FROM d WHERE id = 2;
SELECT JSON_KEYS(doc), JSON_CONTAINS(doc, '1', '$.a'), JSON_CONTAINS_PATH(doc, 'all', '$.a', '$.zz') FROM d WHERE id = 1;
SELECT JSON_OBJECT('k', 1, 'arr', JSON_ARRAY(1, 'two', NULL, TRUE), 'nested', JSON_OBJECT('x', 2.5));
SELECT JSON_ARRAY(), JSON_OBJECT(), JSON_QUOTE('a"b'), JSON_UNQUOTE('"a\\tb"');
SELECT JSON_SET(doc, '$.a', 10, '$.new', 'v'), JSON_INSERT(doc, '$.a', 99), JSON_REPLACE(doc, '$.zz', 1) FROM d WHERE id = 1;
SELECT JSON_REMOVE(doc, '$.b'), JSON_ARRAY_APPEND(doc, '$.b', 3) FROM d WHERE id = 1;
SELECT JSON_MERGE_PRESERVE('{"a": 1}', '{"a": 2, "b": 3}');
UPDATE d SET doc = JSON_SET(doc, '$.a', 2) WHERE id = 1;
SELECT doc->'$.a' FROM d WHERE id = 1;
SELECT CAST('{"z": 1, "a": [true]}' AS JSON), CAST(5 AS JSON), CAST(NULL AS JSON);
SELECT CAST('nope' AS JSON);
SELECT JSON_OBJECT('nested', CAST('[1, 2]' AS JSON), 'text', '[1, 2]');
SELECT JSON_EXTRACT('{"a": 1}', '$.');
SELECT JSON_OBJECT('a');
SELECT JSON_EXTRACT(NULL, '$.a'), JSON_VALID('{'), JSON_VALID(NULL);
-- CONVERT(x, type) is CAST; CONVERT(x USING utf8mb4) changes nothing.
SELECT CONVERT('12', SIGNED) + 1, CONVERT(3.7, SIGNED), CONVERT('abc' USING utf8mb4), CONVERT('x', CHAR(3));
SELECT CONVERT('abc' USING latin1);
-- generate_series(start, stop[, step]): one column named result.
SELECT * FROM generate_series(1, 5) g;
SELECT result FROM generate_series(10, 1, -3) AS s;
SELECT COUNT(*), SUM(result) FROM generate_series(1, 1000);
SELECT g.result, d.id FROM generate_series(1, 3) g JOIN d ON d.id = g.result ORDER BY g.result;
EXPLAIN SELECT * FROM generate_series(1, 3) g WHERE result > 1;
SELECT * FROM generate_series(1, 3, 0) g;
SELECT * FROM generate_series(1) g;
SELECT * FROM generate_series(NULL, 3) g;
SELECT * FROM generate_series(1, 100000000) g;
SELECT * FROM generate_series(1, id) g, d;
SELECT * FROM other_function(1, 2) t;
DROP DATABASE js;
