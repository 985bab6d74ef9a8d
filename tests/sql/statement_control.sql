-- KILL, the process list, SHOW STATUS and max_execution_time: what can be
-- checked from one session (the concurrent cases are in
-- tests/statement_control.rs and tests/python/test_kill.py).
KILL 4000000000;
KILL QUERY 4000000000;
KILL CONNECTION 0;
KILL;
KILL 'x';
KILL 1 2;
SHOW PROCESSLIST LIKE 'x';
SELECT SLEEP(0), SLEEP(NULL), SLEEP(0.001);
SELECT SLEEP(-1);
SELECT SLEEP();
SELECT @@max_execution_time, @@session.max_execution_time;
SET max_execution_time = 5000;
SELECT @@max_execution_time;
SET max_execution_time = -1;
SET max_execution_time = 'soon';
SELECT @@max_execution_time;
SELECT /*+ MAX_EXECUTION_TIME(1000) */ 1 + 1;
SHOW VARIABLES LIKE 'max_execution_time';
SET max_execution_time = DEFAULT;
SELECT @@max_execution_time;
SHOW STATUS LIKE 'no_such_counter';
SELECT COUNT(*) FROM (SELECT 1 FROM information_schema.PROCESSLIST) x WHERE 1 = 0;
