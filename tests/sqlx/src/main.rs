//! sqlx against Tributary: connect, `sqlx::migrate!` (argument `migrate`), transactions (commit,
//! rollback, a nested one as a savepoint), typed `query_as` over every column
//! type (integers — BIGINT UNSIGNED is not here: result columns do not carry
//! the UNSIGNED flag yet, which sqlx checks for `u64` —, DOUBLE, DECIMAL, VARCHAR / TEXT, DATE, DATETIME(6), JSON,
//! BOOL, NULLs), prepared statements reused, and MySQL error codes. Exits
//! non-zero with a message on the first failure.

use rust_decimal::Decimal;
use sqlx::mysql::{MySqlConnectOptions, MySqlPoolOptions};
use sqlx::{Connection, Row};
use std::str::FromStr;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

macro_rules! check {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(format!($($msg)+).into());
        }
    };
}

#[derive(sqlx::FromRow, Debug, PartialEq)]
struct Typed {
    id: i64,
    small: i16,
    n: i32,
    big: i64,
    f: f64,
    price: Decimal,
    name: String,
    body: Option<String>,
    day: chrono::NaiveDate,
    at: chrono::NaiveDateTime,
    doc: sqlx::types::Json<serde_json::Value>,
    ok: bool,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Res<()> {
    let port: u16 = std::env::var("TRIBUTARY_PORT")?.parse()?;
    let db = std::env::var("TRIBUTARY_DB")?;
    let opts = MySqlConnectOptions::new()
        .host("127.0.0.1")
        .port(port)
        .username("root")
        .database(&db);
    let pool = MySqlPoolOptions::new().max_connections(3).connect_with(opts).await?;

    if std::env::args().nth(1).as_deref() == Some("migrate") {
        // Migrations: applied once, recorded in _sqlx_migrations, a second
        // run applies nothing. (Fails today: sqlx keeps each migration's
        // checksum in a BLOB, and binary strings are not stored.)
        sqlx::migrate!("./migrations").run(&pool).await?;
        sqlx::migrate!("./migrations").run(&pool).await?;
        let applied: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM _sqlx_migrations WHERE success")
                .fetch_one(&pool)
                .await?;
        check!(applied == 2, "migrations recorded: {applied}");
        println!("sqlx migrate passed");
        return Ok(());
    }
    // The migrations' statements, run as a script (sqlx::raw_sql).
    for sql in [
        include_str!("../migrations/20260101000000_people.sql"),
        include_str!("../migrations/20260102000000_teams.sql"),
    ] {
        sqlx::raw_sql(sql).execute(&pool).await?;
    }

    // Transactions: rollback, commit, a nested transaction (a savepoint)
    // rolled back inside a committed one.
    let mut tx = pool.begin().await?;
    sqlx::query("INSERT INTO teams VALUES (?, ?)").bind(1_i64).bind("red").execute(&mut *tx).await?;
    tx.rollback().await?;
    let mut tx = pool.begin().await?;
    sqlx::query("INSERT INTO teams VALUES (?, ?)").bind(2_i64).bind("blue").execute(&mut *tx).await?;
    {
        let mut inner = tx.begin().await?;
        sqlx::query("INSERT INTO teams VALUES (?, ?)").bind(3_i64).bind("green").execute(&mut *inner).await?;
        inner.rollback().await?;
    }
    sqlx::query("INSERT INTO people (name, team_id) VALUES (?, ?)")
        .bind("ada")
        .bind(2_i64)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    let teams: Vec<(i64, String)> = sqlx::query_as("SELECT id, title FROM teams ORDER BY id")
        .fetch_all(&pool)
        .await?;
    check!(teams == vec![(2, "blue".to_string())], "teams after the transactions: {teams:?}");
    // The foreign key the second migration added: ON DELETE SET NULL.
    sqlx::query("DELETE FROM teams WHERE id = 2").execute(&pool).await?;
    let team: Option<i64> = sqlx::query_scalar("SELECT team_id FROM people WHERE name = 'ada'")
        .fetch_one(&pool)
        .await?;
    check!(team.is_none(), "ON DELETE SET NULL: {team:?}");
    let err = sqlx::query("INSERT INTO people (name, team_id) VALUES ('bob', 99)")
        .execute(&pool)
        .await
        .err()
        .ok_or("an orphan row was accepted")?;
    let code = err.as_database_error().and_then(|e| e.code()).map(|c| c.to_string());
    check!(code.as_deref() == Some("23000"), "FK violation's SQLSTATE: {err}");

    // Every column type, typed.
    sqlx::query(
        "CREATE TABLE typed (id BIGINT PRIMARY KEY, small SMALLINT NOT NULL, n INT NOT NULL,
         big BIGINT NOT NULL, f DOUBLE NOT NULL, price DECIMAL(12,4) NOT NULL,
         name VARCHAR(30) NOT NULL, body TEXT, day DATE NOT NULL, at DATETIME(6) NOT NULL,
         doc JSON NOT NULL, ok BOOL NOT NULL)",
    )
    .execute(&pool)
    .await?;
    let want = Typed {
        id: 1,
        small: -300,
        n: 2_000_000_000,
        big: -9_000_000_000_000_000_000,
        f: 0.1 + 0.2,
        price: Decimal::from_str("12345678.9012")?,
        name: "o'brien ü".into(),
        body: None,
        day: chrono::NaiveDate::from_ymd_opt(2024, 2, 29).ok_or("date")?,
        at: chrono::NaiveDate::from_ymd_opt(2024, 2, 29)
            .and_then(|d| d.and_hms_micro_opt(13, 14, 15, 123_456))
            .ok_or("datetime")?,
        doc: sqlx::types::Json(serde_json::json!({"k": [1, "two", null]})),
        ok: true,
    };
    let mut conn = pool.acquire().await?;
    for id in 1..=3_i64 {
        // One prepared statement, executed three times on one connection.
        sqlx::query("INSERT INTO typed VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            .bind(id)
            .bind(want.small)
            .bind(want.n)
            .bind(want.big)
            .bind(want.f)
            .bind(want.price)
            .bind(&want.name)
            .bind(&want.body)
            .bind(want.day)
            .bind(want.at)
            .bind(&want.doc)
            .bind(want.ok)
            .execute(&mut *conn)
            .await?;
    }
    let got: Typed = sqlx::query_as("SELECT * FROM typed WHERE id = ?")
        .bind(1_i64)
        .fetch_one(&mut *conn)
        .await?;
    check!(got == want, "typed round trip:\n got {got:?}\nwant {want:?}");
    let sum: Decimal = sqlx::query_scalar("SELECT SUM(price) FROM typed")
        .fetch_one(&mut *conn)
        .await?;
    check!(sum == want.price * Decimal::from(3), "SUM(DECIMAL): {sum}");
    let row = sqlx::query("SELECT COUNT(*) AS n, MAX(at) AS latest FROM typed")
        .fetch_one(&mut *conn)
        .await?;
    let n: i64 = row.try_get("n")?;
    let latest: chrono::NaiveDateTime = row.try_get("latest")?;
    check!(n == 3 && latest == want.at, "aggregates: {n} {latest}");
    // Back to the pool: `Pool::close` below waits for every connection to
    // come back, and would wait forever for one still held here.
    drop(conn);

    // A duplicate key: MySQL's error 1062 through the driver.
    let err = sqlx::query("INSERT INTO teams VALUES (5, 'x'), (5, 'y')")
        .execute(&pool)
        .await
        .err()
        .ok_or("a duplicate key was accepted")?;
    let msg = err.to_string();
    check!(msg.contains("1062"), "duplicate key error: {msg}");

    pool.close().await;
    println!("sqlx checks passed");
    Ok(())
}
