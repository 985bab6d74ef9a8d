-- REGEXP / RLIKE / REGEXP_LIKE / REGEXP_INSTR / REGEXP_SUBSTR / REGEXP_REPLACE (MySQL 8, ICU rules; issue 38 item 6a).
-- Values in the two-argument forms were checked against MariaDB 10.11 (PCRE); where MySQL 8 differs the comment says so and MySQL 8 is followed.
-- Operators: case matters by default (the collation is utf8mb4_bin, as for = and LIKE), NULL in gives NULL.
SELECT 'abc' REGEXP 'b', 'abc' REGEXP '^b', 'ABC' REGEXP 'b', 'abc' RLIKE 'c$', 'abc' NOT REGEXP 'x', 'abc' NOT RLIKE 'a';
SELECT NULL REGEXP 'a', 'a' REGEXP NULL, NULL NOT REGEXP 'a', 1 REGEXP '1', 12.5 REGEXP '^12\\.5$', 'a' RLIKE null;
SELECT 'fofo' REGEXP '^f.*$', 'Ban' REGEXP '^Ba*n', 'Bn' REGEXP '^Ba+n', 'pi' REGEXP 'pi|apa', 'pix' REGEXP '^(pi)*$', 'abcde' REGEXP 'a[bcd]{3}e', 'aXbc' REGEXP '[a-dXYZ]', 'gheis' REGEXP '^[^a-dXYZ]+$';
SELECT 'fo\nfo' REGEXP '^fo$', 'fo\nfo' REGEXP '(?m)^fo$', 'a\nb' REGEXP 'a.b', 'a\nb' REGEXP '(?s)a.b', 'justalnums' REGEXP '[[:alnum:]]+', '!!' REGEXP '[[:alnum:]]+', '~' REGEXP '[[:punct:]]';
SELECT 'héllo' REGEXP '^h.llo$', 'HÉLLO' REGEXP 'é', 'x🍣y' REGEXP '^x.y$', 'word boundary' REGEXP '\\bbound', 'a1' REGEXP '\\d';
-- In WHERE and over columns, constant and per-row patterns.
CREATE DATABASE rx;
USE rx;
CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(40), p VARCHAR(20));
INSERT INTO t VALUES (1, 'apple pie', 'p+'), (2, 'Banana', '^b'), (3, 'cherry', 'r{2}'), (4, NULL, 'x'), (5, 'date', NULL), (6, 'Elderberry', 'rr');
SELECT id FROM t WHERE s REGEXP 'an' ORDER BY id;
SELECT id FROM t WHERE s NOT REGEXP 'an' ORDER BY id;
SELECT id, s REGEXP p, REGEXP_INSTR(s, p), REGEXP_SUBSTR(s, p), REGEXP_REPLACE(s, p, '#') FROM t ORDER BY id;
SELECT COUNT(*) FROM t WHERE s RLIKE '^[a-c]';
SELECT id FROM t WHERE REGEXP_LIKE(s, '^[a-c]', 'c') ORDER BY id;
-- REGEXP_LIKE(expr, pat[, match_type]): c i m n u, the rightmost of c / i wins, others are 1210 (MariaDB has no REGEXP_LIKE).
SELECT REGEXP_LIKE('abc', 'A'), REGEXP_LIKE('abc', 'A', 'c'), REGEXP_LIKE('abc', 'A', 'i'), REGEXP_LIKE('abc', 'A', 'ci'), REGEXP_LIKE('abc', 'A', 'ic'), REGEXP_LIKE('abc', 'A', '');
SELECT REGEXP_LIKE('a\nb', '^b$'), REGEXP_LIKE('a\nb', '^b$', 'm'), REGEXP_LIKE('a\nb', 'a.b'), REGEXP_LIKE('a\nb', 'a.b', 'n'), REGEXP_LIKE('a\r\nb', '^b', 'm'), REGEXP_LIKE('a\rb', 'a.b', 'u');
SELECT REGEXP_LIKE(NULL, 'a'), REGEXP_LIKE('a', NULL), REGEXP_LIKE('a', 'a', NULL), REGEXP_LIKE(1, 1), REGEXP_LIKE('ab', 'a.*');
SELECT REGEXP_LIKE('a', 'a', 'x');
SELECT REGEXP_LIKE('a', 'a+', 'cmnux');
SELECT REGEXP_LIKE('a');
SELECT REGEXP_LIKE('a', 'b', 'c', 'd');
-- REGEXP_INSTR(expr, pat[, pos[, occurrence[, return_option[, match_type]]]]): character positions, 0 when no match.
SELECT REGEXP_INSTR('abc', 'a'), REGEXP_INSTR('abc', 'b'), REGEXP_INSTR('abc', 'c'), REGEXP_INSTR('abc', 'd'), REGEXP_INSTR(NULL, 'a'), REGEXP_INSTR('a', NULL), REGEXP_INSTR('dog cat dog', 'dog');
SELECT REGEXP_INSTR('abcabcabc', 'a+', 1), REGEXP_INSTR('abcabcabc', 'a+', 2), REGEXP_INSTR('abcabcabc', 'b+', 3), REGEXP_INSTR('abcabcabc', 'a+', 1, 2), REGEXP_INSTR('abcabcabc', 'a+', 1, 3), REGEXP_INSTR('abcabcabc', 'a+', 1, 4), REGEXP_INSTR('abcabcabc', 'a+', 4, 2);
SELECT REGEXP_INSTR('aaabcabcabc', 'a+', 1, 1, 0), REGEXP_INSTR('aaabcabcabc', 'a+', 1, 1, 1), REGEXP_INSTR('aaabcabcabc', 'A+', 1, 1, 1, 'c'), REGEXP_INSTR('aaabcabcabc', 'A+', 1, 1, 1, 'i'), REGEXP_INSTR('aaabcabcabc', 'A+', 1, 1, 1, 'cic');
SELECT REGEXP_INSTR('🍣🍣a', '🍣', 2), REGEXP_INSTR('🍣🍣a', 'a', 3), REGEXP_INSTR('héllo wörld', 'w'), REGEXP_INSTR('abc', 'b', 1, 0), REGEXP_INSTR('abc', 'b', 1, -5), REGEXP_INSTR('', 'x*');
SELECT REGEXP_INSTR('a', 'a', NULL), REGEXP_INSTR('a', 'a', 1, NULL), REGEXP_INSTR('a', 'a', 1, 0, NULL), REGEXP_INSTR('a', 'a', 1, 0, 0, NULL);
-- REGEXP_INSTR sees only the text from pos on (so ^ matches there), REGEXP_SUBSTR / REGEXP_REPLACE the whole subject from pos, which may be one past the end (MySQL 8.4's regexp_facade.cc).
SELECT REGEXP_INSTR('aaa', '^a', 2), REGEXP_SUBSTR('aaa', '^a', 2), REGEXP_REPLACE('aaa', '^a', 'X', 2), REGEXP_SUBSTR('a🍣b', '.', 4), REGEXP_REPLACE('abc', '$', '!', 4), REGEXP_INSTR('', 'x*', 3);
SELECT REGEXP_SUBSTR('a🍣b', '.', 5);
SELECT REGEXP_INSTR('a', 'a+', 3);
SELECT REGEXP_INSTR('🍣🍣a', 'a', 4);
SELECT REGEXP_INSTR('abc', 'b', 0);
SELECT REGEXP_INSTR('a', 'a+', 1, 1, 2);
SELECT REGEXP_INSTR('a', 'a+', 1, 1, 1, 'x');
-- REGEXP_SUBSTR(expr, pat[, pos[, occurrence[, match_type]]]): NULL when no match.
SELECT REGEXP_SUBSTR('ab ac ad', '.d'), REGEXP_SUBSTR('ab ac ad', '.D'), REGEXP_SUBSTR('ab ac ad', 'A.', 3), REGEXP_SUBSTR('ab ac ad', 'A.', 3, 2), REGEXP_SUBSTR('ab ac ad', 'A.', 3, 3), REGEXP_SUBSTR('ab ac ad', 'A.', 1, 1, 'c');
SELECT REGEXP_SUBSTR('abc def ghi', '[a-z]+', 1, 3), REGEXP_SUBSTR('a🍣b', '.', 2), REGEXP_SUBSTR('a🍣🍣b', '.', 4), REGEXP_SUBSTR('abc', 'x*'), REGEXP_SUBSTR('ab\nac\nad', 'A.', 1, 1, 'i'), REGEXP_SUBSTR('ab\nac\nad', '^A.$', 1, 2, 'im');
SELECT REGEXP_SUBSTR(NULL, 'a'), REGEXP_SUBSTR('a', NULL), REGEXP_SUBSTR('a', 'a', NULL), REGEXP_SUBSTR('a', 'a', 1, NULL), REGEXP_SUBSTR('a', 'a', 1, 0, NULL), REGEXP_SUBSTR('2020-01-31', '[0-9]+', 1, 2) + 0;
SELECT REGEXP_SUBSTR('ab ac ad', 'a.', 0);
SELECT REGEXP_SUBSTR('a');
-- REGEXP_REPLACE(expr, pat, repl[, pos[, occurrence[, match_type]]]): occurrence 0 (default) replaces every match from pos; text before pos is kept.
SELECT REGEXP_REPLACE('aaa', 'a', 'X'), REGEXP_REPLACE('abc', 'b', 'X'), REGEXP_REPLACE('a b c', 'b', 'X'), REGEXP_REPLACE('abc', 'x', 'X'), REGEXP_REPLACE('AbcB', 'b', '-');
SELECT REGEXP_REPLACE(NULL, 'a', 'X'), REGEXP_REPLACE('aaa', NULL, 'X'), REGEXP_REPLACE('aaa', 'a', NULL), REGEXP_REPLACE('a', 'a', 'a', NULL), REGEXP_REPLACE('a', 'a', 'a', 1, NULL), REGEXP_REPLACE('a', 'a', 'a', 1, 0, NULL);
SELECT REGEXP_REPLACE('aaabbccbbddaa', 'b+', 'X', 1, 1), REGEXP_REPLACE('aaabbccbbddaa', 'b+', 'X', 1, 2), REGEXP_REPLACE('aaabbccbbddaa', 'x+', 'x', 1, 0), REGEXP_REPLACE('aaabbccbbddaa', 'b+', 'x', 1, 0), REGEXP_REPLACE('aaab', 'b', 'x', 1, 2), REGEXP_REPLACE('aaabccc', 'b', 'x', 1, 2);
SELECT REGEXP_REPLACE('abcbdb', 'b', 'X', 3), REGEXP_REPLACE('aaabcbdb', 'b', 'X', 2), REGEXP_REPLACE('aaa', 'a', 'X', 2), REGEXP_REPLACE('aaa', 'a', 'XX', 2), REGEXP_REPLACE('abc def ghi', '[a-z]+', 'X', 1, 3), REGEXP_REPLACE('abc', 'b', 'X', 1, -1);
SELECT REGEXP_REPLACE('🍣🍣🍣', '.', 'a', 2), REGEXP_REPLACE('🍣🍣🍣', '.', 'a', 2, 2), REGEXP_REPLACE('Héllo', 'É', 'e'), REGEXP_REPLACE('Héllo', 'É', 'e', 1, 0, 'c');
-- After an empty match the search moves one character on; a match may start where a non-empty one ended (ICU; MariaDB gives 'baaab').
SELECT REGEXP_REPLACE('baaab', 'a*', 'X'), REGEXP_REPLACE('abc', 'x*', '-'), REGEXP_INSTR('baaab', 'a*', 1, 3), REGEXP_SUBSTR('baaab', 'a*', 1, 2);
-- The replacement is ICU's: $n a group, ${name} a named group, \x the character x (MariaDB/PCRE uses \1 for a group: 'a[b]c' there, 'a[1]c' here).
SELECT REGEXP_REPLACE('abc', '(b)', '[$1]'), REGEXP_REPLACE('abc', '(b)', '[\\1]'), REGEXP_REPLACE('abc123', '([a-z]+)([0-9]+)', '$2-$1'), REGEXP_REPLACE('abc123', '([a-z]+)([0-9]+)', '$10'), REGEXP_REPLACE('ab', '(?<w>b)', '<${w}>'), REGEXP_REPLACE('a.b', '\\.', '\\$');
SELECT REGEXP_REPLACE('aaabbccbbddaa', '(b+)', '<$1>', 1, 2), REGEXP_REPLACE('a a a', '^([[:alpha:]]+)[[:space:]].*$', '$1'), REGEXP_REPLACE('x', '(y)?x', '[$1]'), REGEXP_REPLACE('abc', 'q', '$9');
SELECT REGEXP_REPLACE('abc', 'b', '$2');
SELECT REGEXP_REPLACE('abc', 'abc', '$abc');
SELECT REGEXP_REPLACE(' F', '^ ', '[,$');
SELECT REGEXP_REPLACE('aaa', 'a', 'X', 0);
SELECT REGEXP_REPLACE('a', 'a+', 'b', 3);
SELECT REGEXP_REPLACE('a', 'b');
-- Bad patterns: MySQL's error for each (MariaDB's PCRE messages differ, its code is 1139).
SELECT 'a' REGEXP '(';
-- ICU refuses an empty pattern (MariaDB: 'x' REGEXP '' is 1).
SELECT 'x' REGEXP '';
SELECT REGEXP_REPLACE('abc', '', '-');
SELECT 'a' REGEXP 'a[';
SELECT 'a' REGEXP '[b-a]';
SELECT 'a' REGEXP 'a{2,1}';
SELECT 'a' REGEXP '+';
SELECT 'a' REGEXP '\\';
SELECT 'a' REGEXP '[[:invalid_bracket_expression:]]';
SELECT REGEXP_INSTR('abc', '(?-');
-- Not in the linear-time engine: back-references and look-around are refused (3690), never approximated (MySQL and MariaDB support them).
SELECT 'aa' REGEXP '(a)\\1';
SELECT REGEXP_SUBSTR('ab', '(?<=a)b');
-- A pattern over the size limit.
SELECT 'a' REGEXP '(?:\\w{1000}){100}';
SELECT 'a' REGEXP REPEAT('a', 2000000);
-- A bad pattern is an error even for a NULL subject or no rows; a NULL pattern is NULL.
SELECT REGEXP_LIKE(NULL, '(');
SELECT COUNT(*) FROM t WHERE s REGEXP NULL;
-- Results in arithmetic and as columns.
SELECT REGEXP_INSTR('abc', 'c') + 1, REGEXP_LIKE('abc', 'c') + 1, CONCAT(REGEXP_SUBSTR('abc', 'b'), '!'), LENGTH(REGEXP_REPLACE('abc', 'b', 'xyz'));
CREATE TABLE r AS SELECT REGEXP_INSTR('abc', 'c') AS i, REGEXP_LIKE('a', 'a') AS l, REGEXP_SUBSTR('abc', 'b') AS s, REGEXP_REPLACE('abc', 'b', 'x') AS r2;
SELECT * FROM r;
DROP DATABASE rx;
