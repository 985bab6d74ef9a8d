//! SQL's three-valued logic, operator by operator, against MySQL's
//! answers: every line of `tests/data/truth_tables.tsv` is an expression
//! (AND / OR / XOR / NOT, IS [NOT] TRUE / FALSE / UNKNOWN, BETWEEN, IN,
//! LIKE, CASE, IF, comparisons and row comparisons, with NULL in every
//! operand position) and the answer a MariaDB server gave for it
//! (`scripts/truth_tables.py` wrote the file). Tributary must print the
//! same value for each.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::path::Path;

use tributary::Database;

#[test]
fn every_operator_answers_as_mysql_does_with_null_operands() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/truth_tables.tsv");
    let data = std::fs::read_to_string(&path).expect("read truth tables");
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = Database::open(tmp.path()).expect("open");
    let mut s = db.session();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for line in data.lines().filter(|l| !l.starts_with('#')) {
        let (expr, want) = line.split_once('\t').expect("expression<TAB>answer");
        let got = match s.execute(&format!("SELECT {expr}")) {
            Ok(r) => {
                let v = &r.rows[0][0];
                tributary::format_value(v, r.columns[0].kind).unwrap_or_else(|| "NULL".into())
            }
            Err(e) => format!("ERROR {}", e.code),
        };
        checked += 1;
        if got != want {
            wrong.push(format!("{expr}: MySQL {want}, Tributary {got}"));
        }
    }
    drop(s);
    db.shutdown();
    assert!(
        checked > 1000,
        "only {checked} expressions in {}",
        path.display()
    );
    assert!(
        wrong.is_empty(),
        "{} of {checked} differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
