//! Rows or columns for the operator batches (decision 028): filter + project
//! over 1,000,000 rows of four values, in batches of 1,024, three ways (the
//! scan's batches are made before the clock starts; five rounds).
//!
//! `rustc -O --edition 2021 scripts/batch_layout.rs -o /tmp/batch_layout && /tmp/batch_layout`
//!
//! `V` has the shape of `tributary::types::Value` (32 bytes: an i64, an f64,
//! a 24-byte payload). The filter is `a > 500 AND c <> 'x7'`, the
//! projection `(a + b, c)`: one integer sum and one text column carried.
//! - rows: a batch is `Vec<Vec<V>>`; the row-at-a-time evaluator reads `&[V]`
//!   (what `CExpr::eval` does today).
//! - columns, vectorized: a batch is one `Vec<V>` per column; the filter makes
//!   a selection vector and the projection loops per column (what a
//!   column-at-a-time evaluator would do).
//! - columns, row evaluator: the same column batch, but each row gathered into
//!   a scratch `Vec<V>` for the row evaluator (columns without rewriting the
//!   evaluator).
#![allow(dead_code)]
use std::hint::black_box;
use std::time::Instant;

#[derive(Clone, Debug)]
enum V {
    Null,
    Int(i64),
    Float(f64),
    Text(String),
    Dec([u64; 3]),
}

const N: usize = 1_000_000;
const BATCH: usize = 1024;

fn keep(row: &[V]) -> bool {
    matches!(&row[0], V::Int(a) if *a > 500) && !matches!(&row[2], V::Text(s) if s == "x7")
}

fn project(row: &[V]) -> Vec<V> {
    let s = match (&row[0], &row[1]) {
        (V::Int(a), V::Int(b)) => V::Int(a + b),
        _ => V::Null,
    };
    vec![s, row[2].clone()]
}

fn make_row(i: usize) -> Vec<V> {
    vec![
        V::Int((i * 7919 % 1000) as i64),
        V::Int(i as i64),
        V::Text(format!("x{}", i % 10)),
        V::Float(i as f64),
    ]
}

fn rows(batches: &[Vec<Vec<V>>]) -> (usize, f64) {
    let t = Instant::now();
    let mut out = 0;
    for batch in batches {
        let mut o = Vec::with_capacity(batch.len());
        for r in batch {
            if keep(r) {
                o.push(project(r));
            }
        }
        out += black_box(o).len();
    }
    (out, t.elapsed().as_secs_f64())
}

fn columns(batches: &[Vec<Vec<V>>], gather: bool) -> (usize, f64) {
    let t = Instant::now();
    let mut out = 0;
    let mut scratch: Vec<V> = Vec::with_capacity(4);
    for cols in batches {
        let n = cols[0].len();
        if gather {
            let mut o = Vec::with_capacity(n);
            for r in 0..n {
                scratch.clear();
                scratch.extend(cols.iter().map(|c| c[r].clone()));
                if keep(&scratch) {
                    o.push(project(&scratch));
                }
            }
            out += black_box(o).len();
        } else {
            let sel: Vec<usize> = (0..n)
                .filter(|&r| {
                    matches!(&cols[0][r], V::Int(a) if *a > 500)
                        && !matches!(&cols[2][r], V::Text(s) if s == "x7")
                })
                .collect();
            let sum: Vec<V> = sel
                .iter()
                .map(|&r| match (&cols[0][r], &cols[1][r]) {
                    (V::Int(a), V::Int(b)) => V::Int(a + b),
                    _ => V::Null,
                })
                .collect();
            let text: Vec<V> = sel.iter().map(|&r| cols[2][r].clone()).collect();
            out += black_box((sum, text)).0.len();
        }
    }
    (out, t.elapsed().as_secs_f64())
}

fn main() {
    // The scan's batches, made before the clock starts (the same values in
    // both layouts): only filter + project are timed.
    let row_batches: Vec<Vec<Vec<V>>> = (0..N)
        .step_by(BATCH)
        .map(|i| (i..(i + BATCH).min(N)).map(make_row).collect())
        .collect();
    let col_batches: Vec<Vec<Vec<V>>> = row_batches
        .iter()
        .map(|b| (0..4).map(|c| b.iter().map(|r| r[c].clone()).collect()).collect())
        .collect();
    for round in 0..5 {
        let (a, ta) = rows(&row_batches);
        let (b, tb) = columns(&col_batches, false);
        let (c, tc) = columns(&col_batches, true);
        assert_eq!(a, b);
        assert_eq!(a, c);
        println!(
            "round {round}: {a} rows out; rows {:.1} ms, columns vectorized {:.1} ms, columns + row evaluator {:.1} ms",
            ta * 1e3,
            tb * 1e3,
            tc * 1e3
        );
    }
}
