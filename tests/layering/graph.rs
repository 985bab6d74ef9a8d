//! The import graph of the files of one module tree (`src/sql`), read from
//! the sources without compiling them: a node per file, an edge A → B when
//! A names an item of B by a path — `crate::sql::…`, `super::…`,
//! `self::…`, or a child module declared in A (`mod x;` … `x::f()`),
//! including `use` groups (`{a, b::c}`). A path is charged to the file that
//! defines its longest module prefix; a name that file only re-exports
//! (`pub use x::Y;`, or `pub use x::*;` when `x` defines `Y`) is followed
//! to the file it comes from, so a facade `mod.rs` is not a hub every
//! file passes through. `mod x;` itself is no edge, and comments, string
//! and char literals are blanked first.
//!
//! Never compiles, never expands macros: a path built inside `macro_rules!`
//! from fragments is invisible (none exist in `src/sql` today), and a
//! method call (`engine.in_txn(…)`) names no file — only paths do.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// How many re-exports one path may pass through, and how deep a `use`
/// group may nest, before the reader gives up (a guard, not a real limit).
const MAX_HOPS: usize = 16;
const MAX_GROUP_DEPTH: usize = 32;

/// One edge: `from` names `to` first at `line` (1-based) of `from`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub line: usize,
    pub text: String,
}

/// The graph of a set of files.
#[derive(Debug, Default)]
pub struct Graph {
    pub files: BTreeSet<String>,
    /// (from, to) → the first place `from` names `to`.
    pub edges: BTreeMap<(String, String), Edge>,
}

/// `src` with comments and string / char literals replaced by spaces;
/// newlines are kept, so line numbers stay true.
pub fn blank_comments_and_literals(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out: Vec<char> = Vec::with_capacity(c.len());
    let blank = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(k).copied().unwrap_or('\0');
        let prev_ident = i > 0 && ident(c[i - 1]);
        if c[i] == '/' && at(i + 1) == '/' {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c[i] == '/' && at(i + 1) == '*' {
            let mut depth = 0usize;
            loop {
                if i >= c.len() {
                    break;
                }
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    out.extend([' ', ' ']);
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    out.extend([' ', ' ']);
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
        } else if !prev_ident && (c[i] == 'r' || (c[i] == 'b' && at(i + 1) == 'r')) && {
            let mut k = i + if c[i] == 'b' { 2 } else { 1 };
            while at(k) == '#' {
                k += 1;
            }
            at(k) == '"'
        } {
            // A raw string: r"…", r#"…"#, br"…".
            let mut k = i + if c[i] == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while at(k) == '#' {
                hashes += 1;
                k += 1;
            }
            k += 1; // the opening quote
            loop {
                if k >= c.len() {
                    break;
                }
                if c[k] == '"' && (1..=hashes).all(|h| at(k + h) == '#') {
                    k += 1 + hashes;
                    break;
                }
                k += 1;
            }
            out.extend(c[i..k.min(c.len())].iter().map(|&ch| blank(ch)));
            i = k;
        } else if c[i] == '"' {
            out.push(' ');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < c.len() {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
            if i < c.len() {
                out.push(' ');
                i += 1;
            }
        } else if c[i] == '\'' && (at(i + 1) == '\\' || at(i + 2) == '\'') {
            // A char literal ('x', '\n', '\u{1F600}'); a lifetime has no
            // closing quote two places on and is kept.
            let mut k = i + 1;
            if at(k) == '\\' {
                k += 2;
                while k < c.len() && c[k] != '\'' {
                    k += 1;
                }
            } else {
                k += 1;
            }
            k = (k + 1).min(c.len());
            out.extend(c[i..k].iter().map(|&ch| blank(ch)));
            i = k;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out.into_iter().collect()
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Star,
    Other(char),
}

fn tokens(code: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch.is_alphabetic() || ch == '_' {
            let s = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[s..i].iter().collect();
            out.push((Tok::Ident(word), line));
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '.') {
                i += 1;
            }
            out.push((Tok::Other('0'), line));
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            out.push((
                match ch {
                    '{' => Tok::Open,
                    '}' => Tok::Close,
                    ',' => Tok::Comma,
                    '*' => Tok::Star,
                    o => Tok::Other(o),
                },
                line,
            ));
            i += 1;
        }
    }
    out
}

/// One path a file writes, expanded out of its `use` group.
#[derive(Debug, Clone)]
struct Written {
    /// The module the path is written in (the file's, plus inline `mod`s).
    scope: Vec<String>,
    segs: Vec<String>,
    line: usize,
    /// `Some(name)` when the path is re-exported (`pub use …` / `as name`).
    reexport_as: Option<String>,
}

/// Reads a `use` tree or an expression path starting at `toks[*i]`,
/// pushing each full path, its `as` alias and the line of its last
/// segment to `out`.
fn read_tree(
    toks: &[(Tok, usize)],
    i: &mut usize,
    prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, Option<String>, usize)>,
    depth: usize,
) {
    let mut prefix = prefix;
    let mut line = toks.get(*i).map_or(0, |t| t.1);
    if depth > MAX_GROUP_DEPTH {
        out.push((prefix, None, line));
        return;
    }
    loop {
        match toks.get(*i).map(|t| &t.0) {
            Some(Tok::Ident(s)) => {
                prefix.push(s.clone());
                line = toks[*i].1;
                *i += 1;
                match toks.get(*i).map(|t| &t.0) {
                    Some(Tok::PathSep) => *i += 1,
                    Some(Tok::Ident(a)) if a == "as" => {
                        let alias = match toks.get(*i + 1).map(|t| &t.0) {
                            Some(Tok::Ident(n)) => Some(n.clone()),
                            _ => None,
                        };
                        *i += 2;
                        out.push((prefix, alias, line));
                        return;
                    }
                    _ => {
                        out.push((prefix, None, line));
                        return;
                    }
                }
            }
            Some(Tok::Open) => {
                *i += 1;
                loop {
                    match toks.get(*i).map(|t| &t.0) {
                        Some(Tok::Close) => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Comma) => *i += 1,
                        Some(Tok::Ident(_)) | Some(Tok::Open) | Some(Tok::Star) => {
                            read_tree(toks, i, prefix.clone(), out, depth + 1)
                        }
                        _ => return, // malformed: stop reading this group
                    }
                }
            }
            Some(Tok::Star) => {
                *i += 1;
                prefix.push("*".to_string());
                out.push((prefix, None, line));
                return;
            }
            _ => {
                out.push((prefix, None, line));
                return;
            }
        }
    }
}

/// The paths `code` (already blanked) writes, read in module `file_mod`.
fn written_paths(file_mod: &[String], code: &str) -> (Vec<Written>, BTreeSet<String>) {
    let toks = tokens(code);
    let ident = |k: usize| match toks.get(k).map(|t| &t.0) {
        Some(Tok::Ident(s)) => Some(s.as_str()),
        _ => None,
    };
    let is = |k: usize, t: Tok| toks.get(k).map(|x| &x.0) == Some(&t);
    // Child modules declared by `mod x;` (not inline `mod x { … }`).
    let mut children = BTreeSet::new();
    for k in 0..toks.len() {
        if ident(k) == Some("mod") && is(k + 2, Tok::Other(';')) {
            if let Some(name) = ident(k + 1) {
                children.insert(name.to_string());
            }
        }
    }
    let mut out = Vec::new();
    let mut inline: Vec<(String, usize)> = Vec::new(); // (name, brace depth at `{`)
    let mut braces = 0usize;
    let mut k = 0;
    while k < toks.len() {
        match &toks[k].0 {
            Tok::Open => {
                braces += 1;
                k += 1;
                continue;
            }
            Tok::Close => {
                braces = braces.saturating_sub(1);
                if inline.last().is_some_and(|(_, d)| *d == braces) {
                    inline.pop();
                }
                k += 1;
                continue;
            }
            Tok::Ident(w) if w == "mod" => {
                if let (Some(name), true) = (ident(k + 1), is(k + 2, Tok::Open)) {
                    inline.push((name.to_string(), braces));
                    braces += 1;
                    k += 3;
                    continue;
                }
                k += 1;
                continue;
            }
            _ => {}
        }
        let starts = match ident(k) {
            Some("crate") | Some("super") | Some("self") => true,
            Some(w) => children.contains(w),
            None => false,
        };
        // Not the tail of a longer path, nor a visibility (`pub(in crate::x)`).
        let mid_path = k > 0 && (is(k - 1, Tok::PathSep) || ident(k - 1) == Some("in"));
        if !starts || mid_path || !is(k + 1, Tok::PathSep) {
            k += 1;
            continue;
        }
        // Is this the tree of a `pub use` (a re-export)?
        let mut reexport = false;
        if k > 0 && ident(k - 1) == Some("use") {
            let mut p = k - 1;
            if p > 0 && is(p - 1, Tok::Other(')')) {
                while p > 0 && !is(p - 1, Tok::Other('(')) {
                    p -= 1;
                }
                p = p.saturating_sub(1);
            }
            reexport = p > 0 && ident(p - 1) == Some("pub");
        }
        let mut scope = file_mod.to_vec();
        scope.extend(inline.iter().map(|(n, _)| n.clone()));
        let mut found = Vec::new();
        let mut i = k;
        read_tree(&toks, &mut i, Vec::new(), &mut found, 0);
        for (mut segs, alias, line) in found {
            if segs.last().is_some_and(|s| s == "self") && segs.len() > 1 {
                segs.pop();
            }
            let reexport_as = if reexport {
                alias.or_else(|| segs.last().cloned())
            } else {
                None
            };
            out.push(Written {
                scope: scope.clone(),
                segs,
                line,
                reexport_as,
            });
        }
        k = i.max(k + 1);
    }
    (out, children)
}

/// The names `code` (already blanked) defines as items: `fn x`,
/// `struct X`, `mod x`, … at any depth. Names of a test module count too:
/// at worst a path is then charged to a facade instead of the child it
/// re-exports — an edge too many, never one too few.
fn defined_names(code: &str) -> BTreeSet<String> {
    const ITEM: [&str; 9] = [
        "fn", "struct", "enum", "trait", "type", "const", "static", "union", "mod",
    ];
    let toks = tokens(code);
    toks.windows(2)
        .filter_map(|w| match (&w[0].0, &w[1].0) {
            (Tok::Ident(k), Tok::Ident(n)) if ITEM.contains(&k.as_str()) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

/// The absolute module path (below the tree's root) a written path names,
/// or `None` when it leaves the tree (`crate::catalog::…`).
fn absolute(
    root: &str,
    w: &Written,
    children: &BTreeSet<String>,
    file_mod: &[String],
) -> Option<Vec<String>> {
    let s = &w.segs;
    let first = s.first()?;
    match first.as_str() {
        "crate" => {
            if s.get(1).map(String::as_str) == Some(root) {
                Some(s[2..].to_vec())
            } else {
                None
            }
        }
        "super" | "self" => {
            let mut base = w.scope.clone();
            let mut k = 0;
            while s.get(k).map(String::as_str) == Some("super") {
                base.pop()?; // above the tree's root
                k += 1;
            }
            if k == 0 {
                k = 1; // `self`
            }
            base.extend(s[k..].iter().cloned());
            Some(base)
        }
        w0 if children.contains(w0) => {
            let mut base = file_mod.to_vec();
            base.extend(s.iter().cloned());
            Some(base)
        }
        _ => None,
    }
}

/// The module path of a file given by its path below the root, without
/// `.rs`: `mod` → root, `expr/collate` → [expr, collate], `plan/mod` → [plan].
pub fn module_of(file: &str) -> Vec<String> {
    let mut m: Vec<String> = file.split('/').map(str::to_string).collect();
    if m.last().is_some_and(|l| l == "mod") {
        m.pop();
    }
    m
}

/// Builds the graph of `files`: (name below the root without `.rs`, source).
/// `root` is the tree's module name under `crate` (`sql`).
pub fn build(root: &str, files: &[(String, String)]) -> Graph {
    let by_mod: BTreeMap<Vec<String>, String> = files
        .iter()
        .map(|(name, _)| (module_of(name), name.clone()))
        .collect();
    let owner = |abs: &[String]| -> Option<(String, usize)> {
        (0..=abs.len())
            .rev()
            .find_map(|n| by_mod.get(&abs[..n]).map(|f| (f.clone(), n)))
    };
    // Pass 1: every file's paths, and what it re-exports.
    let mut per_file = Vec::new();
    let mut reexports: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    // `pub use x::*;`: file → the modules it re-exports whole.
    let mut globs: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    let mut defined: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, src) in files {
        let code = blank_comments_and_literals(src);
        let fm = module_of(name);
        let (written, children) = written_paths(&fm, &code);
        defined.insert(name.clone(), defined_names(&code));
        let lines: Vec<String> = src.lines().map(|l| l.trim().to_string()).collect();
        let mut resolved = Vec::new();
        for w in &written {
            let abs = absolute(root, w, &children, &fm);
            match (&abs, &w.reexport_as) {
                (Some(a), Some(alias)) if alias == "*" => globs
                    .entry(name.clone())
                    .or_default()
                    .push(a[..a.len() - 1].to_vec()),
                (Some(a), Some(alias)) => {
                    reexports.insert((name.clone(), alias.clone()), a.clone());
                }
                _ => {}
            }
            resolved.push((abs, w.line));
        }
        per_file.push((name.clone(), resolved, lines));
    }
    // Pass 2: charge each path to its file, through re-exports.
    let mut g = Graph {
        files: files.iter().map(|(n, _)| n.clone()).collect(),
        ..Graph::default()
    };
    for (name, resolved, lines) in per_file {
        for (abs, line) in resolved {
            let Some(mut abs) = abs else { continue };
            let mut target = None;
            for _ in 0..MAX_HOPS {
                let Some((file, n)) = owner(&abs) else { break };
                target = Some(file.clone());
                let Some(item) = abs.get(n) else { break };
                let provides = |f: &str| {
                    defined.get(f).is_some_and(|d| d.contains(item))
                        || reexports.contains_key(&(f.to_string(), item.clone()))
                };
                // An item `file` re-exports by name, or — if it does not
                // define it — through one of its globs whose module does.
                let next = reexports
                    .get(&(file.clone(), item.clone()))
                    .cloned()
                    .or_else(|| {
                        if defined.get(&file).is_some_and(|d| d.contains(item)) {
                            return None;
                        }
                        globs.get(&file)?.iter().find_map(|m| {
                            let (g, k) = owner(m)?;
                            (k == m.len() && provides(&g)).then(|| {
                                let mut a = m.clone();
                                a.push(item.clone());
                                a
                            })
                        })
                    });
                match next {
                    Some(to) if to != abs => {
                        let mut a = to;
                        a.extend(abs[n + 1..].iter().cloned());
                        abs = a;
                    }
                    _ => break,
                }
            }
            let Some(to) = target else { continue };
            if to == name {
                continue;
            }
            g.edges
                .entry((name.clone(), to.clone()))
                .or_insert_with(|| Edge {
                    from: name.clone(),
                    to,
                    line,
                    text: lines.get(line - 1).cloned().unwrap_or_default(),
                });
        }
    }
    g
}

impl Graph {
    fn successors<'a>(&'a self, f: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.edges
            .keys()
            .filter(move |(a, _)| a == f)
            .map(|(_, b)| b.as_str())
    }

    /// The files `from` reaches by one or more edges.
    pub fn reach(&self, from: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut queue: VecDeque<&str> = self.successors(from).collect();
        while let Some(f) = queue.pop_front() {
            if seen.insert(f.to_string()) {
                queue.extend(self.successors(f));
            }
        }
        seen
    }

    /// The strongly connected sets of more than one file: the knots.
    pub fn knots(&self) -> Vec<BTreeSet<String>> {
        let reach: BTreeMap<&str, BTreeSet<String>> = self
            .files
            .iter()
            .map(|f| (f.as_str(), self.reach(f)))
            .collect();
        let mut done = BTreeSet::new();
        let mut out = Vec::new();
        for f in &self.files {
            if done.contains(f) || !reach[f.as_str()].contains(f) {
                continue;
            }
            let knot: BTreeSet<String> = reach[f.as_str()]
                .iter()
                .filter(|g| reach[g.as_str()].contains(f))
                .cloned()
                .collect();
            done.extend(knot.iter().cloned());
            out.push(knot);
        }
        out
    }

    /// One shortest cycle through `f` (its edges in order), if any.
    pub fn cycle_through(&self, f: &str) -> Option<Vec<&Edge>> {
        let mut parent: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue: VecDeque<&str> = VecDeque::from([f]);
        let mut visited = BTreeSet::from([f]);
        while let Some(x) = queue.pop_front() {
            for y in self.successors(x) {
                if y == f {
                    let mut path = vec![&self.edges[&(x.to_string(), f.to_string())]];
                    let mut cur = x;
                    while cur != f {
                        let p = parent[cur];
                        path.push(&self.edges[&(p.to_string(), cur.to_string())]);
                        cur = p;
                    }
                    path.reverse();
                    return Some(path);
                }
                if visited.insert(y) {
                    parent.insert(y, x);
                    queue.push_back(y);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(files: &[(&str, &str)]) -> Graph {
        let files: Vec<(String, String)> = files
            .iter()
            .map(|(n, s)| (n.to_string(), s.to_string()))
            .collect();
        build("sql", &files)
    }

    fn edges(g: &Graph) -> Vec<(&str, &str)> {
        g.edges
            .keys()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect()
    }

    #[test]
    fn a_cycle_is_found_and_reported_edge_by_edge() {
        let g = graph(&[
            ("mod", "pub mod a;\npub mod b;\npub mod c;\n"),
            ("a", "use crate::sql::b::f;\n"),
            ("b", "fn g() { crate::sql::c::h() }\n"),
            ("c", "use super::a;\n"),
        ]);
        let knots = g.knots();
        assert_eq!(knots.len(), 1, "{knots:?}");
        let knot: Vec<&str> = knots[0].iter().map(String::as_str).collect();
        assert_eq!(knot, ["a", "b", "c"]);
        let cycle = g.cycle_through("a").unwrap();
        let hops: Vec<(&str, &str, usize)> = cycle
            .iter()
            .map(|e| (e.from.as_str(), e.to.as_str(), e.line))
            .collect();
        assert_eq!(hops, [("a", "b", 1), ("b", "c", 1), ("c", "a", 1)]);
        assert_eq!(cycle[2].text, "use super::a;");
    }

    #[test]
    fn a_dag_has_no_knot() {
        let g = graph(&[
            ("mod", "mod a;\nmod b;\nuse a::X;\nfn f() { b::g() }\n"),
            ("a", "use crate::sql::b::Y;\n"),
            ("b", "use crate::catalog::TableDef;\n"),
        ]);
        assert_eq!(edges(&g), [("a", "b"), ("mod", "a"), ("mod", "b")]);
        assert!(g.knots().is_empty());
    }

    #[test]
    fn a_mod_declaration_or_a_visibility_is_not_an_edge() {
        let g = graph(&[
            ("mod", "pub mod a;\npub(crate) mod b;\n"),
            ("a", "mod inner { }\npub(in crate::sql) fn g() {}\n"),
            ("b", ""),
        ]);
        assert!(g.edges.is_empty(), "{:?}", g.edges);
    }

    #[test]
    fn comments_and_literals_are_not_edges() {
        let g = graph(&[
            ("mod", ""),
            (
                "a",
                "// use crate::sql::b;\n/* crate::sql::b::f() /* nested */ crate::sql::b */\n\
                 /// [`crate::sql::b::f`]\nconst S: &str = \"crate::sql::b::f\";\n\
                 const R: &str = r#\"super::b::x \"quoted\"\"#;\nconst C: char = '\"';\n\
                 fn f<'a>(x: &'a str) -> char { '\\'' }\n",
            ),
            ("b", ""),
        ]);
        assert!(g.edges.is_empty(), "{:?}", g.edges);
    }

    #[test]
    fn a_path_after_a_lifetime_and_a_char_is_still_read() {
        let g = graph(&[
            ("mod", ""),
            (
                "a",
                "fn f<'a>(x: &'a str) { let q = '\\''; crate::sql::b::g(q) }\n",
            ),
            ("b", ""),
        ]);
        assert_eq!(edges(&g), [("a", "b")]);
    }

    #[test]
    fn use_groups_are_expanded() {
        let g = graph(&[
            ("mod", "pub struct Ctx;\n"),
            (
                "a",
                "use crate::{\n    catalog::X,\n    sql::{b::{self, f}, c::g as h, Ctx},\n};\n",
            ),
            ("b", ""),
            ("c", ""),
        ]);
        assert_eq!(edges(&g), [("a", "b"), ("a", "c"), ("a", "mod")]);
        assert_eq!(g.edges[&("a".into(), "c".into())].line, 3);
    }

    #[test]
    fn super_in_an_inline_test_module_is_the_file_itself() {
        let g = graph(&[
            ("mod", ""),
            ("a", "fn f() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::super::b;\n}\n"),
            ("b", ""),
        ]);
        assert_eq!(edges(&g), [("a", "b")]);
    }

    #[test]
    fn submodule_files_and_their_parent() {
        let g = graph(&[
            ("mod", ""),
            ("x", "mod y;\npub fn f() { y::g() }\n"),
            (
                "x/y",
                "pub fn g() { super::h() }\nfn k() { super::super::z::q() }\n",
            ),
            ("z", ""),
        ]);
        assert_eq!(edges(&g), [("x", "x/y"), ("x/y", "x"), ("x/y", "z")]);
        assert_eq!(g.knots().len(), 1);
    }

    #[test]
    fn a_reexport_is_followed_to_the_defining_file() {
        let g = graph(&[
            (
                "mod",
                "mod a;\nmod s;\npub use s::{Ctx, Engine as E};\nuse a::f;\n",
            ),
            ("s", "pub struct Ctx;\npub struct Engine;\n"),
            ("a", "use crate::sql::{Ctx, E};\npub fn f() {}\n"),
        ]);
        // `a` names `s` through the facade, not `mod`: no knot.
        assert_eq!(edges(&g), [("a", "s"), ("mod", "a"), ("mod", "s")]);
        assert!(g.knots().is_empty());
    }

    #[test]
    fn a_directory_module_facade_is_seen_through() {
        let g = graph(&[
            ("mod", "pub mod p;\n"),
            ("p/mod", "mod node;\npub(crate) use self::node::Node;\n"),
            ("p/node", "pub struct Node;\n"),
            ("a", "fn f(n: crate::sql::p::Node) {}\n"),
        ]);
        assert_eq!(edges(&g), [("a", "p/node"), ("p/mod", "p/node")]);
    }

    #[test]
    fn a_glob_reexport_is_followed_to_the_module_defining_the_name() {
        let g = graph(&[
            ("mod", "pub mod p;\n"),
            (
                "p/mod",
                "mod a;\nmod b;\npub use self::a::*;\npub use b::*;\npub fn own() {}\n",
            ),
            ("p/a", "pub struct Node;\n"),
            (
                "p/b",
                "pub(crate) fn build() -> super::Node { super::Node }\n",
            ),
            (
                "c",
                "fn f() { crate::sql::p::build(); crate::sql::p::own(); }\n",
            ),
        ]);
        // b names p::Node, which p/mod.rs only re-exports from a: no cycle
        // b → p/mod → b.
        assert_eq!(
            edges(&g),
            [
                ("c", "p/b"),
                ("c", "p/mod"),
                ("p/b", "p/a"),
                ("p/mod", "p/a"),
                ("p/mod", "p/b")
            ]
        );
        assert!(g.knots().is_empty());
    }

    #[test]
    fn a_crate_path_outside_the_tree_is_no_edge() {
        let g = graph(&[
            ("mod", ""),
            ("a", "use crate::catalog::sql::b;\nuse crate::sqlx::b;\nfn f() { self::g() }\nfn g() {}\n"),
            ("b", ""),
        ]);
        assert!(g.edges.is_empty(), "{:?}", g.edges);
    }
}
