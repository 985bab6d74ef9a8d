//! The MySQL protocol layer end to end, with a tiny raw-bytes client: the
//! server runs in-process (`MysqlServer::bind` on port 0) and every test
//! speaks packets directly, so the exact bytes (status flags, error codes,
//! connection closes) are what is checked. Every read has a deadline.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sha1::{Digest, Sha1};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;
use tributary::testing::Limits;
use tributary::Database;
use tributary::{MysqlServer, ServerOptions};

const DEADLINE: Duration = Duration::from_secs(10);

const CLIENT_CONNECT_WITH_DB: u32 = 1 << 3;
const CLIENT_PROTOCOL_41: u32 = 1 << 9;
const CLIENT_SECURE_CONNECTION: u32 = 1 << 15;
const CLIENT_MULTI_STATEMENTS: u32 = 1 << 16;
const CLIENT_MULTI_RESULTS: u32 = 1 << 17;
const CLIENT_PLUGIN_AUTH: u32 = 1 << 19;
const CLIENT_DEPRECATE_EOF: u32 = 1 << 24;

const IN_TRANS: u16 = 0x0001;
const AUTOCOMMIT: u16 = 0x0002;
const MORE_RESULTS: u16 = 0x0008;

struct Server {
    addr: SocketAddr,
    limits: Arc<Limits>,
    threads: Arc<std::sync::atomic::AtomicUsize>,
    token: CancellationToken,
    task: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

impl Server {
    async fn start(listen: &str, max_allowed_packet: usize) -> Server {
        Server::start_with(ServerOptions {
            listen: listen.to_string(),
            max_allowed_packet,
            ..Default::default()
        })
        .await
    }

    /// Start with `opts` (plus the user alice:secret).
    async fn start_with(mut opts: ServerOptions) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        let db = tokio::task::spawn_blocking(move || Database::open(path))
            .await
            .unwrap()
            .unwrap();
        opts.users = vec!["alice:secret".parse().unwrap()];
        let server = MysqlServer::bind(db, opts).await.unwrap();
        let addr = server.local_addr().unwrap();
        let limits = server.limits();
        let threads = server.connection_threads();
        let token = CancellationToken::new();
        let task = tokio::spawn(server.run(token.clone()));
        Server {
            addr,
            limits,
            threads,
            token,
            task,
            _dir: dir,
        }
    }

    async fn stop(self) {
        self.token.cancel();
        tokio::time::timeout(DEADLINE, self.task)
            .await
            .expect("server stops")
            .unwrap();
        // Every connection ran on a thread of its own; the server joined
        // them all before it returned.
        assert_eq!(
            self.threads.load(std::sync::atomic::Ordering::SeqCst),
            0,
            "connection threads left running after the server stopped"
        );
    }
}

fn scramble(password: &str, salt: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let h = |parts: &[&[u8]]| -> [u8; 20] {
        let mut s = Sha1::new();
        for p in parts {
            s.update(p);
        }
        s.finalize().into()
    };
    let stage1 = h(&[password.as_bytes()]);
    let stage2 = h(&[&stage1]);
    let mask = h(&[salt, &stage2]);
    stage1.iter().zip(mask).map(|(a, b)| a ^ b).collect()
}

/// A server error packet, decoded.
#[derive(Debug, Clone, PartialEq)]
struct ErrPkt {
    code: u16,
    state: String,
    message: String,
}

fn parse_err(p: &[u8]) -> ErrPkt {
    assert_eq!(p[0], 0xff, "not an error packet: {p:?}");
    let code = u16::from_le_bytes([p[1], p[2]]);
    assert_eq!(p[3], b'#');
    ErrPkt {
        code,
        state: String::from_utf8_lossy(&p[4..9]).into_owned(),
        message: String::from_utf8_lossy(&p[9..]).into_owned(),
    }
}

fn lenenc(p: &[u8], pos: &mut usize) -> Option<u64> {
    let b = p[*pos];
    *pos += 1;
    let mut take = |n: usize| {
        let mut v = 0u64;
        for i in 0..n {
            v |= u64::from(p[*pos + i]) << (8 * i);
        }
        *pos += n;
        v
    };
    match b {
        0xfb => None,
        0xfc => Some(take(2)),
        0xfd => Some(take(3)),
        0xfe => Some(take(8)),
        n => Some(u64::from(n)),
    }
}

fn lenenc_str(p: &[u8], pos: &mut usize) -> Option<Vec<u8>> {
    let n = lenenc(p, pos)? as usize;
    let s = p[*pos..*pos + n].to_vec();
    *pos += n;
    Some(s)
}

#[derive(Debug, Clone, PartialEq)]
struct OkPkt {
    affected: u64,
    last_insert_id: u64,
    status: u16,
    warnings: u16,
}

fn parse_ok(p: &[u8]) -> OkPkt {
    assert!(p[0] == 0 || p[0] == 0xfe, "not an OK packet: {p:?}");
    let mut pos = 1;
    let affected = lenenc(p, &mut pos).unwrap();
    let last_insert_id = lenenc(p, &mut pos).unwrap();
    let status = u16::from_le_bytes([p[pos], p[pos + 1]]);
    let warnings = u16::from_le_bytes([p[pos + 2], p[pos + 3]]);
    OkPkt {
        affected,
        last_insert_id,
        status,
        warnings,
    }
}

#[derive(Debug, Clone)]
struct Column {
    name: String,
    table: String,
    charset: u16,
    length: u32,
    ty: u8,
    decimals: u8,
}

fn parse_column(p: &[u8]) -> Column {
    let mut pos = 0;
    assert_eq!(lenenc_str(p, &mut pos).unwrap(), b"def");
    let _schema = lenenc_str(p, &mut pos);
    let table = lenenc_str(p, &mut pos).unwrap();
    let _org_table = lenenc_str(p, &mut pos);
    let name = lenenc_str(p, &mut pos).unwrap();
    let _org_name = lenenc_str(p, &mut pos);
    assert_eq!(p[pos], 0x0c);
    pos += 1;
    let charset = u16::from_le_bytes([p[pos], p[pos + 1]]);
    let length = u32::from_le_bytes([p[pos + 2], p[pos + 3], p[pos + 4], p[pos + 5]]);
    Column {
        name: String::from_utf8(name).unwrap(),
        table: String::from_utf8(table).unwrap(),
        charset,
        length,
        ty: p[pos + 6],
        decimals: p[pos + 9],
    }
}

/// One result of a command.
#[derive(Debug)]
enum Reply {
    Ok(OkPkt),
    Err(ErrPkt),
    Rows {
        columns: Vec<Column>,
        rows: Vec<Vec<u8>>,
        status: u16,
    },
}

impl Reply {
    fn ok(&self) -> &OkPkt {
        match self {
            Reply::Ok(o) => o,
            other => panic!("expected OK, got {other:?}"),
        }
    }

    fn err(&self) -> &ErrPkt {
        match self {
            Reply::Err(e) => e,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    /// Text rows as strings (NULL as None).
    fn text(&self) -> Vec<Vec<Option<String>>> {
        let Reply::Rows { columns, rows, .. } = self else {
            panic!("expected rows, got {self:?}")
        };
        rows.iter()
            .map(|r| {
                let mut pos = 0;
                (0..columns.len())
                    .map(|_| lenenc_str(r, &mut pos).map(|b| String::from_utf8(b).unwrap()))
                    .collect()
            })
            .collect()
    }

    fn status(&self) -> u16 {
        match self {
            Reply::Ok(o) => o.status,
            Reply::Rows { status, .. } => *status,
            Reply::Err(e) => panic!("error: {e:?}"),
        }
    }
}

struct Client {
    s: TcpStream,
    salt: Vec<u8>,
    deprecate_eof: bool,
}

async fn read_raw(s: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
    let mut h = [0u8; 4];
    match tokio::time::timeout(DEADLINE, s.read_exact(&mut h))
        .await
        .expect("read deadline")
    {
        Ok(_) => {}
        Err(_) => return None,
    }
    let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
    let mut p = vec![0u8; len];
    tokio::time::timeout(DEADLINE, s.read_exact(&mut p))
        .await
        .expect("read deadline")
        .ok()?;
    Some((h[3], p))
}

async fn write_raw(s: &mut TcpStream, seq: u8, payload: &[u8]) {
    let mut v = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    v.push(seq);
    v.extend_from_slice(payload);
    s.write_all(&v).await.unwrap();
}

/// Asserts the server closed the connection (EOF, or a reset).
async fn assert_closed(s: &mut TcpStream) {
    let mut b = [0u8; 1];
    let r = tokio::time::timeout(DEADLINE, s.read(&mut b))
        .await
        .expect("server closes the connection");
    assert!(matches!(r, Ok(0) | Err(_)), "connection still open: {r:?}");
}

struct Login<'a> {
    user: &'a [u8],
    password: &'a str,
    db: Option<&'a str>,
    plugin: &'a str,
    deprecate_eof: bool,
}

impl Default for Login<'_> {
    fn default() -> Self {
        Login {
            user: b"root",
            password: "",
            db: None,
            plugin: "mysql_native_password",
            deprecate_eof: false,
        }
    }
}

impl Client {
    /// Handshake; `Err` carries the server's error (the socket is then
    /// checked to be closed).
    async fn connect(addr: SocketAddr, login: Login<'_>) -> Result<Client, ErrPkt> {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let (seq, g) = read_raw(&mut s).await.expect("greeting");
        assert_eq!((seq, g[0]), (0, 10));
        let nul = g.iter().position(|&b| b == 0).unwrap();
        let version = String::from_utf8_lossy(&g[1..nul]).into_owned();
        assert_eq!(version, tributary::SERVER_VERSION);
        let mut salt = g[nul + 5..nul + 13].to_vec();
        let rest = nul + 13 + 1 + 2 + 1 + 2 + 2 + 1 + 10;
        salt.extend_from_slice(&g[rest..rest + 12]);
        let mut caps = CLIENT_PROTOCOL_41
            | CLIENT_SECURE_CONNECTION
            | CLIENT_PLUGIN_AUTH
            | CLIENT_MULTI_STATEMENTS
            | CLIENT_MULTI_RESULTS;
        if login.db.is_some() {
            caps |= CLIENT_CONNECT_WITH_DB;
        }
        if login.deprecate_eof {
            caps |= CLIENT_DEPRECATE_EOF;
        }
        let native = login.plugin == "mysql_native_password";
        let auth = if native {
            scramble(login.password, &salt)
        } else {
            // What a caching_sha2_password client sends first: something
            // else; the server must switch it to native.
            vec![0x5a; 32]
        };
        let mut p = caps.to_le_bytes().to_vec();
        p.extend_from_slice(&(16u32 << 20).to_le_bytes());
        p.push(45);
        p.extend_from_slice(&[0; 23]);
        p.extend_from_slice(login.user);
        p.push(0);
        p.push(auth.len() as u8);
        p.extend_from_slice(&auth);
        if let Some(db) = login.db {
            p.extend_from_slice(db.as_bytes());
            p.push(0);
        }
        p.extend_from_slice(login.plugin.as_bytes());
        p.push(0);
        write_raw(&mut s, 1, &p).await;
        let (mut seq, mut reply) = read_raw(&mut s).await.expect("auth reply");
        if reply[0] == 0xfe {
            assert!(!native, "unexpected auth switch");
            let nul = reply.iter().position(|&b| b == 0).unwrap();
            assert_eq!(&reply[1..nul], b"mysql_native_password");
            let new_salt = reply[nul + 1..nul + 21].to_vec();
            write_raw(&mut s, seq + 1, &scramble(login.password, &new_salt)).await;
            (seq, reply) = read_raw(&mut s).await.expect("auth reply after switch");
            assert_eq!(seq, 4);
        } else {
            assert_eq!(seq, 2);
        }
        if reply[0] == 0xff {
            let e = parse_err(&reply);
            assert_closed(&mut s).await;
            return Err(e);
        }
        let ok = parse_ok(&reply);
        assert_eq!(ok.status & AUTOCOMMIT, AUTOCOMMIT);
        Ok(Client {
            s,
            salt,
            deprecate_eof: login.deprecate_eof,
        })
    }

    async fn send(&mut self, payload: &[u8]) {
        write_raw(&mut self.s, 0, payload).await;
    }

    async fn read(&mut self) -> Vec<u8> {
        read_raw(&mut self.s).await.expect("a packet").1
    }

    async fn command(&mut self, cmd: u8, body: &[u8]) -> Reply {
        let mut p = vec![cmd];
        p.extend_from_slice(body);
        self.send(&p).await;
        self.reply().await
    }

    /// One result (OK, error or result set).
    async fn reply(&mut self) -> Reply {
        let p = self.read().await;
        match p[0] {
            0x00 => Reply::Ok(parse_ok(&p)),
            0xff => Reply::Err(parse_err(&p)),
            _ => {
                let mut pos = 0;
                let n = lenenc(&p, &mut pos).unwrap();
                let mut columns = Vec::new();
                for _ in 0..n {
                    columns.push(parse_column(&self.read().await));
                }
                if !self.deprecate_eof {
                    let eof = self.read().await;
                    assert_eq!((eof[0], eof.len()), (0xfe, 5));
                }
                let mut rows = Vec::new();
                loop {
                    let r = self.read().await;
                    if r[0] == 0xfe && r.len() < 0xff_ffff {
                        let status = if self.deprecate_eof {
                            assert!(r.len() >= 7, "OK packet ends the rows: {r:?}");
                            parse_ok(&r).status
                        } else {
                            assert_eq!(r.len(), 5, "classic EOF ends the rows");
                            u16::from_le_bytes([r[3], r[4]])
                        };
                        return Reply::Rows {
                            columns,
                            rows,
                            status,
                        };
                    }
                    rows.push(r);
                }
            }
        }
    }

    /// All results of a COM_QUERY (following SERVER_MORE_RESULTS_EXISTS).
    async fn query_all(&mut self, sql: &str) -> Vec<Reply> {
        let mut out = vec![self.command(0x03, sql.as_bytes()).await];
        while let Some(last) = out.last() {
            match last {
                Reply::Err(_) => break,
                r if r.status() & MORE_RESULTS == 0 => break,
                _ => {}
            }
            let r = self.reply().await;
            out.push(r);
        }
        out
    }

    async fn query(&mut self, sql: &str) -> Reply {
        let mut v = self.query_all(sql).await;
        assert_eq!(v.len(), 1, "{sql}: {v:?}");
        v.remove(0)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handshake_auth_and_connection_phase_errors() {
    let srv = Server::start("127.0.0.1:0", 64 << 20).await;
    // No default database: fine.
    let mut c = Client::connect(srv.addr, Login::default()).await.unwrap();
    let r = c.query("SELECT 1").await;
    assert_eq!(r.text(), vec![vec![Some("1".to_string())]]);
    // One version string: greeting (checked in connect), VERSION(), @@version.
    let r = c.query("SELECT VERSION(), @@version").await;
    let v = Some(tributary::SERVER_VERSION.to_string());
    assert_eq!(r.text(), vec![vec![v.clone(), v]]);
    // CONNECTION_ID() is the id of the greeting (the first connection).
    let r = c.query("SELECT CONNECTION_ID()").await;
    assert_eq!(r.text(), vec![vec![Some("1".to_string())]]);
    // A password user, natively and after a switch from caching_sha2.
    let alice = Login {
        user: b"alice",
        password: "secret",
        ..Default::default()
    };
    Client::connect(srv.addr, alice).await.unwrap();
    let switched = Login {
        user: b"alice",
        password: "secret",
        plugin: "caching_sha2_password",
        ..Default::default()
    };
    let mut c2 = Client::connect(srv.addr, switched).await.unwrap();
    c2.command(0x0e, b"").await.ok();
    // Wrong password: 1045 with MySQL's message, then the server closes.
    let bad = Login {
        user: b"alice",
        password: "wrong",
        ..Default::default()
    };
    let e = Client::connect(srv.addr, bad).await.err().unwrap();
    assert_eq!((e.code, e.state.as_str()), (1045, "28000"));
    assert_eq!(
        e.message,
        "Access denied for user 'alice'@'127.0.0.1' (using password: YES)"
    );
    let bad = Login {
        user: b"alice",
        password: "wrong",
        plugin: "caching_sha2_password",
        ..Default::default()
    };
    assert_eq!(
        Client::connect(srv.addr, bad).await.err().unwrap().code,
        1045
    );
    // Unknown database at connect: 1049, then closed.
    let nodb = Login {
        db: Some("nope"),
        ..Default::default()
    };
    let e = Client::connect(srv.addr, nodb).await.err().unwrap();
    assert_eq!(e.code, 1049);
    // Malformed response (user name without its NUL): error, then closed.
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    read_raw(&mut s).await.unwrap();
    let mut p = (CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION)
        .to_le_bytes()
        .to_vec();
    p.extend_from_slice(&[0; 28]);
    p.extend_from_slice(b"root");
    write_raw(&mut s, 1, &p).await;
    let (_, reply) = read_raw(&mut s).await.unwrap();
    assert_eq!(parse_err(&reply).code, 1043);
    assert_closed(&mut s).await;
    // Connecting with an existing database works.
    c.query("CREATE DATABASE hs").await.ok();
    let withdb = Login {
        db: Some("hs"),
        ..Default::default()
    };
    let mut c3 = Client::connect(srv.addr, withdb).await.unwrap();
    c3.query("CREATE TABLE t (id INT PRIMARY KEY)").await.ok();
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_flags_follow_the_transaction() {
    let srv = Server::start("127.0.0.1:0", 64 << 20).await;
    for deprecate_eof in [false, true] {
        let mut c = Client::connect(
            srv.addr,
            Login {
                deprecate_eof,
                ..Default::default()
            },
        )
        .await
        .unwrap();
        let db = format!("st{}", u8::from(deprecate_eof));
        let ok = c.query(&format!("CREATE DATABASE {db}")).await;
        assert_eq!(ok.ok().status, AUTOCOMMIT);
        c.query(&format!("USE {db}")).await.ok();
        c.query("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(10))")
            .await
            .ok();
        let ins = c.query("INSERT INTO t VALUES (1, 'a')").await;
        assert_eq!((ins.ok().affected, ins.ok().status), (1, AUTOCOMMIT));
        // Result sets end with the status too (EOF or 0xFE OK).
        let r = c.query("SELECT id FROM t").await;
        assert_eq!(r.status(), AUTOCOMMIT);

        // Explicit transaction: IN_TRANS until ROLLBACK.
        assert_eq!(c.query("BEGIN").await.ok().status, IN_TRANS | AUTOCOMMIT);
        let r = c.query("INSERT INTO t VALUES (2, 'b')").await;
        assert_eq!(r.ok().status, IN_TRANS | AUTOCOMMIT);
        assert_eq!(
            c.query("SELECT id FROM t").await.status(),
            IN_TRANS | AUTOCOMMIT
        );
        assert_eq!(c.query("ROLLBACK").await.ok().status, AUTOCOMMIT);
        assert_eq!(c.query("SELECT id FROM t").await.text().len(), 1);

        // autocommit=0: IN_TRANS after a statement, never AUTOCOMMIT.
        let r = c.query("SET autocommit=0").await;
        assert_eq!(r.ok().status & AUTOCOMMIT, 0);
        let r = c.query("INSERT INTO t VALUES (3, 'c')").await;
        assert_eq!(r.ok().status, IN_TRANS);
        assert_eq!(c.query("ROLLBACK").await.ok().status & IN_TRANS, 0);
        let r = c.query("SELECT id FROM t WHERE id = 3").await;
        assert!(r.text().is_empty(), "rolled-back row is gone");
        c.query("ROLLBACK").await.ok();
        c.query("SET autocommit=1").await.ok();
        assert_eq!(c.command(0x0e, b"").await.ok().status, AUTOCOMMIT);

        // The real warning count.
        let r = c.query("DROP TABLE IF EXISTS no_such_table").await;
        assert_eq!((r.ok().warnings, r.ok().status), (1, AUTOCOMMIT));

        // Multi-statement: MORE_RESULTS on every result but the last.
        let all = c
            .query_all("SELECT 1; BEGIN; INSERT INTO t VALUES (4, 'd'); ROLLBACK")
            .await;
        let st: Vec<u16> = all.iter().map(Reply::status).collect();
        assert_eq!(
            st,
            vec![
                AUTOCOMMIT | MORE_RESULTS,
                IN_TRANS | AUTOCOMMIT | MORE_RESULTS,
                IN_TRANS | AUTOCOMMIT | MORE_RESULTS,
                AUTOCOMMIT
            ]
        );
        // A failing statement ends the results with its error.
        let all = c.query_all("SELECT 1; SELECT nope FROM t; SELECT 2").await;
        assert_eq!(all.len(), 2);
        let e = all[1].err();
        assert_eq!((e.code, e.state.as_str()), (1054, "42S22"));
    }
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands() {
    let srv = Server::start("127.0.0.1:0", 64 << 20).await;
    let mut c = Client::connect(srv.addr, Login::default()).await.unwrap();
    c.query("CREATE DATABASE cm").await.ok();
    // COM_INIT_DB: unknown database is 1049 and the connection stays.
    assert_eq!(c.command(0x02, b"nope").await.err().code, 1049);
    c.command(0x02, b"cm").await.ok();
    c.query("CREATE TABLE t (id BIGINT PRIMARY KEY, name VARCHAR(20), price DECIMAL(6,2), d DATE)")
        .await
        .ok();
    c.query("INSERT INTO t VALUES (1, 'a', 2.5, '2024-02-29')")
        .await
        .ok();
    // Engine errors keep their own codes.
    let e = c.query("SELECT * FROM missing").await;
    assert_eq!((e.err().code, e.err().state.as_str()), (1146, "42S02"));

    // COM_FIELD_LIST: the table's columns, then EOF.
    c.send(b"\x04t\0").await;
    let mut cols = Vec::new();
    loop {
        let p = c.read().await;
        if p[0] == 0xfe && p.len() == 5 {
            break;
        }
        // Field-list definitions carry a default value (NULL) at the end.
        assert_eq!(p.last(), Some(&0xfb));
        cols.push(parse_column(&p[..p.len() - 1]));
    }
    let names: Vec<&str> = cols.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["id", "name", "price", "d"]);
    assert!(cols.iter().all(|c| c.table == "t"));
    assert_eq!((cols[0].ty, cols[0].charset, cols[0].length), (8, 63, 20));
    assert_eq!(cols[1].ty, 253);
    assert_eq!((cols[2].ty, cols[2].decimals, cols[2].length), (246, 2, 8));
    assert_eq!(cols[3].ty, 10);
    assert_eq!(c.command(0x04, b"missing\0").await.err().code, 1146);

    // Column metadata and text values of a SELECT.
    let r = c.query("SELECT id, name, price, d FROM t").await;
    assert_eq!(
        r.text(),
        vec![vec![
            Some("1".into()),
            Some("a".into()),
            Some("2.50".into()),
            Some("2024-02-29".into())
        ]]
    );
    if let Reply::Rows { columns, .. } = &r {
        assert_eq!(columns[0].ty, 8);
        assert_eq!((columns[2].ty, columns[2].decimals), (246, 2));
        assert_eq!((columns[3].ty, columns[3].length), (10, 10));
    }
    let r = c.query("SELECT LAST_INSERT_ID()").await;
    if let Reply::Rows { columns, .. } = &r {
        assert_eq!(columns[0].ty, 8, "LAST_INSERT_ID() is an integer");
    }

    // COM_STATISTICS: a bare string.
    c.send(&[0x09]).await;
    let stats = String::from_utf8(c.read().await).unwrap();
    assert!(stats.starts_with("Uptime: "), "{stats}");
    assert!(stats.contains("  Threads: 1  Questions: "), "{stats}");
    assert!(stats.contains("Queries per second avg: "), "{stats}");

    // A legacy command number (COM_CREATE_DB): 1047, connection kept.
    let e = c.command(0x05, b"").await;
    assert_eq!(
        (e.err().code, e.err().message.as_str()),
        (1047, "Unknown command")
    );
    // Not a command at all (garbage): 1047, then the connection is closed.
    let mut g = Client::connect(srv.addr, Login::default()).await.unwrap();
    assert_eq!(g.command(0xee, b"").await.err().code, 1047);
    assert_closed(&mut g.s).await;
    // Invalid UTF-8 outside a string literal: error, connection kept.
    // Inside one it is a binary string (what drivers send for bytes).
    let e = c.command(0x03, b"SELECT 1\xff").await;
    assert_eq!(e.err().code, 1300);
    let r = c
        .command(0x03, b"SELECT HEX('\xff\xfe'), HEX(_binary'a\\0\xff')")
        .await;
    assert_eq!(
        r.text(),
        vec![vec![Some("FFFE".to_string()), Some("6100FF".to_string())]]
    );
    assert_eq!(c.command(0x02, b"\xff").await.err().code, 1300);
    assert_eq!(c.query("SELECT 2").await.text()[0][0].as_deref(), Some("2"));

    // Prepared statements: unknown ids.
    let exec = |id: u32| {
        let mut b = id.to_le_bytes().to_vec();
        b.extend_from_slice(&[0, 1, 0, 0, 0]);
        b
    };
    assert_eq!(c.command(0x17, &exec(99)).await.err().code, 1243);
    assert_eq!(c.command(0x1a, &99u32.to_le_bytes()).await.err().code, 1243);
    // SEND_LONG_DATA has no reply; its error shows up on the next execute.
    let mut ld = vec![0x18];
    ld.extend_from_slice(&98u32.to_le_bytes());
    ld.extend_from_slice(&[0, 0, b'x']);
    c.send(&ld).await;
    c.command(0x0e, b"").await.ok();
    // Prepare and execute for real.
    c.send(b"\x16SELECT id, name FROM t WHERE id = ?").await;
    let p = c.read().await;
    assert_eq!(p[0], 0);
    let id = u32::from_le_bytes([p[1], p[2], p[3], p[4]]);
    assert_eq!(u16::from_le_bytes([p[7], p[8]]), 1, "one parameter");
    parse_column(&c.read().await);
    assert_eq!(c.read().await[0], 0xfe);
    // The query's result columns follow, as MySQL sends them.
    assert_eq!(u16::from_le_bytes([p[5], p[6]]), 2, "two result columns");
    let names: Vec<String> = [c.read().await, c.read().await]
        .iter()
        .map(|d| parse_column(d).name)
        .collect();
    assert_eq!(names, ["id", "name"]);
    assert_eq!(c.read().await[0], 0xfe);
    let e = c.command(0x17, &exec(id)).await;
    assert_eq!(e.err().code, 1243, "pending SEND_LONG_DATA error");
    let mut b = exec(id);
    b.extend_from_slice(&[0, 1, 8, 0]);
    b.extend_from_slice(&1i64.to_le_bytes());
    let r = c.command(0x17, &b).await;
    let Reply::Rows { rows, .. } = &r else {
        panic!("{r:?}")
    };
    assert_eq!(rows.len(), 1);
    // Binary row: header, bitmap, LONGLONG 1, lenenc "a".
    assert_eq!(rows[0], [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, b'a']);
    // More than 65,535 placeholders: 1390.
    let many = format!("SELECT {}1", "?,".repeat(65_536));
    assert_eq!(c.command(0x16, many.as_bytes()).await.err().code, 1390);

    // COM_SET_OPTION: EOF, and multi-statements off.
    c.send(&[0x1b, 1, 0]).await;
    assert_eq!(c.read().await[0], 0xfe);
    assert_eq!(
        c.command(0x03, b"SELECT 1; SELECT 2").await.err().code,
        1064
    );
    c.send(&[0x1b, 0, 0]).await;
    assert_eq!(c.read().await[0], 0xfe);

    // COM_RESET_CONNECTION: rolls back, keeps the database, drops
    // statements.
    c.query("BEGIN").await.ok();
    c.query("INSERT INTO t VALUES (5, 'e', 1, '2020-01-01')")
        .await
        .ok();
    let r = c.command(0x1f, b"").await;
    assert_eq!(r.ok().status, AUTOCOMMIT);
    assert_eq!(c.query("SELECT id FROM t").await.text().len(), 1);
    assert_eq!(c.command(0x17, &b).await.err().code, 1243);

    // COM_CHANGE_USER to alice (scrambled with the greeting's salt).
    c.query("BEGIN").await.ok();
    c.query("INSERT INTO t VALUES (6, 'f', 1, '2020-01-01')")
        .await
        .ok();
    let mut body = b"alice\0".to_vec();
    let auth = scramble("secret", &c.salt);
    body.push(auth.len() as u8);
    body.extend_from_slice(&auth);
    body.extend_from_slice(b"cm\0");
    body.extend_from_slice(&45u16.to_le_bytes());
    body.extend_from_slice(b"mysql_native_password\0");
    assert_eq!(c.command(0x11, &body).await.ok().status, AUTOCOMMIT);
    assert_eq!(c.query("SELECT id FROM t").await.text().len(), 1);
    // A wrong password on COM_CHANGE_USER: 1045, then closed.
    let mut body = b"alice\0".to_vec();
    body.push(20);
    body.extend_from_slice(&[1; 20]);
    body.push(0);
    let e = c.command(0x11, &body).await;
    assert_eq!(e.err().code, 1045);
    assert_closed(&mut c.s).await;

    // COM_QUIT closes without a reply.
    let mut q = Client::connect(srv.addr, Login::default()).await.unwrap();
    q.send(&[0x01]).await;
    assert_closed(&mut q.s).await;

    // An idle client at shutdown: its connection thread ends and is
    // joined before the server returns (checked by `stop`).
    let mut idle = Client::connect(srv.addr, Login::default()).await.unwrap();
    assert_eq!(idle.query("SELECT 1").await.text().len(), 1);
    assert!(srv.threads.load(std::sync::atomic::Ordering::SeqCst) >= 1);
    srv.stop().await;
    assert_closed(&mut idle.s).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_packet_is_refused_and_closes() {
    let srv = Server::start("127.0.0.1:0", 1024).await;
    let mut c = Client::connect(srv.addr, Login::default()).await.unwrap();
    // Long data is bounded by max_allowed_packet per statement: the
    // excess is refused at execute (1153) and the connection is kept.
    c.send(b"\x16SELECT ?").await;
    let p = c.read().await;
    let id = u32::from_le_bytes([p[1], p[2], p[3], p[4]]);
    parse_column(&c.read().await);
    assert_eq!(c.read().await[0], 0xfe);
    // Its one result column.
    assert_eq!(u16::from_le_bytes([p[5], p[6]]), 1);
    parse_column(&c.read().await);
    assert_eq!(c.read().await[0], 0xfe);
    for _ in 0..2 {
        let mut ld = vec![0x18];
        ld.extend_from_slice(&id.to_le_bytes());
        ld.extend_from_slice(&[0, 0]);
        ld.extend_from_slice(&[b'x'; 600]);
        c.send(&ld).await;
    }
    let mut exec = id.to_le_bytes().to_vec();
    exec.extend_from_slice(&[0, 1, 0, 0, 0, 0, 1, 253, 0]);
    assert_eq!(c.command(0x17, &exec).await.err().code, 1153);
    // Within the bound, long data is the parameter's value.
    let mut ld = vec![0x18];
    ld.extend_from_slice(&id.to_le_bytes());
    ld.extend_from_slice(&[0, 0]);
    ld.extend_from_slice(b"long");
    c.send(&ld).await;
    let r = c.command(0x17, &exec).await;
    let Reply::Rows { rows, .. } = &r else {
        panic!("{r:?}")
    };
    assert_eq!(rows[0], [0, 0, 4, b'l', b'o', b'n', b'g']);
    let big = format!("\x03SELECT '{}'", "x".repeat(2000));
    c.send(big.as_bytes()).await;
    let (seq, p) = read_raw(&mut c.s).await.unwrap();
    assert_eq!(seq, 1);
    assert_eq!(parse_err(&p).code, 1153);
    assert_closed(&mut c.s).await;
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_accepts_host_names() {
    let srv = Server::start("localhost:0", 64 << 20).await;
    assert!(srv.addr.ip().is_loopback(), "{}", srv.addr);
    let mut c = Client::connect(srv.addr, Login::default()).await.unwrap();
    c.command(0x0e, b"").await.ok();
    srv.stop().await;
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let opts = ServerOptions {
        listen: "no-such-host.invalid:1".into(),
        ..Default::default()
    };
    assert!(MysqlServer::bind(db, opts).await.is_err());
}

impl Client {
    /// COM_STMT_PREPARE: the statement id, or the error code.
    async fn prepare(&mut self, sql: &str) -> Result<u32, u16> {
        let mut p = vec![0x16];
        p.extend_from_slice(sql.as_bytes());
        self.send(&p).await;
        let r = self.read().await;
        if r[0] == 0xff {
            return Err(parse_err(&r).code);
        }
        let id = u32::from_le_bytes([r[1], r[2], r[3], r[4]]);
        // Parameter definitions, then the result columns' (each list
        // followed by an EOF unless DEPRECATE_EOF).
        for n in [
            u16::from_le_bytes([r[7], r[8]]),
            u16::from_le_bytes([r[5], r[6]]),
        ] {
            if n > 0 {
                for _ in 0..n {
                    self.read().await;
                }
                if !self.deprecate_eof {
                    assert_eq!(self.read().await[0], 0xfe);
                }
            }
        }
        Ok(id)
    }

    /// COM_STMT_SEND_LONG_DATA (no reply) of `n` bytes 'x' to param 0.
    async fn long_data(&mut self, id: u32, n: usize) {
        let mut ld = vec![0x18];
        ld.extend_from_slice(&id.to_le_bytes());
        ld.extend_from_slice(&[0, 0]);
        ld.extend(std::iter::repeat_n(b'x', n));
        self.send(&ld).await;
    }

    /// COM_STMT_EXECUTE of a one-parameter statement (param 0 a string).
    async fn execute1(&mut self, id: u32) -> Reply {
        let mut exec = id.to_le_bytes().to_vec();
        exec.extend_from_slice(&[0, 1, 0, 0, 0, 0, 1, 253, 0]);
        self.command(0x17, &exec).await
    }
}

/// Waits until the server-wide counters are back to 0.
async fn assert_released(limits: &Limits) {
    let t = Instant::now();
    while limits.prepared_statements() > 0 || limits.statement_bytes() > 0 {
        assert!(
            t.elapsed() < DEADLINE,
            "not released: {} statements, {} bytes",
            limits.prepared_statements(),
            limits.statement_bytes()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prepared_statement_and_long_data_budgets() {
    let srv = Server::start_with(ServerOptions {
        listen: "127.0.0.1:0".into(),
        max_allowed_packet: 3000,
        max_prepared_stmt_count: 5,
        max_prepared_stmt_per_connection: 3,
        max_stmt_bytes_per_connection: 4000,
        max_stmt_bytes_total: 6000,
        ..Default::default()
    })
    .await;
    let l = srv.limits.clone();
    let mut a = Client::connect(srv.addr, Login::default()).await.unwrap();
    let mut b = Client::connect(srv.addr, Login::default()).await.unwrap();
    const SQL: &str = "SELECT ?"; // 8 bytes of text per statement
                                  // Per connection: the fourth statement is 1461.
    let mut ids_a = Vec::new();
    for _ in 0..3 {
        ids_a.push(a.prepare(SQL).await.unwrap());
    }
    assert_eq!(a.prepare(SQL).await, Err(1461));
    // Server-wide: B gets two, then 1461 (5 in all).
    let b1 = b.prepare(SQL).await.unwrap();
    let b2 = b.prepare(SQL).await.unwrap();
    a.send(b"\x16SELECT 1").await;
    let e = parse_err(&a.read().await);
    assert_eq!(e.code, 1461);
    assert!(
        e.message.contains("max_prepared_stmt_per_connection"),
        "{e:?}"
    );
    b.send(b"\x16SELECT 1").await;
    let e = parse_err(&b.read().await);
    assert_eq!((e.code, e.state.as_str()), (1461, "42000"));
    assert!(e.message.contains("max_prepared_stmt_count"), "{e:?}");
    assert_eq!((l.prepared_statements(), l.statement_bytes()), (5, 40));
    // Closing one frees a slot server-wide.
    let mut close = vec![0x19];
    close.extend_from_slice(&ids_a[2].to_le_bytes());
    a.send(&close).await;
    a.command(0x0e, b"").await.ok();
    assert_eq!(l.prepared_statements(), 4);
    let b3 = b.prepare(SQL).await.unwrap();
    assert_eq!(l.prepared_statements(), 5);

    // Long data: per statement max_allowed_packet (3000), per connection
    // 4000 bytes, server-wide 6000 bytes (text included). Over any: 1153
    // at the next execute, the data dropped, the connection kept.
    a.long_data(ids_a[0], 2500).await;
    a.long_data(ids_a[1], 1500).await; // 8*2 + 2500 + 1500 > 4000
    a.command(0x0e, b"").await.ok();
    assert_eq!(l.statement_bytes(), 40 + 2500);
    let e = a.execute1(ids_a[1]).await;
    assert_eq!(e.err().code, 1153);
    assert!(
        e.err().message.contains("max_stmt_bytes_per_connection"),
        "{e:?}"
    );
    b.long_data(b1, 2900).await;
    b.long_data(b2, 1000).await; // 40 + 2500 + 2900 + 1000 > 6000
    b.command(0x0e, b"").await.ok();
    assert_eq!(l.statement_bytes(), 40 + 2500 + 2900);
    let e = b.execute1(b2).await;
    assert_eq!(e.err().code, 1153);
    assert!(e.err().message.contains("max_stmt_bytes_total"), "{e:?}");
    // Per statement: over max_allowed_packet.
    b.long_data(b3, 200).await;
    b.long_data(b3, 2900).await;
    assert_eq!(b.execute1(b3).await.err().code, 1153);
    // Executing consumes (and gives back) the long data.
    let r = a.execute1(ids_a[0]).await;
    let Reply::Rows { rows, .. } = &r else {
        panic!("{r:?}")
    };
    // Header, NULL bitmap, length (0xfc + 2 bytes), the value.
    assert_eq!(rows[0].len(), 1 + 1 + 3 + 2500);
    assert_eq!(l.statement_bytes(), 40 + 2900);
    // COM_STMT_RESET gives it back too.
    let reply = b.command(0x1a, &b1.to_le_bytes()).await;
    reply.ok();
    assert_eq!(l.statement_bytes(), 40);
    // Statement text counts: a text that does not fit in the connection's
    // budget (beside 2900 bytes of long data) is 1041.
    let mut close = vec![0x19];
    close.extend_from_slice(&b3.to_le_bytes());
    b.send(&close).await;
    a.long_data(ids_a[0], 2900).await;
    assert_eq!(
        a.prepare(&format!("SELECT ? /* {} */", "y".repeat(1100)))
            .await,
        Err(1041)
    );
    a.command(0x1a, &ids_a[0].to_le_bytes()).await.ok();
    assert_eq!(l.statement_bytes(), 32);
    // Still usable after every refusal.
    assert_eq!(a.query("SELECT 1").await.text().len(), 1);
    assert_eq!(b.query("SELECT 1").await.text().len(), 1);

    // Everything is given back when connections end: B by
    // COM_RESET_CONNECTION, then A (with long data buffered) by a reset
    // socket, B by COM_QUIT.
    b.long_data(b1, 100).await;
    b.command(0x1f, b"").await.ok();
    a.long_data(ids_a[0], 1000).await;
    a.command(0x0e, b"").await.ok();
    assert_eq!(l.statement_bytes(), 16 + 1000);
    drop(a);
    b.send(&[0x01]).await;
    assert_closed(&mut b.s).await;
    assert_released(&l).await;
    // A new connection gets the whole budget again.
    let mut c = Client::connect(srv.addr, Login::default()).await.unwrap();
    for _ in 0..3 {
        c.prepare(SQL).await.unwrap();
    }
    drop(c);
    assert_released(&l).await;
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn placeholder_limit_is_exact() {
    let srv = Server::start("127.0.0.1:0", 64 << 20).await;
    let mut c = Client::connect(srv.addr, Login::default()).await.unwrap();
    let ok = format!("SELECT {}1", "?,".repeat(65_535));
    assert!(c.prepare(&ok).await.is_ok());
    let many = format!("SELECT {}1", "?,".repeat(65_536));
    assert_eq!(c.prepare(&many).await, Err(1390));
    assert_eq!(srv.limits.prepared_statements(), 1);
    drop(c);
    assert_released(&srv.limits).await;
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_timeout_frees_slots_and_bad_handshakes_are_answered() {
    let srv = Server::start_with(ServerOptions {
        listen: "127.0.0.1:0".into(),
        max_connections: 2,
        connect_timeout: Duration::from_secs(1),
        ..Default::default()
    })
    .await;
    // Two silent pre-auth sockets hold both slots: a third is 1040 ...
    let mut idle = Vec::new();
    for _ in 0..2 {
        let mut s = TcpStream::connect(srv.addr).await.unwrap();
        read_raw(&mut s).await.unwrap();
        idle.push(s);
    }
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    let (_, p) = read_raw(&mut s).await.unwrap();
    assert_eq!(parse_err(&p).code, 1040);
    // ... until connect_timeout: they get 1159 and are closed, which frees
    // the slots.
    let t = Instant::now();
    for s in &mut idle {
        let (_, p) = read_raw(s).await.unwrap();
        let e = parse_err(&p);
        assert_eq!((e.code, e.state.as_str()), (1159, "08S01"));
        assert_closed(s).await;
    }
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    let mut c = Client::connect(srv.addr, Login::default()).await.unwrap();
    // An authenticated idle client is not timed out.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    c.command(0x0e, b"").await.ok();
    drop(c);
    tokio::time::sleep(Duration::from_millis(100)).await;

    // Malformed user names: 1045, then closed.
    for user in [&b"ro\x01ot"[..], b"\xff\xfe", &[b'u'; 200]] {
        let login = Login {
            user,
            ..Default::default()
        };
        let e = Client::connect(srv.addr, login).await.err().unwrap();
        assert_eq!((e.code, e.state.as_str()), (1045, "28000"), "{user:?}");
    }
    // A NUL inside the name ends it: the rest is read as the auth data,
    // which here does not parse (1043; a parseable rest would be 1045).
    let login = Login {
        user: b"ro\0ot",
        ..Default::default()
    };
    let e = Client::connect(srv.addr, login).await.err().unwrap();
    assert_eq!(e.code, 1043);
    // A connection-phase packet larger than any handshake: 1153, closed.
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    read_raw(&mut s).await.unwrap();
    s.write_all(&[0xff, 0xff, 0x0f, 1]).await.unwrap();
    let (_, p) = read_raw(&mut s).await.unwrap();
    assert_eq!(parse_err(&p).code, 1153);
    assert_closed(&mut s).await;
    // Half a handshake: closed at connect_timeout with 1159.
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    read_raw(&mut s).await.unwrap();
    s.write_all(&[50, 0, 0, 1, 0, 0]).await.unwrap();
    let (_, p) = read_raw(&mut s).await.unwrap();
    assert_eq!(parse_err(&p).code, 1159);
    assert_closed(&mut s).await;
    srv.stop().await;
}

/// Issue 38 item 5 through the real server (a connection thread's stack):
/// 1,000-deep expressions answer, 100,000-deep ones and a 100,000-term
/// UNION chain (issue 39: ~590 terms killed the server) get 1436 and the
/// connection and the server go on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_statements_answer_or_get_1436() {
    let srv = Server::start("127.0.0.1:0", 64 << 20).await;
    let mut c = Client::connect(srv.addr, Login::default()).await.unwrap();
    let deep = |open: &str, mid: &str, close: &str, n: usize| {
        format!("SELECT {}{mid}{}", open.repeat(n), close.repeat(n))
    };
    for (sql, want) in [
        (deep("(", "1", ")", 1_000), "1"),
        (deep("abs(", "-7", ")", 1_000), "7"),
        (deep("CASE WHEN 1 THEN ", "5", " END", 1_000), "5"),
        (deep("1 = 2 OR (", "1 = 1", ")", 1_000), "1"),
        (
            format!(
                "SELECT COUNT(*) FROM ({}) x",
                vec!["SELECT 1"; 600].join(" UNION ALL ")
            ),
            "600",
        ),
    ] {
        let r = c.query(&sql).await;
        assert_eq!(
            r.text(),
            vec![vec![Some(want.to_string())]],
            "{}",
            &sql[..40]
        );
    }
    for sql in [
        deep("(", "1", ")", 100_000),
        deep("abs(", "-7", ")", 100_000),
        deep("CASE WHEN 1 THEN ", "5", " END", 100_000),
        deep("NOT ", "1", "", 100_000),
        vec!["SELECT 1"; 100_000].join(" UNION ALL "),
    ] {
        let r = c.query(&sql).await;
        assert_eq!(r.err().code, 1436, "{}", &sql[..40]);
        let r = c.query("SELECT 1").await;
        assert_eq!(r.text(), vec![vec![Some("1".to_string())]]);
    }
    let mut c2 = Client::connect(srv.addr, Login::default()).await.unwrap();
    assert_eq!(
        c2.query("SELECT 2").await.text(),
        vec![vec![Some("2".to_string())]]
    );
    srv.stop().await;
}
