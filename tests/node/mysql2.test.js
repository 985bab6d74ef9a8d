// Node mysql2 against `tributary serve`. Run by tests/python/test_node_mysql2.py,
// which starts the server and passes TRIBUTARY_PORT and TRIBUTARY_DB.
// Every connection is closed with end(): the process must exit by itself.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const mysql = require('mysql2/promise');

const PORT = Number(process.env.TRIBUTARY_PORT);
const DB = process.env.TRIBUTARY_DB;
const SERVER_STATUS_IN_TRANS = 0x0001;
const SERVER_STATUS_AUTOCOMMIT = 0x0002;

if (!PORT || !DB) {
  throw new Error('set TRIBUTARY_PORT and TRIBUTARY_DB (run through pytest)');
}

function connect(database) {
  const opts = { host: '127.0.0.1', port: PORT, user: 'root', password: '', connectTimeout: 20000 };
  if (database) opts.database = database;
  return mysql.createConnection(opts);
}

async function committedIds(table) {
  const c = await connect(DB);
  try {
    const [rows] = await c.query(`SELECT id FROM ${table} ORDER BY id`);
    return rows.map((r) => r.id);
  } finally {
    await c.end();
  }
}

test('connect without a database, then USE', async () => {
  const c = await connect();
  try {
    const [rows] = await c.query('SELECT 41 + 1 AS x');
    assert.equal(rows[0].x, 42);
    await c.query(`USE ${DB}`);
    await c.query('CREATE TABLE nodb (id INT PRIMARY KEY)');
    await c.query('INSERT INTO nodb VALUES (1)');
    const [r2] = await c.query('SELECT id FROM nodb');
    assert.deepEqual(r2.map((r) => r.id), [1]);
  } finally {
    await c.end();
  }
});

test('beginTransaction / rollback discards, commit keeps', async () => {
  const c = await connect(DB);
  try {
    await c.query('CREATE TABLE tx (id INT PRIMARY KEY)');
    await c.beginTransaction();
    const [ok] = await c.query('INSERT INTO tx VALUES (1)');
    assert.equal(ok.affectedRows, 1);
    assert.ok(ok.serverStatus & SERVER_STATUS_IN_TRANS, `status ${ok.serverStatus} lacks IN_TRANS`);
    assert.deepEqual(await committedIds('tx'), [], 'uncommitted row visible to another session');
    await c.rollback();
    assert.deepEqual(await committedIds('tx'), [], 'rollback kept the row');

    await c.beginTransaction();
    await c.query('INSERT INTO tx VALUES (2)');
    await c.commit();
    assert.deepEqual(await committedIds('tx'), [2], 'commit lost the row');

    const [ok2] = await c.query('INSERT INTO tx VALUES (3)');
    assert.ok(ok2.serverStatus & SERVER_STATUS_AUTOCOMMIT, `status ${ok2.serverStatus} lacks AUTOCOMMIT`);
    assert.ok(!(ok2.serverStatus & SERVER_STATUS_IN_TRANS), `status ${ok2.serverStatus} has IN_TRANS`);
    assert.deepEqual(await committedIds('tx'), [2, 3]);
  } finally {
    await c.end();
  }
});

test('insertId, LAST_INSERT_ID(), DATE and DECIMAL (text and prepared)', async () => {
  const c = await connect(DB);
  try {
    await c.query('CREATE TABLE a (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT)');
    const [ok] = await c.query('INSERT INTO a (v) VALUES (10)');
    assert.equal(ok.insertId, 1);
    const [rows] = await c.query('SELECT LAST_INSERT_ID() AS id');
    assert.equal(rows[0].id, 1);

    await c.query('CREATE TABLE dd (id INT PRIMARY KEY, d DATE, p DECIMAL(10,2))');
    await c.query("INSERT INTO dd VALUES (1, '2024-02-29', 12.3), (2, NULL, NULL)");
    for (const run of [(sql) => c.query(sql), (sql) => c.execute(sql)]) {
      const [r] = await run('SELECT d, p FROM dd ORDER BY id');
      assert.ok(r[0].d instanceof Date, `DATE came back as ${typeof r[0].d}: ${r[0].d}`);
      // mysql2 builds a local-time Date at midnight for a DATE value
      assert.deepEqual([r[0].d.getFullYear(), r[0].d.getMonth() + 1, r[0].d.getDate(), r[0].d.getHours()],
        [2024, 2, 29, 0]);
      assert.equal(r[0].p, '12.30'); // mysql2 returns DECIMAL as a string by default
      assert.equal(r[1].d, null);
      assert.equal(r[1].p, null);
    }
    const [r] = await c.query({ sql: 'SELECT d FROM dd WHERE id = 1', dateStrings: true });
    assert.equal(r[0].d, '2024-02-29');
  } finally {
    await c.end();
  }
});

test('error codes arrive unwrapped', async () => {
  const c = await connect(DB);
  try {
    await assert.rejects(c.query('SELECT * FROM no_such_table'), (e) => {
      assert.equal(e.errno, 1146);
      assert.equal(e.code, 'ER_NO_SUCH_TABLE');
      assert.equal(e.sqlState, '42S02');
      return true;
    });
    const [rows] = await c.query('SELECT 1 AS one');
    assert.equal(rows[0].one, 1);
  } finally {
    await c.end();
  }
});
