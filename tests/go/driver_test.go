// Go's database/sql with go-sql-driver/mysql (Debian's
// golang-github-go-sql-driver-mysql-dev) against `tributary serve`: typed
// scans of every column type, prepared statements, transactions with
// commit, rollback, an isolation level and READ ONLY, and errors carrying
// MySQL's codes. Run by tests/python/test_go_driver.py, which starts the
// server and passes TRIBUTARY_PORT and TRIBUTARY_DB (GOPATH mode: no
// module download, the driver comes from the Debian package).
package driver_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func open(t *testing.T) *sql.DB {
	t.Helper()
	port, db := os.Getenv("TRIBUTARY_PORT"), os.Getenv("TRIBUTARY_DB")
	if port == "" || db == "" {
		t.Fatal("set TRIBUTARY_PORT and TRIBUTARY_DB (run through pytest)")
	}
	dsn := fmt.Sprintf("root@tcp(127.0.0.1:%s)/%s?parseTime=true&timeout=20s", port, db)
	d, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func exec(t *testing.T, d *sql.DB, q string, args ...any) sql.Result {
	t.Helper()
	r, err := d.Exec(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

func count(t *testing.T, d *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := d.QueryRow("SELECT COUNT(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// mysqlCode is the MySQL error number of err, or 0.
func mysqlCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func TestTypesThroughPreparedStatements(t *testing.T) {
	d := open(t)
	exec(t, d, `CREATE TABLE ty (id BIGINT PRIMARY KEY, n INT, s VARCHAR(20), price DECIMAL(10,2),
		f DOUBLE, at DATETIME(3), day DATE, doc JSON, ok BOOL)`)
	ins, err := d.Prepare("INSERT INTO ty VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	defer ins.Close()
	at := time.Date(2024, 2, 29, 13, 14, 15, 123_000_000, time.UTC)
	if _, err := ins.Exec(1, -7, "o'brien", "12.30", 1.5, at, "2024-02-29", `{"a": [1, 2]}`, true); err != nil {
		t.Fatal(err)
	}
	if _, err := ins.Exec(2, nil, nil, nil, nil, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	sel, err := d.Prepare("SELECT n, s, price, f, at, day, doc, ok FROM ty WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Close()
	var (
		n          int64
		s, price   string
		f          float64
		gotAt, day time.Time
		doc        string
		ok         bool
	)
	if err := sel.QueryRow(1).Scan(&n, &s, &price, &f, &gotAt, &day, &doc, &ok); err != nil {
		t.Fatal(err)
	}
	if n != -7 || s != "o'brien" || price != "12.30" || f != 1.5 || !ok {
		t.Fatalf("row 1: %v %q %q %v %v", n, s, price, f, ok)
	}
	if !gotAt.Equal(at) {
		t.Fatalf("DATETIME(3): %v, want %v", gotAt, at)
	}
	if day.Format("2006-01-02") != "2024-02-29" {
		t.Fatalf("DATE: %v", day)
	}
	if doc != `{"a": [1, 2]}` {
		t.Fatalf("JSON: %q", doc)
	}
	var (
		nn   sql.NullInt64
		ns   sql.NullString
		nt   sql.NullTime
		ndoc sql.NullString
	)
	if err := d.QueryRow("SELECT n, s, at, doc FROM ty WHERE id = ?", 2).Scan(&nn, &ns, &nt, &ndoc); err != nil {
		t.Fatal(err)
	}
	if nn.Valid || ns.Valid || nt.Valid || ndoc.Valid {
		t.Fatalf("NULLs: %v %v %v %v", nn, ns, nt, ndoc)
	}
	// The same prepared statement many times, and a SUM of DECIMALs exact.
	for i := 3; i <= 12; i++ {
		if _, err := ins.Exec(i, i, "x", "0.10", 0, nil, nil, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	var exact bool
	if err := d.QueryRow("SELECT SUM(price) = 1.00 FROM ty WHERE id >= ?", 3).Scan(&exact); err != nil || !exact {
		t.Fatalf("SUM of ten 0.10 = 1.00: %v %v", exact, err)
	}
}

func TestTransactions(t *testing.T) {
	d := open(t)
	exec(t, d, "CREATE TABLE tx (id INT PRIMARY KEY, v INT)")
	ctx := context.Background()

	tx, err := d.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO tx VALUES (1, 1)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n := count(t, d, "tx"); n != 0 {
		t.Fatalf("after rollback: %d rows", n)
	}

	tx, err = d.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	// READ COMMITTED: a row another connection commits after this
	// transaction's first read is seen by its next one (REPEATABLE READ
	// would keep the first snapshot).
	txCount := func() int {
		var n int
		if err := tx.QueryRow("SELECT COUNT(*) FROM tx").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := txCount(); n != 0 {
		t.Fatalf("first read: %d rows", n)
	}
	exec(t, d, "INSERT INTO tx VALUES (10, 10)")
	if n := txCount(); n != 1 {
		t.Fatalf("READ COMMITTED read after another commit: %d rows, want 1", n)
	}
	if _, err := tx.Exec("INSERT INTO tx VALUES (2, 2)"); err != nil {
		t.Fatal(err)
	}
	// Another connection does not see it before the commit.
	if n := count(t, d, "tx"); n != 1 {
		t.Fatalf("uncommitted row seen: %d rows", n)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := count(t, d, "tx"); n != 2 {
		t.Fatalf("after commit: %d rows", n)
	}

	ro, err := d.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = ro.Exec("INSERT INTO tx VALUES (3, 3)")
	if code := mysqlCode(err); code != 1792 {
		t.Fatalf("write in a READ ONLY transaction: %v (code %d, want 1792)", err, code)
	}
	if err := ro.Rollback(); err != nil {
		t.Fatal(err)
	}
	// A session-level isolation set by the driver's statement.
	exec(t, d, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
}

func TestErrorsCarryMySQLCodes(t *testing.T) {
	d := open(t)
	exec(t, d, "CREATE TABLE e (id INT PRIMARY KEY)")
	exec(t, d, "INSERT INTO e VALUES (?)", 1)
	_, err := d.Exec("INSERT INTO e VALUES (?)", 1)
	if code := mysqlCode(err); code != 1062 {
		t.Fatalf("duplicate key: %v (code %d)", err, code)
	}
	_, err = d.Query("SELECT nope FROM e")
	if code := mysqlCode(err); code != 1054 {
		t.Fatalf("unknown column: %v (code %d)", err, code)
	}
	// The pool keeps working after errors.
	if n := count(t, d, "e"); n != 1 {
		t.Fatalf("rows: %d", n)
	}
}

func TestLastInsertIdAndAffectedRows(t *testing.T) {
	d := open(t)
	exec(t, d, "CREATE TABLE ai (id BIGINT PRIMARY KEY AUTO_INCREMENT, v INT)")
	r := exec(t, d, "INSERT INTO ai (v) VALUES (?), (?), (?)", 1, 2, 3)
	id, err := r.LastInsertId()
	if err != nil || id != 1 {
		t.Fatalf("LastInsertId: %d %v", id, err)
	}
	r = exec(t, d, "UPDATE ai SET v = v + 1 WHERE v >= ?", 2)
	if n, err := r.RowsAffected(); err != nil || n != 2 {
		t.Fatalf("RowsAffected: %d %v", n, err)
	}
}

func TestLoadDataLocalThroughAReader(t *testing.T) {
	d := open(t)
	// MySQL 8's default is OFF; the server side must allow LOCAL.
	exec(t, d, "SET GLOBAL local_infile = 1")
	// The server is shared with other tests: back to the default after.
	defer exec(t, d, "SET GLOBAL local_infile = 0")
	exec(t, d, "CREATE TABLE ld (id INT PRIMARY KEY, name VARCHAR(20), v VECF32(2))")
	var body strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&body, "%d,name %d,\"[%d,%d]\"\n", i, i, i, -i)
	}
	mysql.RegisterReaderHandler("rows", func() io.Reader { return strings.NewReader(body.String()) })
	defer mysql.DeregisterReaderHandler("rows")
	r := exec(t, d, `LOAD DATA LOCAL INFILE 'Reader::rows' INTO TABLE ld
		FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '"'`)
	if n, err := r.RowsAffected(); err != nil || n != 1000 {
		t.Fatalf("rows loaded: %d %v", n, err)
	}
	var name, v string
	if err := d.QueryRow("SELECT name, v FROM ld WHERE id = ?", 500).Scan(&name, &v); err != nil {
		t.Fatal(err)
	}
	if name != "name 500" || v != "[500, -500]" {
		t.Fatalf("row 500: %q %q", name, v)
	}
}
