//! Bounded property/fuzz tests of the MySQL protocol layer, run in CI.
//!
//! * `decoders_never_panic`: random and mutated-valid inputs fed to every
//!   decoder of client bytes (packet framing, command parser, handshake and
//!   COM_CHANGE_USER parsers, parameter decoder, placeholder counter) for a
//!   bounded number of cases and time; each must return (Ok or an error),
//!   never panic, and never buffer more than the packet limit.
//! * `garbage_over_tcp_is_answered_or_closed`: a real in-process server on
//!   loopback gets idle pre-auth sockets, garbage and mutated handshakes
//!   and, after authentication, garbage and mutated commands. Every
//!   connection is answered or closed within a deadline, a real client
//!   connects and runs `SELECT 1` within 1 s while the junk is connected,
//!   and afterwards the prepared-statement budgets are back to 0.
//!
//! The seed is printed and can be fixed with `TRIBUTARY_FUZZ_SEED=<n>`;
//! `TRIBUTARY_FUZZ_CASES=<n>` runs more decoder cases.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::collections::HashMap;
use std::net::SocketAddr;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;
use tributary::testing::count_placeholders;
use tributary::testing::{decode_params, Command};
use tributary::testing::{parse_change_user, parse_response};
use tributary::testing::{Cursor, PacketReader};
use tributary::Database;
use tributary::{MysqlServer, ServerOptions};

/// xorshift64*: small, deterministic, good enough for fuzzing.
struct Rng(u64);

impl Rng {
    fn seeded() -> (Rng, u64) {
        let seed = std::env::var("TRIBUTARY_FUZZ_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
            });
        println!("fuzz seed: {seed} (set TRIBUTARY_FUZZ_SEED to replay)");
        (Rng(seed | 1), seed)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn byte(&mut self) -> u8 {
        self.next() as u8
    }

    /// Up to `max - 1` random bytes.
    fn some_bytes(&mut self, max: usize) -> Vec<u8> {
        let n = self.below(max);
        self.bytes(n)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.byte()).collect()
    }

    /// A byte that is interesting to a length-encoded field or a type.
    fn edgy(&mut self) -> u8 {
        const EDGE: [u8; 12] = [
            0, 1, 0x7f, 0x80, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff, 253, 12,
        ];
        EDGE[self.below(EDGE.len())]
    }
}

const PROTOCOL_41: u32 = 1 << 9;
const SECURE_CONNECTION: u32 = 1 << 15;
const PLUGIN_AUTH: u32 = 1 << 19;
const CONNECT_WITH_DB: u32 = 1 << 3;
const CONNECT_ATTRS: u32 = 1 << 20;
const LENENC_AUTH: u32 = 1 << 21;

fn handshake_response(caps: u32, user: &[u8], auth: &[u8], db: Option<&[u8]>) -> Vec<u8> {
    let mut p = caps.to_le_bytes().to_vec();
    p.extend_from_slice(&(16u32 << 20).to_le_bytes());
    p.push(45);
    p.extend_from_slice(&[0; 23]);
    p.extend_from_slice(user);
    p.push(0);
    // One byte: the same for a length-encoded length (< 251).
    p.push(auth.len() as u8);
    p.extend_from_slice(auth);
    if let Some(db) = db {
        p.extend_from_slice(db);
        p.push(0);
    }
    p.extend_from_slice(b"mysql_native_password\0");
    if caps & CONNECT_ATTRS != 0 {
        p.extend_from_slice(&[10, 3, b'k', b'e', b'y', 5, b'v', b'a', b'l', b'u', b'e']);
    }
    p
}

/// Valid inputs to mutate: command packets, handshake responses, change
/// user bodies.
fn seeds() -> Vec<Vec<u8>> {
    let mut exec = vec![0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0b10, 1];
    for (t, f) in [
        (8u8, 0u8),
        (6, 0),
        (253, 0),
        (10, 0),
        (12, 0),
        (11, 0),
        (1, 0x80),
    ] {
        exec.extend_from_slice(&[t, f]);
    }
    exec.extend_from_slice(&(-5i64).to_le_bytes());
    exec.extend_from_slice(&[
        2, b'h', b'i', 4, 0xe8, 0x07, 2, 29, 7, 0xe8, 0x07, 2, 29, 1, 2, 3,
    ]);
    exec.extend_from_slice(&[8, 0, 1, 0, 0, 0, 1, 2, 3, 200]);
    let caps = PROTOCOL_41 | SECURE_CONNECTION | PLUGIN_AUTH;
    let mut change_user = b"\x11bob\0\x14".to_vec();
    change_user.extend_from_slice(&[3; 20]);
    change_user.extend_from_slice(b"db1\0\x2d\0mysql_native_password\0");
    vec![
        b"\x03SELECT 1".to_vec(),
        b"\x03SELECT ?, 'a?', `b?` /* ? */ -- ?\n".to_vec(),
        b"\x02test".to_vec(),
        b"\x04t\0%".to_vec(),
        vec![0x1b, 1, 0],
        vec![0x19, 7, 0, 0, 0],
        vec![0x1a, 7, 0, 0, 0],
        vec![0x18, 7, 0, 0, 0, 1, 0, b'x', b'y'],
        b"\x16SELECT ? + ?".to_vec(),
        exec,
        vec![0x0e],
        vec![0x09],
        vec![0x1f],
        change_user,
        handshake_response(caps, b"root", &[], None),
        handshake_response(caps | CONNECT_WITH_DB, b"alice", &[7; 20], Some(b"db")),
        handshake_response(
            caps | LENENC_AUTH | CONNECT_ATTRS | CONNECT_WITH_DB,
            b"u",
            &[1; 20],
            Some(b"d"),
        ),
    ]
}

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    for _ in 0..=rng.below(4) {
        match rng.below(7) {
            0 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] ^= 1 << rng.below(8);
            }
            1 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] = rng.edgy();
            }
            2 => {
                let n = rng.below(v.len() + 1);
                v.truncate(n);
            }
            3 => {
                let i = rng.below(v.len() + 1);
                let extra = rng.some_bytes(8);
                v.splice(i..i, extra);
            }
            4 if !v.is_empty() => {
                let i = rng.below(v.len());
                let j = (i + rng.below(8)).min(v.len());
                v.drain(i..j);
            }
            5 if v.len() > 1 => {
                // Keep the command byte, replace it with another command.
                v[0] = rng.below(0x20) as u8;
            }
            _ => {
                let n = rng.below(6);
                v.extend(rng.bytes(n));
            }
        }
    }
    v
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Every decoder on one input; any panic fails the test with the input.
fn decode_all(rng: &mut Rng, input: &[u8]) {
    let n = match rng.below(4) {
        0 => 0,
        1 => rng.below(8),
        2 => rng.below(300),
        _ => 65_535,
    };
    let caps_choice = rng.next() as u32;
    let mut long = HashMap::new();
    if rng.below(3) == 0 {
        let k = rng.below(4) as u16;
        long.insert(k, rng.some_bytes(16));
    }
    let mut bound = if n < 300 && rng.below(2) == 0 {
        (0..n).map(|_| (rng.edgy(), rng.edgy())).collect()
    } else {
        Vec::new()
    };
    let ops: Vec<u8> = rng.bytes(16);
    let r = catch_unwind(AssertUnwindSafe(|| {
        if let Command::StmtExecute { params, .. } = Command::parse(input) {
            if let Ok(p) = decode_params(params, n, &mut bound, &long) {
                assert_eq!(p.len(), n);
            }
        }
        let _ = decode_params(input, n, &mut bound, &long);
        let _ = parse_response(input);
        let _ = parse_change_user(input, caps_choice);
        if !input.is_empty() {
            let _ = parse_change_user(&input[1..], caps_choice);
        }
        let _ = count_placeholders(&String::from_utf8_lossy(input));
        // Random primitive reads never pass the end of the data.
        let mut c = Cursor::new(input);
        for op in ops {
            let before = c.remaining();
            let ok = match op % 9 {
                0 => c.u8().is_ok(),
                1 => c.u16().is_ok(),
                2 => c.u32().is_ok(),
                3 => c.u64().is_ok(),
                4 => c.lenenc_int().is_ok(),
                5 => c.lenenc_bytes().is_ok(),
                6 => c.nul_bytes().is_ok(),
                7 => {
                    c.nul_or_eof_bytes();
                    true
                }
                _ => c.take(usize::from(op)).is_ok(),
            };
            assert!(c.remaining() <= before);
            if !ok {
                assert!(before < 9 || op % 9 >= 4, "fixed-width read failed early");
            }
        }
    }));
    if let Err(e) = r {
        panic!("decoder panicked on input {} (n={n}): {e:?}", hex(input));
    }
}

/// Packet framing over an in-memory stream of `bytes`: every read ends
/// (the stream is finite), never with more than `max` bytes.
async fn frame_all(bytes: &[u8], max: usize) {
    let mut r = PacketReader::new(bytes, max);
    r.set_body_timeout(Some(Duration::from_secs(1)));
    for _ in 0..bytes.len() + 1 {
        match r.read().await {
            Ok((_, p)) => assert!(p.len() <= max),
            Err(_) => return,
        }
    }
    panic!("framing did not end on {}", hex(bytes));
}

#[test]
fn decoders_never_panic() {
    let (mut rng, seed) = Rng::seeded();
    let cases: usize = std::env::var("TRIBUTARY_FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let budget = Duration::from_secs(20);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let seeds = seeds();
    // The seeds themselves decode.
    let (commands, handshakes) = seeds.split_at(seeds.len() - 3);
    for s in commands {
        let c = Command::parse(s);
        assert!(
            !matches!(c, Command::Unknown(_) | Command::Malformed(_)),
            "{}",
            hex(s)
        );
        if let Command::StmtExecute { params, .. } = c {
            let p = decode_params(params, 7, &mut Vec::new(), &HashMap::new());
            assert_eq!(p.map(|p| p.len()), Ok(7));
        }
    }
    for s in handshakes {
        assert!(parse_response(s).is_ok(), "{}", hex(s));
    }
    let started = Instant::now();
    let mut done = 0;
    while done < cases && started.elapsed() < budget {
        let input = match rng.below(3) {
            0 => {
                let n = rng.below(80);
                rng.bytes(n)
            }
            _ => {
                let s = &seeds[rng.below(seeds.len())];
                mutate(&mut rng, s)
            }
        };
        decode_all(&mut rng, &input);
        if done % 8 == 0 {
            // Framing: the input as a stream, and the input framed with a
            // (possibly lying) header.
            let max = [16, 64, 1024, 1 << 20][rng.below(4)];
            let mut framed = Vec::new();
            let declared = match rng.below(3) {
                0 => input.len(),
                1 => rng.below(1 << 24),
                _ => 0xff_ffff,
            };
            framed.extend_from_slice(&(declared as u32).to_le_bytes()[..3]);
            framed.push(rng.byte());
            framed.extend_from_slice(&input);
            rt.block_on(async {
                frame_all(&input, max).await;
                frame_all(&framed, max).await;
            });
        }
        done += 1;
    }
    println!(
        "seed {seed}: {done} cases in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(done >= 1_000, "too few cases ran: {done}");
}

// ---------------------------------------------------------------------------
// End to end over TCP.

const DEADLINE: Duration = Duration::from_secs(10);

async fn read_packet(s: &mut TcpStream, within: Duration) -> Result<(u8, Vec<u8>), &'static str> {
    let fut = async {
        let mut h = [0u8; 4];
        s.read_exact(&mut h).await.map_err(|_| "closed")?;
        let len = usize::from(h[0]) | usize::from(h[1]) << 8 | usize::from(h[2]) << 16;
        let mut p = vec![0u8; len];
        s.read_exact(&mut p).await.map_err(|_| "closed")?;
        Ok((h[3], p))
    };
    tokio::time::timeout(within, fut)
        .await
        .unwrap_or(Err("timeout"))
}

async fn write_packet(s: &mut TcpStream, seq: u8, payload: &[u8]) -> std::io::Result<()> {
    let mut v = (payload.len() as u32).to_le_bytes()[..3].to_vec();
    v.push(seq);
    v.extend_from_slice(payload);
    s.write_all(&v).await
}

/// Log in as passwordless root; the authenticated socket.
async fn login(addr: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let (_, g) = read_packet(&mut s, DEADLINE).await.expect("greeting");
    assert_eq!(g[0], 10);
    let caps = PROTOCOL_41 | SECURE_CONNECTION | PLUGIN_AUTH;
    write_packet(&mut s, 1, &handshake_response(caps, b"root", &[], None))
        .await
        .unwrap();
    let (_, ok) = read_packet(&mut s, DEADLINE).await.expect("auth reply");
    assert_eq!(ok[0], 0, "login failed: {ok:?}");
    s
}

/// Runs `SELECT '<marker>'` and reads until its row arrives (skipping
/// whatever earlier garbage produced) and the result ends. `false` if the
/// server closed the connection instead.
async fn in_sync(s: &mut TcpStream, marker: &str) -> bool {
    let q = format!("\x03SELECT '{marker}'");
    if write_packet(s, 0, q.as_bytes()).await.is_err() {
        return false;
    }
    let mut seen = false;
    loop {
        match read_packet(s, DEADLINE).await {
            Ok((_, p)) => {
                // The text row: one length-encoded string, the marker.
                if p.len() == marker.len() + 1
                    && usize::from(p[0]) == marker.len()
                    && &p[1..] == marker.as_bytes()
                {
                    seen = true;
                } else if seen && p[0] == 0xfe && p.len() < 9 {
                    return true;
                }
            }
            Err("timeout") => panic!("no answer to the marker query {marker}"),
            Err(_) => return false,
        }
    }
}

/// What became of a junk connection.
#[derive(Debug, PartialEq)]
enum Fate {
    /// An error packet with this code, then closed.
    Error(u16),
    /// Closed without a (final) error packet.
    Closed,
    /// An OK packet: a mutated handshake that still logs in (root has no
    /// password), left open.
    LoggedIn,
}

/// Read until the server closes (or logs the client in); the connection
/// must end within `within`.
async fn wait_end(s: &mut TcpStream, within: Duration) -> Fate {
    let start = Instant::now();
    let mut last = Fate::Closed;
    loop {
        let left = within.saturating_sub(start.elapsed());
        match read_packet(s, left).await {
            Ok((_, p)) if p.first() == Some(&0xff) => {
                last = Fate::Error(u16::from_le_bytes([p[1], p[2]]));
            }
            Ok((_, p)) if p.first() == Some(&0) => return Fate::LoggedIn,
            Ok(_) => {}
            Err("timeout") => panic!("connection still open after {within:?} ({last:?})"),
            Err(_) => return last,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_over_tcp_is_answered_or_closed() {
    let (mut rng, _) = Rng::seeded();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let db = tokio::task::spawn_blocking(move || Database::open(path))
        .await
        .unwrap()
        .unwrap();
    let connect_timeout = Duration::from_secs(2);
    let opts = ServerOptions {
        listen: "127.0.0.1:0".into(),
        max_allowed_packet: 1 << 20,
        connect_timeout,
        net_read_timeout: Duration::from_secs(1),
        ..Default::default()
    };
    let server = MysqlServer::bind(db, opts).await.unwrap();
    let addr = server.local_addr().unwrap();
    let limits = server.limits();
    let token = CancellationToken::new();
    let task = tokio::spawn(server.run(token.clone()));
    // Bound on any junk connection's life: the connect timeout plus slack.
    let end_within = connect_timeout + Duration::from_secs(4);

    // 50 idle pre-auth sockets: greeting read, then silence.
    let mut idle = Vec::new();
    for _ in 0..50 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        read_packet(&mut s, DEADLINE).await.expect("greeting");
        idle.push(s);
    }
    // 50 garbage senders, each a different kind of junk after the greeting.
    let seeds = seeds();
    let mut garbage = Vec::new();
    for i in 0..50 {
        let mut junk = match i % 6 {
            // Random bytes (random headers, lengths and bodies).
            0 => {
                let n = 1 + rng.below(200);
                rng.bytes(n)
            }
            // A mutated handshake response, well framed.
            1 | 2 => {
                let s = &seeds[seeds.len() - 1 - rng.below(3)];
                let p = mutate(&mut rng, s);
                let mut f = (p.len() as u32).to_le_bytes()[..3].to_vec();
                f.push(1);
                f.extend(p);
                f
            }
            // A header declaring far more than any handshake.
            3 => vec![0xff, 0xff, 0xff, 1],
            // A header and part of its body (a stall).
            4 => {
                let mut f = vec![100, 0, 0, 1];
                f.extend(rng.bytes(10));
                f
            }
            // Half a header.
            _ => vec![0x20, 0],
        };
        if i % 10 == 9 {
            // Cut to a partial header.
            junk.truncate(3);
        }
        let mut s = TcpStream::connect(addr).await.unwrap();
        garbage.push(tokio::spawn(async move {
            let _ = s.write_all(&junk).await;
            let fate = wait_end(&mut s, end_within).await;
            (junk, fate)
        }));
    }

    // A real client gets in within 1 s while all of that is connected.
    let t = Instant::now();
    let mut real = login(addr).await;
    assert!(in_sync(&mut real, "first").await);
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "real client took {:?}",
        t.elapsed()
    );

    // After authentication: garbage and mutated commands, each answered
    // (the marker query that follows still runs in step) or the
    // connection closed (a malformed COM_CHANGE_USER, or a first byte that
    // is no command).
    let commands: Vec<Vec<u8>> = seeds[..seeds.len() - 3].to_vec();
    let mut post = Vec::new();
    for c in 0..8 {
        let mut cases = Vec::new();
        for _ in 0..25 {
            let p = match rng.below(3) {
                0 => {
                    let n = 1 + rng.below(40);
                    rng.bytes(n)
                }
                _ => {
                    let k = rng.below(commands.len());
                    mutate(&mut rng, &commands[k])
                }
            };
            cases.push(p);
        }
        post.push(tokio::spawn(async move {
            let mut s = login(addr).await;
            for (k, p) in cases.iter().enumerate() {
                if p.first() == Some(&0x01) {
                    continue; // COM_QUIT: closes by design
                }
                let _ = write_packet(&mut s, 0, p).await;
                if !in_sync(&mut s, &format!("m{c}x{k}")).await {
                    // Closed: it must have been a connection-level error.
                    return Some(p.clone());
                }
            }
            None
        }));
    }
    for h in post {
        if let Some(p) = h.await.unwrap() {
            // Fatal by design: a malformed COM_CHANGE_USER, and a first
            // byte that is no command at all (garbage: answered, closed).
            assert!(
                p.first() == Some(&0x11) || p.first().is_some_and(|b| *b > 0x1f),
                "connection closed after a non-fatal command {}",
                hex(&p)
            );
        }
    }
    // Framing errors after authentication: a stalled body (1159) and an
    // oversized declared length (1153) close the connection with an error.
    let mut s = login(addr).await;
    s.write_all(&[100, 0, 0, 0, 3, b'S']).await.unwrap();
    assert_eq!(wait_end(&mut s, DEADLINE).await, Fate::Error(1159));
    let mut s = login(addr).await;
    s.write_all(&[0xff, 0xff, 0xff, 0]).await.unwrap();
    assert_eq!(wait_end(&mut s, DEADLINE).await, Fate::Error(1153));

    for (junk, h) in garbage.into_iter().enumerate() {
        let (bytes, fate) = h.await.unwrap();
        // Every complete-but-bad handshake gets an error packet.
        if junk % 6 == 3 && junk % 10 != 9 {
            assert_eq!(fate, Fate::Error(1153), "{}", hex(&bytes));
        }
    }
    // The idle sockets are told about the timeout and closed.
    for mut s in idle {
        assert_eq!(wait_end(&mut s, end_within).await, Fate::Error(1159));
    }
    // And the server still works.
    let mut again = login(addr).await;
    assert!(in_sync(&mut again, "last").await);
    drop((real, again));
    let t = Instant::now();
    while limits.prepared_statements() + limits.statement_bytes() > 0 {
        assert!(t.elapsed() < DEADLINE, "prepared statements not released");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    token.cancel();
    tokio::time::timeout(DEADLINE, task).await.unwrap().unwrap();
}
