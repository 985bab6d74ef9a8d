-- Tributary's tables and functions inside a PostgreSQL database (decision 017).
-- Applied by every compute node at open, under an advisory lock, idempotently.
-- Keys and values are opaque bytes (bytea compares as memcmp, then length:
-- the same order as Rust's [u8]).

-- The commit clock: the last step of every writing commit takes this row's
-- lock, which PostgreSQL releases only after the commit is durable and
-- visible, so timestamp order is commit order is visibility order.
CREATE TABLE IF NOT EXISTS tsr_clock (id int PRIMARY KEY CHECK (id = 1), ts bigint NOT NULL);
INSERT INTO tsr_clock VALUES (1, 0) ON CONFLICT DO NOTHING;

-- The latest version of every key (value NULL: absent, a tombstone or a
-- lock placeholder with ts 0). Row locks are taken on these rows.
CREATE TABLE IF NOT EXISTS tsr_rows (
  table_id bigint NOT NULL, key bytea NOT NULL, ts bigint NOT NULL, value bytea,
  PRIMARY KEY (table_id, key)) WITH (fillfactor = 80);

-- Superseded versions, kept while a snapshot or a consumer may need them.
CREATE TABLE IF NOT EXISTS tsr_history (
  table_id bigint NOT NULL, key bytea NOT NULL, ts bigint NOT NULL, value bytea,
  PRIMARY KEY (table_id, key, ts));

-- The per-table change log, written in the committing transaction.
-- kind: 0 insert, 1 update, 2 delete.
CREATE TABLE IF NOT EXISTS tsr_changes (
  table_id bigint NOT NULL, ts bigint NOT NULL, seq int NOT NULL, kind smallint NOT NULL,
  key bytea NOT NULL, old bytea, new bytea,
  PRIMARY KEY (table_id, ts, seq));

-- A table's GC horizon: versions and changes at or below it may be gone.
CREATE TABLE IF NOT EXISTS tsr_table_gc (table_id bigint PRIMARY KEY, gc_ts bigint NOT NULL);
-- Purged tables read as empty; GC deletes their rows in batches.
CREATE TABLE IF NOT EXISTS tsr_purged (table_id bigint PRIMARY KEY, ts bigint NOT NULL);
-- Live row counts (the planner's estimate), kept by tsr_commit.
CREATE TABLE IF NOT EXISTS tsr_table_stats (table_id bigint PRIMARY KEY, n bigint NOT NULL);
CREATE TABLE IF NOT EXISTS tsr_consumers (
  consumer text NOT NULL, table_id bigint NOT NULL, low_wm bigint NOT NULL,
  PRIMARY KEY (consumer, table_id));
CREATE TABLE IF NOT EXISTS tsr_leases (
  name text PRIMARY KEY, holder text NOT NULL, expires_at timestamptz NOT NULL,
  epoch bigint NOT NULL DEFAULT 1);
CREATE TABLE IF NOT EXISTS tsr_sequences (name text PRIMARY KEY, next bigint NOT NULL);
-- Each open compute node's oldest snapshot, refreshed by its heartbeat.
CREATE TABLE IF NOT EXISTS tsr_cn_snapshots (
  cn text PRIMARY KEY, min_ts bigint NOT NULL, beat_at timestamptz NOT NULL);

-- Take a row lock on (t, k) and return the latest committed value (NULL:
-- absent). mode 0 = X (FOR UPDATE), 1 = S (FOR SHARE), 2 = IX (FOR KEY
-- SHARE). gate: the key's metadata-lock relation; S and IX lock it in SHARE
-- / ROW EXCLUSIVE mode (the caller created it), X in EXCLUSIVE mode when it
-- exists. A missing key gets a placeholder head inserted by this
-- transaction: others wait on it as on a lock.
CREATE OR REPLACE FUNCTION tsr_lock(t bigint, k bytea, mode int, gate text) RETURNS bytea
LANGUAGE plpgsql AS $$
DECLARE
  v bytea;
BEGIN
  IF gate IS NOT NULL THEN
    IF mode = 1 THEN
      EXECUTE format('LOCK TABLE %I IN SHARE MODE', gate);
    ELSIF mode = 2 THEN
      EXECUTE format('LOCK TABLE %I IN ROW EXCLUSIVE MODE', gate);
    ELSIF to_regclass(gate) IS NOT NULL THEN
      EXECUTE format('LOCK TABLE %I IN EXCLUSIVE MODE', gate);
    END IF;
  END IF;
  LOOP
    IF mode = 0 THEN
      SELECT r.value INTO v FROM tsr_rows r WHERE r.table_id = t AND r.key = k FOR UPDATE;
    ELSIF mode = 1 THEN
      SELECT r.value INTO v FROM tsr_rows r WHERE r.table_id = t AND r.key = k FOR SHARE;
    ELSE
      SELECT r.value INTO v FROM tsr_rows r WHERE r.table_id = t AND r.key = k FOR KEY SHARE;
    END IF;
    IF FOUND THEN
      RETURN v;
    END IF;
    INSERT INTO tsr_rows VALUES (t, k, 0, NULL) ON CONFLICT DO NOTHING;
    IF FOUND THEN
      RETURN NULL;
    END IF;
  END LOOP;
END $$;

-- tsr_lock for an exclusive lock under NOWAIT / SKIP LOCKED: never waits
-- for a lock another transaction holds on the row (or on the key's gate);
-- got = false then, with nothing locked. (An insert of the same missing
-- key by a transaction still running is waited for up to lock_timeout.)
CREATE OR REPLACE FUNCTION tsr_lock_try(t bigint, k bytea, mode int, gate text)
RETURNS TABLE(v bytea, got boolean)
LANGUAGE plpgsql AS $$
BEGIN
  IF mode <> 0 THEN
    RAISE EXCEPTION 'tsr_lock_try takes exclusive locks only';
  END IF;
  BEGIN
    IF gate IS NOT NULL AND to_regclass(gate) IS NOT NULL THEN
      EXECUTE format('LOCK TABLE %I IN EXCLUSIVE MODE NOWAIT', gate);
    END IF;
    LOOP
      SELECT r.value INTO v FROM tsr_rows r WHERE r.table_id = t AND r.key = k FOR UPDATE NOWAIT;
      IF FOUND THEN
        got := true;
        RETURN NEXT;
        RETURN;
      END IF;
      INSERT INTO tsr_rows VALUES (t, k, 0, NULL) ON CONFLICT DO NOTHING;
      IF FOUND THEN
        v := NULL;
        got := true;
        RETURN NEXT;
        RETURN;
      END IF;
    END LOOP;
  EXCEPTION WHEN lock_not_available THEN
    v := NULL;
    got := false;
    RETURN NEXT;
  END;
END $$;

-- Commit a transaction's net writes (sorted by table, then key; every key
-- locked by this transaction; value NULL deletes). Takes the clock last,
-- moves replaced heads to history, writes the change log and the row
-- counts, and returns the commit timestamp.
CREATE OR REPLACE FUNCTION tsr_commit(p_t bigint[], p_k bytea[], p_v bytea[]) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  cts bigint;
  n int := coalesce(array_length(p_k, 1), 0);
  o_ts bigint;
  o_v bytea;
  kind smallint;
  s int := 0;
  cur bigint := NULL;
  delta bigint := 0;
BEGIN
  UPDATE tsr_clock SET ts = ts + 1 WHERE id = 1 RETURNING ts INTO cts;
  FOR i IN 1..n LOOP
    IF cur IS DISTINCT FROM p_t[i] THEN
      IF delta <> 0 THEN
        INSERT INTO tsr_table_stats VALUES (cur, delta)
          ON CONFLICT (table_id) DO UPDATE SET n = tsr_table_stats.n + EXCLUDED.n;
      END IF;
      cur := p_t[i];
      s := 0;
      delta := 0;
    END IF;
    SELECT r.ts, r.value INTO o_ts, o_v FROM tsr_rows r WHERE r.table_id = p_t[i] AND r.key = p_k[i];
    IF NOT FOUND THEN
      RAISE EXCEPTION 'tsr_commit: a write to table % without its row lock', p_t[i];
    END IF;
    CONTINUE WHEN o_v IS NULL AND p_v[i] IS NULL;
    kind := CASE WHEN o_v IS NULL THEN 0 WHEN p_v[i] IS NULL THEN 2 ELSE 1 END;
    IF o_ts > 0 THEN
      INSERT INTO tsr_history VALUES (p_t[i], p_k[i], o_ts, o_v);
    END IF;
    UPDATE tsr_rows SET ts = cts, value = p_v[i] WHERE table_id = p_t[i] AND key = p_k[i];
    INSERT INTO tsr_changes VALUES (p_t[i], cts, s, kind, p_k[i], o_v, p_v[i]);
    s := s + 1;
    delta := delta + CASE kind WHEN 0 THEN 1 WHEN 2 THEN -1 ELSE 0 END;
  END LOOP;
  IF delta <> 0 THEN
    INSERT INTO tsr_table_stats VALUES (cur, delta)
      ON CONFLICT (table_id) DO UPDATE SET n = tsr_table_stats.n + EXCLUDED.n;
  END IF;
  RETURN cts;
END $$;
