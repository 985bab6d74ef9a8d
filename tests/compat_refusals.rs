//! Every refusal the product can answer with 1235 ("This version of
//! Tributary doesn't yet support '…'") has its row in
//! `docs/COMPATIBILITY.md`, section "Refused, and what to use instead",
//! and every row there still names a refusal the source makes (issue 42
//! item 7).
//!
//! A scan of the source text, not of behaviour: each
//! `SqlError::unsupported(…)` call in `src/` and `crates/*/src` (outside
//! `#[cfg(test)] mod`) gives the message template it builds — its string
//! literal, or a `format!`'s, with every `{…}` placeholder written `…`
//! (`format!("column type {s}")` is `column type …`). A call whose argument
//! is not a literal is followed to where its literals are (a closure's
//! calls, a `for (…, what) in [(…, "…")]` table, a `Some("…")` of the
//! function that chose `what`); one that echoes the statement's own text
//! (`other.to_string()`) is the catch-all row `…`. A literal message
//! `"… doesn't yet support '…'"` built without the helper counts too. A
//! call of another shape fails the test until a rule here reads it.
//!
//! The doc's rows list the templates in their third column, in backticks;
//! a key ending in `…` covers every template it is a prefix of.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::path::{Path, PathBuf};

const SECTION: &str = "## Refused, and what to use instead";
/// The template of a refusal that quotes the statement or clause itself.
const ECHO: &str = "…";
const CALL: &str = "SqlError::unsupported(";
const PHRASE: &str = "doesn't yet support '";

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read source dir") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The product part of a source file: up to its inline unit-test module
/// (`#[cfg(test)] mod tests {`; a `#[cfg(test)] mod x;` declaration is
/// skipped over).
fn product_part(text: &str) -> &str {
    let inline = text.match_indices("#[cfg(test)]\nmod ").find(|(i, m)| {
        let rest = &text[i + m.len()..];
        rest[..rest.find('\n').unwrap_or(rest.len())]
            .trim_end()
            .ends_with('{')
    });
    match inline {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// A Rust string literal at the start of `s` (`"…"`, `r"…"`, `r#"…"#`):
/// its text (`\"` and `\\` unescaped, a `\` line continuation removed)
/// and the bytes it spans.
fn literal(s: &str) -> Option<(String, usize)> {
    if let Some(raw) = s.strip_prefix('r') {
        let hashes = raw.len() - raw.trim_start_matches('#').len();
        let body = raw[hashes..].strip_prefix('"')?;
        let close = format!("\"{}", "#".repeat(hashes));
        let end = body.find(&close)?;
        return Some((body[..end].to_string(), 1 + hashes + 1 + end + close.len()));
    }
    let body = s.strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, i + 2)),
            '\\' => match chars.next() {
                Some((_, '\n')) => {
                    // A continuation: the next line's leading blanks go too.
                    let rest = &body[i + 2..];
                    let skip = rest.len() - rest.trim_start().len();
                    for _ in 0..rest[..skip].chars().count() {
                        chars.next();
                    }
                }
                Some((_, 'n')) => out.push('\n'),
                Some((_, e)) => out.push(e),
                None => return None,
            },
            c => out.push(c),
        }
    }
    None
}

/// A message template: `{…}` placeholders as `…`, `{{` / `}}` as braces.
fn template(fmt: &str) -> String {
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                for d in chars.by_ref() {
                    if d == '}' {
                        break;
                    }
                }
                out.push('…');
            }
            c => out.push(c),
        }
    }
    if out.chars().all(|c| c == '…' || c.is_whitespace()) {
        ECHO.to_string()
    } else {
        out
    }
}

/// The template of a call argument that is a literal or a `format!` of
/// one (optionally behind `&`), else `None`.
fn literal_arg(arg: &str) -> Option<String> {
    let a = arg.trim_start();
    let a = a.strip_prefix('&').unwrap_or(a).trim_start();
    let a = match a.strip_prefix("format!(") {
        Some(rest) => rest.trim_start(),
        None => a,
    };
    literal(a).map(|(text, _)| template(&text))
}

/// The text of a call's argument list: from just after its `(` to the
/// matching `)`, skipping string literals.
fn call_args(s: &str) -> &str {
    let mut depth = 0usize;
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if rest.starts_with('"') || rest.starts_with("r\"") || rest.starts_with("r#") {
            if let Some((_, n)) = literal(rest) {
                i += n;
                continue;
            }
        }
        let c = rest.chars().next().expect("in bounds");
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' if depth == 0 => return &s[..i],
            ')' | ']' | '}' => depth -= 1,
            _ => {}
        }
        i += c.len_utf8();
    }
    s
}

fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// A call inside a closure that starts at most 3 lines above it
/// (`let no = |what: &str| Err(SqlError::unsupported(what));`): the
/// templates of the closure's calls in the file, whatever the call itself
/// wraps them in.
fn closure_calls(text: &str, at: usize) -> Option<Vec<String>> {
    let mut from = at;
    for _ in 0..4 {
        from = text[..from].rfind('\n').unwrap_or(0);
    }
    let window = &text[from..at];
    let l = window.rfind("let ")?;
    let name: String = window[l + 4..]
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    let closure = window[l + 4 + name.len()..]
        .trim_start()
        .strip_prefix('=')?;
    if name.is_empty() || !closure.trim_start().starts_with('|') || closure.contains(';') {
        return None;
    }
    let pat = format!("{name}(");
    let found = text
        .match_indices(&pat)
        .filter(|(i, _)| {
            let before = text[..*i].chars().next_back();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
        })
        .filter_map(|(i, _)| literal_arg(call_args(&text[i + pat.len()..])))
        .collect();
    Some(found)
}

/// Where a non-literal argument `what` of the call at `at` gets its
/// literals from; `None` when no rule applies.
fn follow(text: &str, at: usize, what: &str) -> Option<Vec<String>> {
    let before = &text[..at];
    // `if let Some(what) = stored_program(…)`: that function's
    // `return Some("…")`.
    let some = format!("Some({what}) = ");
    if let Some(i) = before.rfind(&some) {
        if line_of(text, i) + 2 >= line_of(text, at) {
            let f: String = before[i + some.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let def = text.find(&format!("fn {f}("))?;
            let body_end = text[def..].find("\n}\n").map_or(text.len(), |e| def + e);
            let found = text[def..body_end]
                .match_indices("return Some(")
                .filter_map(|(j, _)| literal(&text[def + j + 12..]).map(|(t, _)| template(&t)))
                .collect();
            return Some(found);
        }
    }
    // `for (kind, what) in [("…", "…"), …]`: each tuple's last literal.
    let table = format!(", {what}) in [");
    if let Some(i) = before.rfind(&table) {
        if line_of(text, i) + 40 >= line_of(text, at) {
            let body = call_args(&text[i + table.len()..]);
            let mut found = Vec::new();
            let mut last = None;
            let mut depth = 0usize;
            let mut j = 0;
            while j < body.len() {
                let rest = &body[j..];
                if rest.starts_with('"') {
                    let (t, n) = literal(rest)?;
                    last = Some(template(&t));
                    j += n;
                    continue;
                }
                let c = rest.chars().next().expect("in bounds");
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            found.extend(last.take());
                        }
                    }
                    _ => {}
                }
                j += c.len_utf8();
            }
            return Some(found);
        }
    }
    None
}

/// Every refusal template of one file's product code, with its line;
/// `Err` names a call no rule reads.
fn refusals(name: &str, text: &str) -> Result<Vec<(String, String)>, String> {
    let text = product_part(text);
    let mut out = Vec::new();
    for (at, _) in text.match_indices(CALL) {
        let place = format!("{name}:{}", line_of(text, at));
        let args = call_args(&text[at + CALL.len()..]);
        if let Some(found) = closure_calls(text, at) {
            if found.is_empty() {
                return Err(format!("{place}: a refusing closure nothing calls"));
            }
            out.extend(found.into_iter().map(|t| (place.clone(), t)));
            continue;
        }
        if let Some(t) = literal_arg(args) {
            out.push((place, t));
            continue;
        }
        let arg = args.trim();
        if arg.contains(".to_string()") {
            out.push((place, ECHO.to_string()));
            continue;
        }
        let ident = arg.chars().all(|c| c.is_alphanumeric() || c == '_');
        match ident.then(|| follow(text, at, arg)).flatten() {
            Some(found) if !found.is_empty() => {
                out.extend(found.into_iter().map(|t| (place.clone(), t)));
            }
            _ => return Err(format!("{place}: cannot read `{CALL}{arg})`")),
        }
    }
    for (at, _) in text.match_indices(PHRASE) {
        let rest = &text[at + PHRASE.len()..];
        if let Some(end) = rest.find("'\"") {
            let t = template(&rest[..end]);
            if t != ECHO {
                out.push((format!("{name}:{}", line_of(text, at)), t));
            }
        }
    }
    Ok(out)
}

/// The keys of the section's rows (third column, in backticks).
fn doc_keys(doc: &str) -> Vec<String> {
    let start = doc.find(SECTION).expect("COMPATIBILITY.md has the section");
    let body = &doc[start + SECTION.len()..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    let lines: Vec<&str> = body.lines().collect();
    let mut keys = Vec::new();
    for (n, l) in lines.iter().enumerate() {
        let header = lines.get(n + 1).is_some_and(|x| x.starts_with("|---"));
        if !l.starts_with('|') || l.starts_with("|---") || header {
            continue;
        }
        let mut cells = Vec::new();
        let mut cell = String::new();
        let mut prev = ' ';
        for c in l.chars() {
            if c == '|' && prev != '\\' {
                cells.push(std::mem::take(&mut cell));
            } else {
                cell.push(c);
            }
            prev = c;
        }
        let Some(msg) = cells.get(3) else {
            panic!("row without a message column: {l}");
        };
        keys.extend(
            msg.split('`')
                .skip(1)
                .step_by(2)
                .map(|k| k.replace("\\|", "|")),
        );
    }
    keys
}

fn covers(key: &str, t: &str) -> bool {
    if key == t {
        return true;
    }
    match key.strip_suffix('…') {
        Some(p) => p.chars().count() >= 3 && t.starts_with(p),
        None => false,
    }
}

/// The refusals without a row, and the rows without a refusal.
fn check(found: &[(String, String)], keys: &[String]) -> (Vec<String>, Vec<String>) {
    let missing = found
        .iter()
        .filter(|(_, t)| !keys.iter().any(|k| covers(k, t)))
        .map(|(place, t)| format!("{place}: '{t}'"))
        .collect();
    let stale = keys
        .iter()
        .filter(|k| !found.iter().any(|(_, t)| covers(k, t)))
        .cloned()
        .collect();
    (missing, stale)
}

fn source_refusals() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    for e in std::fs::read_dir(root.join("crates")).expect("crates dir") {
        let src = e.expect("dir entry").path().join("src");
        if src.is_dir() {
            rust_files(&src, &mut files);
        }
    }
    files.sort();
    let mut found = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read source");
        let name = f
            .strip_prefix(root)
            .expect("under the root")
            .display()
            .to_string();
        found.extend(refusals(&name, &text).unwrap_or_else(|e| panic!("{e}")));
    }
    found
}

#[test]
fn every_refusal_has_its_row_in_compatibility_md() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(root.join("docs/COMPATIBILITY.md")).expect("read doc");
    let found = source_refusals();
    assert!(
        found.len() > 100,
        "the scan found only {} refusals",
        found.len()
    );
    let (missing, stale) = check(&found, &doc_keys(&doc));
    assert!(
        missing.is_empty(),
        "refusals without a row in COMPATIBILITY.md \"{SECTION}\" (add the message \
         template, `…` for a placeholder, to a row's third column):\n{}",
        missing.join("\n")
    );
    assert!(
        stale.is_empty(),
        "rows of \"{SECTION}\" whose message no refusal in the source builds any more:\n{}",
        stale.join("\n")
    );
}

#[test]
fn the_scan_reads_each_shape_of_refusal() {
    let src = r#"
fn a() -> SqlResult<()> {
    if x { return Err(SqlError::unsupported("LIKE … ESCAPE")); }
    Err(SqlError::unsupported(format!(
        "column type {s} (use {{x}})"
    )))
}
fn b(p: &P) -> SqlResult<()> {
    let no = |what: &str| Err(SqlError::unsupported(what));
    if p.top { return no("TOP"); }
    if let Some(what) = pick(p) {
        return Err(SqlError::unsupported(what));
    }
    for (kind, what) in [("x", "SHOW X"), ("y", "SHOW (Y)")] {
        if p.kw(kind) { return Err(SqlError::unsupported(what)); }
    }
    let not_honoured = |what: &str| {
        Err(SqlError::unsupported(format!("{} = '{v}' ({what})", d.name)))
    };
    if p.v { return not_honoured(&format!("mode {m} is not implemented")); }
    Err(SqlError::unsupported(other.to_string()))
}
fn pick(p: &P) -> Option<&'static str> {
    match p.w {
        Some("z") => return Some("CREATE Z (zs)"),
        _ => {}
    }
    None
}
#[cfg(test)]
mod docs;
const M: &str = "This version of Tributary doesn't yet support 'NOWAIT on pg'";
#[cfg(test)]
mod tests {
    fn t() { SqlError::unsupported("only in a test"); }
}
"#;
    let mut got: Vec<String> = refusals("x.rs", src)
        .unwrap()
        .into_iter()
        .map(|(_, t)| t)
        .collect();
    got.sort();
    let want = [
        "CREATE Z (zs)",
        "LIKE … ESCAPE",
        "NOWAIT on pg",
        "SHOW (Y)",
        "SHOW X",
        "TOP",
        "column type … (use {x})",
        "mode … is not implemented",
        "…",
    ];
    assert_eq!(got, want);
    // A call of a shape no rule reads fails rather than being skipped.
    let odd = "fn c() { Err(SqlError::unsupported(reason_of(x))) }";
    assert!(refusals("y.rs", odd).unwrap_err().contains("y.rs:1"));
}

#[test]
fn a_refusal_without_a_row_or_a_row_without_a_refusal_is_reported() {
    let doc = format!(
        "# C\n{SECTION}\n| feature | code | message | instead |\n|---|---|---|---|\n\
         | a | 1235 | `column type …`, `LIKE … ESCAPE` | b |\n| gone | 1235 | `FOO` | x |\n\
         \n## Next\n| f | s | `not a key` | n |\n"
    );
    let keys = doc_keys(&doc);
    assert_eq!(keys, ["column type …", "LIKE … ESCAPE", "FOO"]);
    let found = vec![
        ("a.rs:1".to_string(), "column type VARBINARY(…)".to_string()),
        ("a.rs:2".to_string(), "LIKE … ESCAPE".to_string()),
        ("a.rs:3".to_string(), "LIKE ANY".to_string()),
    ];
    let (missing, stale) = check(&found, &keys);
    assert_eq!(missing, ["a.rs:3: 'LIKE ANY'"]);
    assert_eq!(stale, ["FOO"]);
    // `…` alone covers only an echoing refusal, not every template.
    assert!(!covers("…", "LIKE ANY"));
    assert!(covers("…", ECHO));
}
