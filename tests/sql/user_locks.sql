-- GET_LOCK / RELEASE_LOCK / IS_FREE_LOCK / RELEASE_ALL_LOCKS in one
-- session (two sessions: tests/user_locks.rs). Checked against MariaDB 10.11.
SELECT GET_LOCK('Mig', 0), GET_LOCK('mig', 0), IS_FREE_LOCK('MIG');
SELECT RELEASE_LOCK('mig'), IS_FREE_LOCK('mig'), RELEASE_LOCK('mig'), IS_FREE_LOCK('mig');
-- Nobody holds it: NULL.
SELECT RELEASE_LOCK('mig');
-- A lock outlives the transaction it was taken in.
BEGIN;
SELECT GET_LOCK('a', 0), GET_LOCK('b', 0), GET_LOCK('b', 0);
ROLLBACK;
SELECT IS_FREE_LOCK('a'), IS_FREE_LOCK('b');
SELECT RELEASE_ALL_LOCKS(), IS_FREE_LOCK('a'), RELEASE_ALL_LOCKS();
SELECT GET_LOCK(NULL, 0), RELEASE_LOCK(NULL), IS_FREE_LOCK(NULL);
SELECT GET_LOCK('', 0);
SELECT GET_LOCK(REPEAT('x', 65), 0);
SELECT GET_LOCK(REPEAT('x', 64), 0), RELEASE_LOCK(REPEAT('X', 64));
