-- Issue 41 item 2: window frames and aggregates OVER as MySQL 8. Every answer MariaDB 10.11 can give was checked against it (numeric RANGE offsets, STD / VARIANCE / BIT_* grouped and OVER, sliding MIN / MAX); MariaDB has no INTERVAL bounds, so the DATE / DATETIME frames were checked by hand against MySQL 8's definition (the frame holds the rows whose key lies in [key - a, key + b], NULL keys are peers of each other only); errors follow MySQL 8's codes (MariaDB's differ: noted where it answers otherwise).
CREATE DATABASE wf;
USE wf;
CREATE TABLE t (id INT PRIMARY KEY, g VARCHAR(3), x INT, d DECIMAL(6,2), f DOUBLE, dt DATE, ts DATETIME);
INSERT INTO t VALUES (1, 'a', 1, 1.50, 0.5, '2024-01-01', '2024-01-01 10:00:00'), (2, 'a', 2, 2.25, 1.5, '2024-01-02', '2024-01-01 11:30:00'), (3, 'a', 2, NULL, 2.5, '2024-01-02', '2024-01-01 12:00:00'), (4, 'a', 5, 3.00, NULL, '2024-01-05', NULL), (5, 'a', NULL, 0.75, 4.0, NULL, '2024-01-02 09:00:00'), (6, 'b', 10, 10.00, 10.0, '2024-02-01', '2024-02-01 00:00:00'), (7, 'b', 12, 11.10, 12.5, '2024-02-03', '2024-02-01 00:59:59'), (8, 'b', 13, 12.20, 13.0, '2024-02-04', '2024-02-01 01:00:00'), (9, 'b', NULL, NULL, 14.0, '2024-03-01', '2024-02-01 02:00:00'), (10, 'b', 20, 20.00, 20.0, '2024-03-02', '2024-02-02 00:00:00');
-- RANGE offsets over an integer key: peers are in or out together; a NULL key's frame is the NULLs (its peers), a non-NULL key's never holds them unless the frame reaches UNBOUNDED.
SELECT id, x, SUM(id) OVER (ORDER BY x RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) AS s, COUNT(*) OVER (ORDER BY x RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS c, MIN(id) OVER (ORDER BY x RANGE BETWEEN CURRENT ROW AND 3 FOLLOWING) AS mn, MAX(id) OVER (ORDER BY x RANGE 5 PRECEDING) AS mx FROM t ORDER BY id;
-- Descending: PRECEDING is toward larger keys; NULLs sort last.
SELECT id, g, x, SUM(id) OVER (PARTITION BY g ORDER BY x DESC RANGE BETWEEN 2 PRECEDING AND 1 FOLLOWING) AS s, COUNT(x) OVER (PARTITION BY g ORDER BY x DESC RANGE BETWEEN UNBOUNDED PRECEDING AND 3 FOLLOWING) AS c FROM t ORDER BY id;
-- Frames wholly before or after the row (possibly empty: COUNT 0, SUM NULL).
SELECT id, x, COUNT(*) OVER (ORDER BY x RANGE BETWEEN 5 PRECEDING AND 2 PRECEDING) AS back, COUNT(*) OVER (ORDER BY x RANGE BETWEEN 2 FOLLOWING AND 7 FOLLOWING) AS ahead, SUM(id) OVER (ORDER BY x RANGE BETWEEN 3 FOLLOWING AND UNBOUNDED FOLLOWING) AS tail, SUM(id) OVER (ORDER BY x RANGE BETWEEN UNBOUNDED PRECEDING AND 3 PRECEDING) AS head FROM t ORDER BY id;
-- DECIMAL and DOUBLE keys with fractional offsets; SUM / AVG of DECIMAL keep MySQL's scale.
SELECT id, d, SUM(d) OVER (ORDER BY d RANGE BETWEEN 1.5 PRECEDING AND 0.5 FOLLOWING) AS s, AVG(d) OVER (ORDER BY d RANGE 1 PRECEDING) AS a, COUNT(*) OVER (ORDER BY f RANGE BETWEEN 1.25 PRECEDING AND 1.25 FOLLOWING) AS cf FROM t ORDER BY id;
-- Temporal keys take INTERVAL offsets (DAY, MONTH over a DATE; HOUR, MINUTE over a DATETIME).
SELECT id, dt, COUNT(*) OVER (ORDER BY dt RANGE BETWEEN INTERVAL 1 DAY PRECEDING AND CURRENT ROW) AS c1, SUM(id) OVER (ORDER BY dt RANGE BETWEEN INTERVAL 3 DAY PRECEDING AND INTERVAL 1 DAY FOLLOWING) AS s, MIN(id) OVER (ORDER BY dt DESC RANGE BETWEEN INTERVAL 1 MONTH PRECEDING AND CURRENT ROW) AS m FROM t ORDER BY id;
SELECT id, ts, COUNT(*) OVER (ORDER BY ts RANGE BETWEEN INTERVAL 1 HOUR PRECEDING AND CURRENT ROW) AS h, COUNT(*) OVER (ORDER BY ts RANGE BETWEEN CURRENT ROW AND INTERVAL 90 MINUTE FOLLOWING) AS m90 FROM t ORDER BY id;
-- FIRST_VALUE / LAST_VALUE / NTH_VALUE read a RANGE frame too.
SELECT id, x, FIRST_VALUE(id) OVER (ORDER BY x RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS fv, LAST_VALUE(id) OVER (ORDER BY x RANGE BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS lv, NTH_VALUE(id, 2) OVER (ORDER BY x RANGE BETWEEN 3 PRECEDING AND CURRENT ROW) AS n2 FROM t ORDER BY id;
-- Default frames: with ORDER BY, RANGE from the start to the row's last peer (a, b equal; ROWS c differs on the peers x = 2); without ORDER BY (or RANGE CURRENT ROW without it) the whole partition. (MariaDB 10.11 answers NULL for pg on rows 5 and 9 in this statement only — alone it gives 10 / 55, as here.)
SELECT id, x, SUM(x) OVER (ORDER BY x RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS a, SUM(x) OVER (ORDER BY x) AS b, SUM(x) OVER (ORDER BY x, id ROWS UNBOUNDED PRECEDING) AS c, SUM(x) OVER (RANGE CURRENT ROW) AS d, SUM(x) OVER () AS e, SUM(x) OVER (PARTITION BY g) AS pg FROM t ORDER BY id;
-- Every aggregate MySQL 8 allows OVER, grouped first (STD / VARIANCE are DOUBLE with the argument's decimals + 4 on the wire, MariaDB's digits there; this transcript prints DOUBLEs in full; BIT_* BIGINT UNSIGNED: BIT_AND of no row is 2^64 - 1).
SELECT g, STD(x), STDDEV(x), STDDEV_POP(d), STDDEV_SAMP(f), VARIANCE(x), VAR_POP(d), VAR_SAMP(f), BIT_AND(x), BIT_OR(x), BIT_XOR(x) FROM t GROUP BY g ORDER BY g;
SELECT STD(x), VAR_SAMP(x), BIT_AND(x), BIT_OR(x), BIT_XOR(x) FROM t WHERE id > 100;
SELECT BIT_OR(-1), BIT_AND(-2), BIT_XOR(1.5), BIT_OR(2.5) FROM t WHERE id = 1;
SELECT id, x, STD(x) OVER w AS sd, VAR_SAMP(x) OVER w AS vs, BIT_OR(x) OVER w AS bo, BIT_AND(x) OVER w AS ba, BIT_XOR(x) OVER w AS bx FROM t WINDOW w AS (PARTITION BY g ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) ORDER BY id;
-- Sliding frames are folded exactly (MIN / MAX over a moving frame, a variance over a RANGE frame).
SELECT id, f, VARIANCE(f) OVER (ORDER BY f RANGE BETWEEN 2 PRECEDING AND CURRENT ROW) AS v, STDDEV_SAMP(f) OVER (ORDER BY id) AS sd, MIN(f) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING) AS mn, MAX(f) OVER (ORDER BY id ROWS BETWEEN 1 FOLLOWING AND 3 FOLLOWING) AS mx FROM t ORDER BY id;
SELECT id, SUM(d) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s, AVG(d) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS a, COUNT(d) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS c FROM t ORDER BY id;
-- JSON_ARRAYAGG / JSON_OBJECTAGG, grouped and OVER (MySQL 8; MariaDB has them grouped only, printed without MySQL's spaces): NULLs kept as null, a DECIMAL keeps its digits, the last duplicate key wins, members in MySQL's canonical order; the result nests as JSON; a NULL key is 3158.
SELECT g, JSON_ARRAYAGG(x) AS a, JSON_OBJECTAGG(id, d) AS o, JSON_ARRAYAGG(g) AS s FROM t GROUP BY g ORDER BY g;
SELECT JSON_ARRAYAGG(x), JSON_OBJECTAGG(g, x) FROM t WHERE id > 100;
SELECT JSON_OBJECTAGG(g, id) AS last_wins, JSON_OBJECTAGG(CONCAT(g, id % 3), id) AS ordered FROM t;
SELECT JSON_ARRAYAGG(JSON_OBJECT('k', id)) AS j, JSON_LENGTH(JSON_ARRAYAGG(id)) AS n, JSON_ARRAY(JSON_ARRAYAGG(id)) AS nested, JSON_TYPE(JSON_OBJECTAGG(id, x)) AS ty FROM t WHERE id < 4;
SELECT JSON_OBJECTAGG(NULL, 1) FROM t;
SELECT id, JSON_ARRAYAGG(x) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS a, JSON_OBJECTAGG(id % 2, id) OVER (PARTITION BY g ORDER BY id) AS o FROM t ORDER BY id;
-- LAG / LEAD with a default of another type: typed as COALESCE of both (MySQL 8; MariaDB has no third argument): the integer beside 1.5 prints one decimal.
SELECT id, LAG(x, 1, 1.5) OVER (ORDER BY id) AS a, LEAD(d, 1, 0) OVER (ORDER BY id) AS b, LAG(x, 2, 'none') OVER (ORDER BY id) AS c, LEAD(f, 1, 7) OVER (ORDER BY id) AS e FROM t ORDER BY id;
CREATE TABLE lt AS SELECT LAG(x, 1, 1.5) OVER (ORDER BY id) AS a, LEAD(d, 1, 0) OVER (ORDER BY id) AS b, ROW_NUMBER() OVER () AS rn, CUME_DIST() OVER () AS cd, STD(x) OVER () AS sd, BIT_OR(x) OVER () AS bo, SUM(d) OVER () AS sm, COUNT(*) OVER () AS n FROM t;
SHOW CREATE TABLE lt;
-- MySQL 8's errors. RANGE with an offset needs one numeric or temporal ORDER BY key (3587; MariaDB 4019 / 4021), numbers for a number (3589) and INTERVALs for a date (3588), a constant (3590); INTERVAL only in RANGE (3596); MariaDB has no INTERVAL bounds (1064).
SELECT id, SUM(x) OVER (ORDER BY x, id RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t;
SELECT id, SUM(x) OVER (RANGE BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t;
SELECT id, SUM(x) OVER (ORDER BY g RANGE 1 PRECEDING) FROM t;
SELECT id, SUM(x) OVER (ORDER BY dt RANGE 1 PRECEDING) FROM t;
SELECT id, SUM(x) OVER (ORDER BY x RANGE INTERVAL 1 DAY PRECEDING) FROM t;
SELECT id, SUM(x) OVER (ORDER BY dt RANGE INTERVAL id DAY PRECEDING) FROM t;
SELECT id, SUM(x) OVER (ORDER BY x ROWS INTERVAL 1 DAY PRECEDING) FROM t;
-- A frame that starts after it ends (3586: MySQL refuses these three shapes; MariaDB 4014, or empty frames for 2 FOLLOWING AND 1 PRECEDING), a negative offset (3586; a literal is 1064 in MySQL's grammar, a parameter 3586), which a RANGE of two PRECEDING offsets is not (empty frames).
SELECT id, SUM(x) OVER (ORDER BY x RANGE BETWEEN CURRENT ROW AND 1 PRECEDING) FROM t;
SELECT id, SUM(x) OVER (ORDER BY x ROWS BETWEEN 1 FOLLOWING AND CURRENT ROW) FROM t;
SELECT id, SUM(x) OVER (ORDER BY x ROWS BETWEEN 2 FOLLOWING AND 1 PRECEDING) FROM t;
SELECT id, SUM(x) OVER (ORDER BY x RANGE -1 PRECEDING) FROM t;
SELECT id, SUM(x) OVER (ORDER BY dt RANGE INTERVAL -1 DAY PRECEDING) FROM t;
SELECT id, SUM(x) OVER (ORDER BY x RANGE BETWEEN 1 PRECEDING AND 2 PRECEDING) AS s FROM t ORDER BY id;
-- GROUPS is no MySQL 8 syntax (1064); EXCLUDE, FROM LAST and IGNORE NULLS are parsed by MySQL 8 and refused (1235; MariaDB: 4022 / 1064); RESPECT NULLS is the default and accepted; DISTINCT in a window aggregate is 1235 (as MariaDB); STD has no DISTINCT (1064).
SELECT id, SUM(x) OVER (ORDER BY x GROUPS 1 PRECEDING) FROM t;
SELECT id, SUM(x) OVER (ORDER BY x ROWS BETWEEN 1 PRECEDING AND CURRENT ROW EXCLUDE CURRENT ROW) FROM t;
SELECT id, NTH_VALUE(x, 1) FROM LAST OVER (ORDER BY id) FROM t;
-- FROM FIRST is NTH_VALUE's default (MySQL 8 accepts it; MariaDB has no such syntax): the same answer as without it.
SELECT id, NTH_VALUE(x, 2) FROM FIRST OVER (ORDER BY id) AS n, NTH_VALUE(x, 2) OVER (ORDER BY id) AS m FROM t ORDER BY id LIMIT 3;
SELECT id, NTH_VALUE(x, 3) from   first OVER w AS n FROM t WHERE 'x) FROM FIRST OVER' <> '' WINDOW w AS (ORDER BY id DESC) ORDER BY id LIMIT 3;
SELECT id, LEAD(x) IGNORE NULLS OVER (ORDER BY id) FROM t;
SELECT id, LEAD(x) RESPECT NULLS OVER (ORDER BY id) AS l FROM t ORDER BY id LIMIT 3;
SELECT id, SUM(DISTINCT x) OVER () FROM t;
SELECT id, COUNT(DISTINCT x) OVER (PARTITION BY g) FROM t;
SELECT STD(DISTINCT x) FROM t;
-- A position in a window's ORDER BY / PARTITION BY (3592, even in an unused named window; MariaDB reads a constant) and a window function inside a window's specification (3595).
SELECT id, ROW_NUMBER() OVER (ORDER BY 1) FROM t;
SELECT id, ROW_NUMBER() OVER (PARTITION BY 2 ORDER BY id) FROM t;
SELECT id FROM t WINDOW w AS (ORDER BY 1);
SELECT SUM(1) OVER (PARTITION BY SUM(1) OVER ()) FROM t;
-- One inside a subquery of the specification belongs to that subquery's block: allowed.
SELECT id, ROW_NUMBER() OVER (ORDER BY (SELECT MAX(r) FROM (SELECT ROW_NUMBER() OVER () AS r FROM t) q) + id DESC) AS rn FROM t ORDER BY id LIMIT 3;
