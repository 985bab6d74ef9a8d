-- Issue 41 item 7 (decision 031): comma joins of up to 8 FROM items are costed in every order that joins each next item by an equality, not only greedily. TPC-H Q5's shape at sf 0.01: the greedy order starts region, nation, then takes supplier (the smallest next join) and must join customer to it on the nation — many to many; costing every order finds SQLite's: region, nation, customer, orders, then lineitem by key and supplier. The answer is the same in every order (checked against the previous binary, which joined in the greedy order).
CREATE DATABASE jo;
USE jo;
CREATE TABLE region (r_regionkey BIGINT PRIMARY KEY, r_name VARCHAR(25));
INSERT INTO region SELECT result, CONCAT('R', result) FROM generate_series(0, 4) g;
CREATE TABLE nation (n_nationkey BIGINT PRIMARY KEY, n_name VARCHAR(25), n_regionkey INT);
INSERT INTO nation SELECT result, CONCAT('N', result), result % 5 FROM generate_series(0, 24) g;
CREATE TABLE supplier (s_suppkey BIGINT PRIMARY KEY, s_nationkey INT);
INSERT INTO supplier SELECT result, (result * 3) % 25 FROM generate_series(1, 100) g;
CREATE TABLE customer (c_custkey BIGINT PRIMARY KEY, c_nationkey INT);
INSERT INTO customer SELECT result, (result * 7) % 25 FROM generate_series(1, 1500) g;
CREATE TABLE orders (o_orderkey BIGINT PRIMARY KEY, o_custkey BIGINT, o_orderdate DATE);
INSERT INTO orders SELECT result, result % 1500 + 1, DATE_ADD('1992-01-01', INTERVAL result % 2400 DAY) FROM generate_series(1, 15000) g;
CREATE TABLE lineitem (l_orderkey BIGINT, l_linenumber INT, l_suppkey BIGINT, l_price DECIMAL(12,2), PRIMARY KEY (l_orderkey, l_linenumber));
INSERT INTO lineitem SELECT result DIV 4 + 1, result % 4, (result * 37) % 100 + 1, (result % 1000) / 10 FROM generate_series(0, 59999) g;
EXPLAIN SELECT n_name, COUNT(*), SUM(l_price) FROM customer, orders, lineitem, supplier, nation, region WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'R2' AND o_orderdate >= '1994-01-01' AND o_orderdate < '1995-01-01' GROUP BY n_name;
SELECT n_name, COUNT(*), SUM(l_price) FROM customer, orders, lineitem, supplier, nation, region WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'R2' AND o_orderdate >= '1994-01-01' AND o_orderdate < '1995-01-01' GROUP BY n_name ORDER BY n_name;
-- Integer join keys hash as integers; a DECIMAL or DOUBLE equal to an integer joins it, one that is not joins nothing, and a text key joins by the ordinary key.
CREATE TABLE k (id BIGINT PRIMARY KEY, d DECIMAL(6,2), f DOUBLE, s VARCHAR(5));
INSERT INTO k VALUES (1, 1.00, 1.0, '1'), (2, 2.50, 2.5, '2'), (3, NULL, 3.0, 'x'), (4, 4.00, NULL, '04');
SELECT a.id, b.id FROM k a JOIN k b ON a.d = b.id ORDER BY 1, 2;
SELECT a.id, b.id FROM k a JOIN k b ON a.f = b.id ORDER BY 1, 2;
SELECT a.id, b.id FROM k a JOIN k b ON a.f = b.id AND a.d = b.id ORDER BY 1, 2;
SELECT a.id, b.id FROM k a LEFT JOIN k b ON a.d = b.f ORDER BY 1, 2;
SELECT a.id, b.id FROM k a JOIN k b ON a.s = b.id ORDER BY 1, 2;
DROP DATABASE jo;
