//! Hybrid search by reciprocal-rank fusion (issue 41 item 8): one SQL
//! statement ranks the documents by vector distance (`ROW_NUMBER() OVER
//! (ORDER BY l2_distance …)`, top 50 by the HNSW index) and by full-text
//! relevance (`ROW_NUMBER() OVER (ORDER BY MATCH … DESC)`, top 50 by the
//! full-text index), and fuses the two rankings — the union of their ids
//! LEFT JOINed to both (MySQL has no FULL JOIN) — by `1/(60 + rank)`.
//!
//! Checked against brute force: the vector ranking is recomputed in Rust
//! from the stored vectors (exact L2), the full-text ranking from every
//! matching row's score (the exhaustive `MATCH` evaluation, not the top-k
//! path), and the fusion, its ties and its order are recomputed in Rust.
//! The fusion uses DOUBLE arithmetic (`1e0 / (60 + r)`), so Rust's `f64`
//! gives the same bits. With synchronous and ASYNC indexes; for ASYNC,
//! rows committed just before the query must be in its answer (fresh at
//! commit: the unapplied tail is searched exactly). EXPLAIN must show both
//! branches answered by their index.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use common::Lcg;

use std::collections::{BTreeSet, HashMap};

use tributary::{Database, Session, Value};

const DOCS: usize = 2000;
const DIM: usize = 8;
const K: usize = 50;
const WORDS: [&str; 10] = [
    "rust", "vector", "search", "index", "query", "engine", "fresh", "commit", "rank", "fusion",
];

struct Doc {
    id: i64,
    v: [f32; DIM],
}

fn run(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).rows
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        other => panic!("not an integer: {other:?}"),
    }
}

fn float(v: &Value) -> f64 {
    match v {
        Value::Float(f) => *f,
        other => panic!("not a double: {other:?}"),
    }
}

fn vec_lit(v: &[f32; DIM]) -> String {
    let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", parts.join(","))
}

/// A document's row: a random vector and 2–9 random words (repeats make
/// term frequencies, lengths make BM25's length normalisation vary).
fn doc(rng: &mut Lcg, id: i64) -> (Doc, String) {
    let v: [f32; DIM] = std::array::from_fn(|_| rng.grid(100_000, 1000.0));
    let n = 2 + rng.next() % 8;
    let body: Vec<&str> = (0..n)
        .map(|_| WORDS[(rng.next() % WORDS.len() as u64) as usize])
        .collect();
    let row = format!("({id}, '{}', '{}')", body.join(" "), vec_lit(&v));
    (Doc { id, v }, row)
}

fn insert(s: &mut Session, rows: &[String]) {
    for chunk in rows.chunks(200) {
        run(s, &format!("INSERT INTO docs VALUES {}", chunk.join(",")));
    }
}

/// The fusion query: two ranked top-K branches, their ids' union, two
/// LEFT JOINs and the fused score. Distances of random vectors do not
/// tie; full-text scores do, so that ranking breaks its ties by id.
fn rrf_sql(q: &str, word: &str) -> String {
    format!(
        "WITH v AS (SELECT id, ROW_NUMBER() OVER (ORDER BY l2_distance(emb, '{q}')) AS r \
                    FROM docs ORDER BY l2_distance(emb, '{q}') LIMIT {K}), \
              f AS (SELECT id, ROW_NUMBER() OVER (ORDER BY MATCH(body) AGAINST('{word}') DESC, id) AS r \
                    FROM docs WHERE MATCH(body) AGAINST('{word}') \
                    ORDER BY MATCH(body) AGAINST('{word}') DESC, id LIMIT {K}), \
              ids AS (SELECT id FROM v UNION SELECT id FROM f) \
         SELECT ids.id, COALESCE(1e0 / (60 + v.r), 0) + COALESCE(1e0 / (60 + f.r), 0) AS rrf \
         FROM ids LEFT JOIN v ON v.id = ids.id LEFT JOIN f ON f.id = ids.id \
         ORDER BY rrf DESC, ids.id LIMIT 10"
    )
}

/// The same answer by brute force: exact distances over `docs`, and the
/// full-text ranking from every matching row's score.
fn brute_rrf(s: &mut Session, docs: &[Doc], q: &[f32; DIM], word: &str) -> Vec<(i64, f64)> {
    let mut by_dist: Vec<(f64, i64)> = docs
        .iter()
        .map(|d| {
            let dist =
                d.v.iter()
                    .zip(q)
                    .map(|(a, b)| (f64::from(*a) - f64::from(*b)).powi(2))
                    .sum::<f64>()
                    .sqrt();
            (dist, d.id)
        })
        .collect();
    by_dist.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let vr: HashMap<i64, i64> = by_dist
        .iter()
        .take(K)
        .enumerate()
        .map(|(i, (_, id))| (*id, i as i64 + 1))
        .collect();
    // Every matching row with its score: no ORDER BY, no LIMIT (no top-k).
    let mut scored: Vec<(f64, i64)> = run(
        s,
        &format!(
            "SELECT id, MATCH(body) AGAINST('{word}') FROM docs WHERE MATCH(body) AGAINST('{word}')"
        ),
    )
    .iter()
    .map(|r| (float(&r[1]), int(&r[0])))
    .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let fr: HashMap<i64, i64> = scored
        .iter()
        .take(K)
        .enumerate()
        .map(|(i, (_, id))| (*id, i as i64 + 1))
        .collect();
    let ids: BTreeSet<i64> = vr.keys().chain(fr.keys()).copied().collect();
    let part = |r: Option<&i64>| r.map_or(0.0, |r| 1.0 / (60.0 + *r as f64));
    let mut fused: Vec<(i64, f64)> = ids
        .into_iter()
        .map(|id| (id, part(vr.get(&id)) + part(fr.get(&id))))
        .collect();
    fused.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    fused.truncate(10);
    fused
}

fn answer(s: &mut Session, q: &[f32; DIM], word: &str) -> Vec<(i64, f64)> {
    run(s, &rrf_sql(&vec_lit(q), word))
        .iter()
        .map(|r| (int(&r[0]), float(&r[1])))
        .collect()
}

fn check(asynchronous: bool) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    let suffix = if asynchronous { " ASYNC" } else { "" };
    for sql in [
        "CREATE DATABASE h".to_string(),
        "USE h".to_string(),
        format!("CREATE TABLE docs (id INT PRIMARY KEY, body TEXT, emb VECF32({DIM}))"),
        format!("CREATE INDEX hv USING HNSW ON docs(emb) OP_TYPE 'vector_l2_ops'{suffix}"),
        format!("CREATE FULLTEXT INDEX ft ON docs(body){suffix}"),
        // A search wide enough that the index's top 50 of 2,000 rows is
        // the exact top 50 (what brute force computes).
        "SET hnsw_ef_search = 400".to_string(),
    ] {
        run(&mut s, &sql);
    }
    let mut rng = Lcg(if asynchronous { 41 } else { 17 });
    let (mut docs, mut rows) = (Vec::new(), Vec::new());
    for id in 0..DOCS as i64 {
        let (d, row) = doc(&mut rng, id);
        docs.push(d);
        rows.push(row);
    }
    insert(&mut s, &rows);

    // Both branches are answered by their index (top-k), not a scan.
    let q0: [f32; DIM] = std::array::from_fn(|_| rng.grid(100_000, 1000.0));
    let plan: Vec<String> = run(
        &mut s,
        &format!("EXPLAIN {}", rrf_sql(&vec_lit(&q0), "rust")),
    )
    .iter()
    .map(|r| format!("{:?}", r[0]))
    .collect();
    let text = plan.join("\n");
    assert!(
        text.contains("Vector Index Search on h.docs using hv"),
        "vector branch not by its index:\n{text}"
    );
    assert!(
        text.contains("Full-Text Search on h.docs using ft"),
        "full-text branch not by its index:\n{text}"
    );
    assert!(
        !text.contains("Table Scan on h.docs"),
        "a branch scans the table:\n{text}"
    );

    for round in 0..12 {
        let q: [f32; DIM] = std::array::from_fn(|_| rng.grid(100_000, 1000.0));
        let word = WORDS[round % WORDS.len()];
        let got = answer(&mut s, &q, word);
        assert_eq!(got.len(), 10, "round {round}");
        assert_eq!(
            got,
            brute_rrf(&mut s, &docs, &q, word),
            "round {round}, word {word}"
        );
    }

    // Fresh at commit: documents committed now — nearest to the query and
    // full of its word — lead the very next fusion (for ASYNC indexes
    // before ISCP has applied them).
    let q: [f32; DIM] = std::array::from_fn(|_| rng.grid(100_000, 1000.0));
    let mut fresh = Vec::new();
    for i in 0..5 {
        let id = 100_000 + i;
        let mut v = q;
        v[0] += 0.0001 * (i + 1) as f32;
        fresh.push(format!(
            "({id}, 'fusion fusion fusion fusion', '{}')",
            vec_lit(&v)
        ));
        docs.push(Doc { id, v });
    }
    run(&mut s, "BEGIN");
    insert(&mut s, &fresh);
    run(&mut s, "COMMIT");
    let got = answer(&mut s, &q, "fusion");
    assert_eq!(got, brute_rrf(&mut s, &docs, &q, "fusion"), "fresh rows");
    let top: BTreeSet<i64> = got.iter().take(5).map(|(id, _)| *id).collect();
    assert_eq!(
        top,
        (100_000..100_005).collect::<BTreeSet<i64>>(),
        "the fresh rows lead both rankings: {got:?}"
    );
}

#[test]
fn rrf_fusion_matches_brute_force_sync() {
    check(false);
}

#[test]
fn rrf_fusion_matches_brute_force_async() {
    check(true);
}
