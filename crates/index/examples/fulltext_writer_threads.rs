//! Does tantivy's multi-threaded writer make a full-text build faster here?
//! Indexes `n` documents of 12 words (Zipf-like over a 5,000-word
//! vocabulary) with 1 and with 2 writer threads into a RAM index with the
//! shape of ours (one text field, one u64 key), commits, and prints the
//! time and the segments made:
//! `cargo run --release -p tributary-index --example fulltext_writer_threads -- [n]`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test
use std::time::Instant;

use tantivy::schema::{Schema, FAST, INDEXED, STORED, TEXT};
use tantivy::{doc, Index, IndexWriter, TantivyDocument};

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(300_000);
    let vocab: Vec<String> = (0..5000).map(|i| format!("w{i:x}q")).collect();
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let docs: Vec<String> = (0..n)
        .map(|_| {
            (0..12)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Zipf-like: small ids far more often.
                    let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                    vocab[((u * u * u) * vocab.len() as f64) as usize % vocab.len()].as_str()
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    for threads in [1usize, 2, 1, 2] {
        let mut sb = Schema::builder();
        let key = sb.add_u64_field("key", INDEXED | FAST | STORED);
        let body = sb.add_text_field("f0", TEXT);
        let index = Index::create_in_ram(sb.build());
        let t = Instant::now();
        let mut w: IndexWriter<TantivyDocument> = index
            .writer_with_num_threads(threads, 32_000_000 * threads)
            .expect("writer");
        for (k, d) in docs.iter().enumerate() {
            w.add_document(doc!(key => k as u64, body => d.as_str()))
                .expect("add");
        }
        w.commit().expect("commit");
        let took = t.elapsed();
        let segments = index.searchable_segment_ids().expect("segments").len();
        println!("{n} docs, {threads} writer thread(s): {took:?}, {segments} segments");
    }
}
