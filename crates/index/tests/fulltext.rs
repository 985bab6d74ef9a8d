//! Integration tests of `FullTextIndex`: natural and boolean queries against brute
//! force over a generated corpus, the ngram parser, upsert/remove visibility, scores
//! and serialization round trips.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::collections::BTreeSet;

use common::Rng;
use tributary_index::{tokenize_with, FullTextIndex, IndexError, MatchMode, Parser};

const VOCAB: &[&str] = &[
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet",
    "kilo", "lima", "mike", "november", "oscar", "papa", "quebec", "romeo", "sierra", "tango",
    "uniform", "victor", "whiskey", "xray", "yankee", "zulu", "Rust", "DATABASE", "Index",
    "vector",
];

type Doc = (u64, Vec<Option<String>>);

fn corpus(rng: &mut Rng, n: usize) -> Vec<Doc> {
    (0..n as u64)
        .map(|k| {
            let fields = (0..2)
                .map(|_| {
                    if rng.below(10) == 0 {
                        return None;
                    }
                    let len = 1 + rng.below(8);
                    let words: Vec<&str> =
                        (0..len).map(|_| VOCAB[rng.below(VOCAB.len())]).collect();
                    // Mix separators so the analyzer has work to do.
                    Some(words.join(if rng.below(2) == 0 { " " } else { ", " }))
                })
                .collect();
            (k * 3 + 1, fields)
        })
        .collect()
}

fn as_refs(fields: &[Option<String>]) -> Vec<Option<&str>> {
    fields.iter().map(|f| f.as_deref()).collect()
}

fn build(docs: &[Doc], parser: Parser) -> FullTextIndex {
    let mut ix = FullTextIndex::new(2, parser).unwrap();
    for (k, f) in docs {
        ix.upsert(*k, &as_refs(f)).unwrap();
    }
    ix.commit().unwrap();
    ix
}

fn doc_terms(ix: &FullTextIndex, fields: &[Option<String>]) -> BTreeSet<String> {
    fields
        .iter()
        .flatten()
        .flat_map(|t| ix.tokenize(t))
        .collect()
}

fn keys(r: &[(u64, f32)]) -> BTreeSet<u64> {
    r.iter().map(|(k, _)| *k).collect()
}

fn assert_scores(r: &[(u64, f32)]) {
    assert!(
        r.iter().all(|(_, s)| *s > 0.0 && s.is_finite()),
        "non-positive score"
    );
    assert!(
        r.windows(2).all(|w| w[0].1 >= w[1].1),
        "scores not descending"
    );
}

#[test]
fn natural_queries_match_brute_force() {
    let mut rng = Rng::new(1);
    let docs = corpus(&mut rng, 2_000);
    let ix = build(&docs, Parser::Default);
    assert_eq!(ix.len(), 2_000);
    for i in 0..30 {
        let q = if i % 2 == 0 {
            VOCAB[rng.below(VOCAB.len())].to_string()
        } else {
            format!(
                "{} {}",
                VOCAB[rng.below(VOCAB.len())].to_uppercase(),
                VOCAB[rng.below(VOCAB.len())]
            )
        };
        let qt: BTreeSet<String> = ix.tokenize(&q).into_iter().collect();
        let want: BTreeSet<u64> = docs
            .iter()
            .filter(|(_, f)| !doc_terms(&ix, f).is_disjoint(&qt))
            .map(|(k, _)| *k)
            .collect();
        assert!(!want.is_empty());
        let got = ix.search(&q, MatchMode::Natural, 100_000).unwrap();
        assert_scores(&got);
        assert_eq!(keys(&got), want, "query {q:?}");
        assert_eq!(got.len(), want.len(), "duplicate keys for {q:?}");
        // The exact fallback agrees row by row.
        for (k, f) in &docs {
            assert_eq!(
                ix.matches_text(&as_refs(f), &q, MatchMode::Natural),
                want.contains(k),
                "matches_text {q:?} key {k}"
            );
        }
        // A limit returns the best prefix.
        let top = ix.search(&q, MatchMode::Natural, 5).unwrap();
        assert_eq!(top.len(), want.len().min(5));
        assert_eq!(top[0].1, got[0].1);
    }
}

#[test]
fn boolean_queries_match_brute_force() {
    let mut rng = Rng::new(2);
    let docs = corpus(&mut rng, 2_000);
    let ix = build(&docs, Parser::Default);
    for _ in 0..15 {
        let a = VOCAB[rng.below(VOCAB.len())].to_lowercase();
        let b = VOCAB[rng.below(VOCAB.len())].to_lowercase();
        if a == b {
            continue;
        }
        let q = format!("+{a} -{b}");
        let want: BTreeSet<u64> = docs
            .iter()
            .filter(|(_, f)| {
                let t = doc_terms(&ix, f);
                t.contains(&a) && !t.contains(&b)
            })
            .map(|(k, _)| *k)
            .collect();
        let got = ix.search(&q, MatchMode::Boolean, 100_000).unwrap();
        assert_scores(&got);
        assert_eq!(keys(&got), want, "query {q}");
    }
    // Richer syntax: cross-check the index against the exact matcher on every row.
    let queries = [
        "+alpha +bravo",
        "alpha bravo -charlie",
        "+(alpha bravo) -(charlie delta)",
        "\"alpha bravo\"",
        "+\"rust database\" index",
        "del*",
        "+vec* -xray",
        "~alpha <bravo >charlie",
        "-alpha",
        "",
        "+alpha-bravo",
    ];
    for q in queries {
        let got = keys(&ix.search(q, MatchMode::Boolean, 100_000).unwrap());
        let want: BTreeSet<u64> = docs
            .iter()
            .filter(|(_, f)| ix.matches_text(&as_refs(f), q, MatchMode::Boolean))
            .map(|(k, _)| *k)
            .collect();
        assert_eq!(got, want, "query {q:?}");
        if q.starts_with('-') || q.is_empty() {
            assert!(got.is_empty(), "{q:?} must match nothing");
        } else {
            assert!(!got.is_empty(), "{q:?} should match something");
        }
    }
    // Phrase semantics are positional: "alpha bravo" only where adjacent in order.
    let phrase = keys(
        &ix.search("\"alpha bravo\"", MatchMode::Boolean, 100_000)
            .unwrap(),
    );
    let conj = keys(
        &ix.search("+alpha +bravo", MatchMode::Boolean, 100_000)
            .unwrap(),
    );
    assert!(phrase.is_subset(&conj) && phrase.len() < conj.len());
}

#[test]
fn malformed_boolean_queries_are_errors() {
    let ix = build(&corpus(&mut Rng::new(3), 10), Parser::Default);
    for q in ["\"alpha", "(alpha bravo", "alpha)", "++alpha", "alpha @2"] {
        assert!(
            matches!(
                ix.search(q, MatchMode::Boolean, 10),
                Err(IndexError::Query(_))
            ),
            "{q}"
        );
        assert!(!ix.matches_text(&[Some("alpha bravo"), None], q, MatchMode::Boolean));
    }
    // Natural mode has no syntax: the same text is just words.
    assert!(ix.search("\"alpha", MatchMode::Natural, 10).is_ok());
}

#[test]
fn ngram_parser_finds_substrings() {
    let docs: Vec<Doc> = vec![
        (1, vec![Some("A database system".into()), None]),
        (
            2,
            vec![Some("数据库管理系统".into()), Some("向量索引".into())],
        ),
        (3, vec![Some("tabular data".into()), None]),
        (4, vec![Some("nothing here".into()), Some("x".into())]),
    ];
    let ix = build(&docs, Parser::Ngram);
    let got = keys(&ix.search("+tab", MatchMode::Boolean, 10).unwrap());
    assert_eq!(got, BTreeSet::from([1, 3]));
    let got = ix.search("tab", MatchMode::Natural, 10).unwrap();
    assert_scores(&got);
    assert!(keys(&got).is_superset(&BTreeSet::from([1, 3])));
    assert!(!keys(&got).contains(&4));
    assert_eq!(
        keys(&ix.search("+数据库", MatchMode::Boolean, 10).unwrap()),
        BTreeSet::from([2])
    );
    assert_eq!(
        keys(&ix.search("索引", MatchMode::Natural, 10).unwrap()),
        BTreeSet::from([2])
    );
    assert_eq!(
        keys(&ix.search("+datab*", MatchMode::Boolean, 10).unwrap()),
        BTreeSet::from([1])
    );
    assert_eq!(
        keys(
            &ix.search("+\"base sys\" -tabular", MatchMode::Boolean, 10)
                .unwrap()
        ),
        BTreeSet::from([1])
    );
    // Phrases are substring matches: "data sys" is not contiguous in "database system".
    assert!(ix
        .search("+\"data sys\"", MatchMode::Boolean, 10)
        .unwrap()
        .is_empty());
    assert!(ix.matches_text(&[Some("DATABASE"), None], "+tab", MatchMode::Boolean));
    assert!(!ix.matches_text(&[Some("at bat"), None], "+tab", MatchMode::Boolean));
    assert!(!ix.matches_text(&[Some("data"), None], "+tab", MatchMode::Boolean));
    assert_eq!(tokenize_with(Parser::Ngram, "x"), vec!["x"]);

    // Cross-check the ngram index against the exact matcher on a generated corpus.
    let docs = corpus(&mut Rng::new(6), 800);
    let ix2 = build(&docs, Parser::Ngram);
    for q in [
        "+lima -ik",
        "\"ta go\"",
        "ango",
        "+rom* +ust",
        "(ha ph) -\"ta ta\"",
        "z*",
    ] {
        let got = keys(&ix2.search(q, MatchMode::Boolean, 100_000).unwrap());
        let want: BTreeSet<u64> = docs
            .iter()
            .filter(|(_, f)| ix2.matches_text(&as_refs(f), q, MatchMode::Boolean))
            .map(|(k, _)| *k)
            .collect();
        assert!(!want.is_empty(), "{q:?} should match something");
        assert_eq!(got, want, "ngram query {q:?}");
    }
    assert_eq!(
        keys(&ix.search("x", MatchMode::Natural, 10).unwrap()),
        BTreeSet::from([4])
    );
}

#[test]
fn upsert_and_remove_visible_after_commit() {
    let mut ix = FullTextIndex::new(1, Parser::Default).unwrap();
    ix.upsert(1, &[Some("old words here")]).unwrap();
    ix.upsert(2, &[Some("other words")]).unwrap();
    assert_eq!(ix.len(), 0, "nothing is visible before commit");
    assert!(ix.has_pending());
    assert!(ix
        .search("words", MatchMode::Natural, 10)
        .unwrap()
        .is_empty());
    ix.commit().unwrap();
    assert!(!ix.has_pending());
    assert_eq!(ix.len(), 2);
    assert_eq!(
        keys(&ix.search("words", MatchMode::Natural, 10).unwrap()),
        BTreeSet::from([1, 2])
    );

    ix.upsert(1, &[Some("new text")]).unwrap();
    // Still the old content until commit.
    assert_eq!(
        keys(&ix.search("old", MatchMode::Natural, 10).unwrap()),
        BTreeSet::from([1])
    );
    ix.commit().unwrap();
    assert!(ix.search("old", MatchMode::Natural, 10).unwrap().is_empty());
    assert_eq!(
        keys(&ix.search("new", MatchMode::Natural, 10).unwrap()),
        BTreeSet::from([1])
    );
    assert_eq!(ix.len(), 2);

    ix.remove(2).unwrap();
    ix.remove(999).unwrap();
    ix.commit().unwrap();
    assert_eq!(ix.len(), 1);
    assert!(ix
        .search("other", MatchMode::Natural, 10)
        .unwrap()
        .is_empty());

    // Upsert twice in one batch: the last one wins.
    ix.upsert(3, &[Some("first")]).unwrap();
    ix.upsert(3, &[Some("second")]).unwrap();
    ix.commit().unwrap();
    assert!(ix
        .search("first", MatchMode::Natural, 10)
        .unwrap()
        .is_empty());
    assert_eq!(
        keys(&ix.search("second", MatchMode::Natural, 10).unwrap()),
        BTreeSet::from([3])
    );

    assert!(matches!(
        ix.upsert(4, &[]),
        Err(IndexError::InvalidDocument(_))
    ));
    assert!(FullTextIndex::new(0, Parser::Default).is_err());
}

#[test]
fn bytes_round_trip_gives_equal_results() {
    let mut rng = Rng::new(4);
    let docs = corpus(&mut rng, 1_500);
    for parser in [Parser::Default, Parser::Ngram] {
        let mut ix = FullTextIndex::new(2, parser).unwrap();
        // Several commits (several segments) plus deletes and updates.
        for chunk in docs.chunks(300) {
            for (k, f) in chunk {
                ix.upsert(*k, &as_refs(f)).unwrap();
            }
            ix.commit().unwrap();
        }
        for (k, _) in docs.iter().step_by(7) {
            ix.remove(*k).unwrap();
        }
        for (k, _) in docs.iter().step_by(11) {
            ix.upsert(*k, &[Some("replaced golf"), None]).unwrap();
        }
        // to_bytes commits pending work itself.
        let bytes = ix.to_bytes().unwrap();
        let mut back = FullTextIndex::from_bytes(&bytes).unwrap();
        assert_eq!(back.len(), ix.len());
        assert_eq!(back.parser(), parser);
        for q in ["alpha", "golf replaced", "zulu xray", "RUST"] {
            assert_eq!(
                ix.search(q, MatchMode::Natural, 50).unwrap(),
                back.search(q, MatchMode::Natural, 50).unwrap(),
                "{parser:?} {q}"
            );
        }
        assert_eq!(
            ix.search("+golf -alpha", MatchMode::Boolean, 10_000)
                .unwrap(),
            back.search("+golf -alpha", MatchMode::Boolean, 10_000)
                .unwrap()
        );
        // The restored index stays writable and round-trips again.
        back.upsert(1_000_000, &[Some("brand new"), Some("golf")])
            .unwrap();
        back.commit().unwrap();
        assert!(keys(&back.search("brand", MatchMode::Natural, 10).unwrap()).contains(&1_000_000));
        let again = FullTextIndex::from_bytes(&back.to_bytes().unwrap()).unwrap();
        assert_eq!(again.len(), back.len());
    }
    let mut empty = FullTextIndex::new(3, Parser::Default).unwrap();
    let e = FullTextIndex::from_bytes(&empty.to_bytes().unwrap()).unwrap();
    assert!(e.is_empty());
    assert_eq!(e.n_fields(), 3);
}

#[test]
fn garbage_bytes_are_errors() {
    let mut rng = Rng::new(5);
    let mut ix = build(&corpus(&mut rng, 100), Parser::Default);
    let good = ix.to_bytes().unwrap();
    let corrupt = |r: Result<FullTextIndex, IndexError>| matches!(r, Err(IndexError::Corrupt(_)));
    assert!(corrupt(FullTextIndex::from_bytes(&[])));
    assert!(corrupt(FullTextIndex::from_bytes(
        b"garbage garbage garbage"
    )));
    let noise: Vec<u8> = (0..good.len()).map(|_| rng.next_u64() as u8).collect();
    assert!(corrupt(FullTextIndex::from_bytes(&noise)));
    for cut in [1, 12, good.len() / 3, good.len() - 1] {
        assert!(
            corrupt(FullTextIndex::from_bytes(&good[..cut])),
            "cut {cut}"
        );
    }
    for _ in 0..30 {
        let mut bad = good.clone();
        let i = rng.below(bad.len());
        bad[i] ^= 1 << rng.below(8);
        assert!(corrupt(FullTextIndex::from_bytes(&bad)), "flip at {i}");
    }
    // A vector-index blob is not a full-text blob.
    let v = tributary_index::VectorIndex::new(tributary_index::HnswOptions::new(
        2,
        tributary_index::Metric::L2,
    ))
    .unwrap();
    assert!(corrupt(FullTextIndex::from_bytes(&v.to_bytes().unwrap())));
    assert!(FullTextIndex::from_bytes(&good).is_ok());
}
