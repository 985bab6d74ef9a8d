//! Full-text index: an in-memory tantivy index (BM25) over `n` text fields, keyed by `u64`.
//!
//! Owns: the schema (`key` u64 indexed+fast, `f0..f{n-1}` text with positions), the two
//! analyzers ([`Parser::Default`]: split on non-alphanumerics, drop tokens over 40 bytes,
//! lowercase; [`Parser::Ngram`]: lowercase, split on non-alphanumerics, then all 2- and
//! 3-character grams of every word — words of one character are kept whole), translation
//! of `MATCH … AGAINST` queries (natural and MySQL boolean mode) into tantivy queries,
//! BM25 scoring of documents that are not in an index against its statistics
//! ([`FullTextIndex::search_with_extra`], [`score_documents`]), a reference matcher with
//! identical semantics written without tantivy ([`FullTextIndex::matches_text`], the
//! oracle of the tests), and the byte format of [`FullTextIndex::to_bytes`].
//!
//! Must never: touch files (tantivy runs on a `RamDirectory`), know about SQL or
//! transactions, or hand unchecked bytes to tantivy — [`FullTextIndex::from_bytes`]
//! verifies magic, version and checksum first.
//!
//! ## Query semantics
//! - **Natural**: the query is analyzed into terms; a row matches when any field contains
//!   any term (OR); score = BM25 (k1 = 1.2, b = 0.75) summed over matching (field, term)
//!   pairs. Documents scored beside an index (rows it has not applied yet) are scored
//!   against the sum of its statistics and theirs, exactly as if they had been indexed.
//! - **Boolean** (MySQL subset): clauses separated by whitespace, each optionally
//!   prefixed by `+` (must), `-` (must not), or `~ < >` (treated as plain "should").
//!   An atom is a word, a word ending in `*` (prefix), a `"quoted phrase"` or a
//!   parenthesised group. If any `+` clause exists, rows must match all of them and
//!   plain clauses only add score; otherwise at least one plain clause must match. `-`
//!   clauses exclude. A query with only `-` clauses matches nothing (as in MySQL).
//!   An atom matches a row when one field matches it entirely: a word or phrase that
//!   analyzes to several tokens is a phrase (consecutive positions). Under the ngram
//!   parser a word or phrase is a phrase of its 2-grams, i.e. a substring match (`tab`
//!   matches `database`; the gap between words counts as one position whatever the
//!   separator). Default-parser prefix atom (`word*`): the last token is a prefix and
//!   the others must be present (positions ignored); under the ngram parser `*` only
//!   matters after a one-character word.
//!   Unbalanced quotes or parentheses, doubled operators and `@distance` are
//!   [`IndexError::Query`].
//!
//! ## Durability of buffered operations
//! `upsert` / `remove` are buffered in a lazily created tantivy writer until
//! [`FullTextIndex::commit`]; the writer (and its threads) is dropped after each commit,
//! so idle indexes hold no threads. A failed commit discards the buffered operations;
//! the caller replays them (ISCP re-reads changes from its watermark).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Bound;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tantivy::collector::{Count, TopDocs};
use tantivy::directory::{Directory, RamDirectory};
use tantivy::query::{
    Bm25StatisticsProvider, BooleanQuery, Occur, PhraseQuery, Query, RegexQuery, TermQuery,
};
use tantivy::schema::{
    Field, FieldType, IndexRecordOption, NumericOptions, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{
    LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer, Token, TokenStream, Tokenizer,
};
use tantivy::{
    Index, IndexReader, IndexWriter, ReloadPolicy, Searcher, SingleSegmentIndexWriter,
    TantivyDocument, Term,
};

use crate::codec::{self, Reader};
use crate::{IndexError, Result};

const MAGIC: &[u8; 8] = b"TRIBFTS\0";
const FORMAT_VERSION: u32 = 1;
const KEY_FIELD: &str = "key";
const TOKENIZER_DEFAULT: &str = "trib_default";
const TOKENIZER_NGRAM: &str = "trib_ngram";
/// Memory budget of each thread of the tantivy writer; tantivy's minimum is 15 MB.
const WRITER_MEMORY_BUDGET: usize = 32_000_000;
/// Most indexing threads [`FullTextIndex::set_writer_threads`] gives a writer
/// (each takes [`WRITER_MEMORY_BUDGET`]).
const MAX_WRITER_THREADS: usize = 8;
/// Smallest memory budget of a throwaway scoring index (tantivy sizes its term table by it).
const SCRATCH_MIN_BUDGET: usize = 1 << 20;
/// Longest token kept by the default analyzer, in bytes.
const MAX_TOKEN_BYTES: usize = 40;
const NGRAM_MIN: usize = 2;
const NGRAM_MAX: usize = 3;
/// Deepest parenthesis nesting accepted in boolean mode.
const MAX_GROUP_DEPTH: usize = 32;
/// Upper bound on the number of text fields of one index.
const MAX_FIELDS: usize = 1024;

/// Text analyzer of a full-text index (`WITH PARSER …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Parser {
    /// Words split on non-alphanumeric characters, lowercased.
    Default,
    /// 2- and 3-character grams of each lowercased word (for CJK and substring search).
    Ngram,
}

impl Parser {
    /// Parses a parser name: `default` (or empty) or `ngram`, case-insensitive.
    pub fn from_name(name: &str) -> Result<Parser> {
        match name.trim().to_ascii_lowercase().as_str() {
            "" | "default" => Ok(Parser::Default),
            "ngram" => Ok(Parser::Ngram),
            other => Err(IndexError::InvalidOptions(format!(
                "unknown full-text parser {other:?} (expected default or ngram)"
            ))),
        }
    }

    /// The name accepted by [`Parser::from_name`].
    pub fn name(self) -> &'static str {
        match self {
            Parser::Default => "default",
            Parser::Ngram => "ngram",
        }
    }

    fn tokenizer_name(self) -> &'static str {
        match self {
            Parser::Default => TOKENIZER_DEFAULT,
            Parser::Ngram => TOKENIZER_NGRAM,
        }
    }

    fn analyzer(self) -> TextAnalyzer {
        match self {
            Parser::Default => TextAnalyzer::builder(SimpleTokenizer::default())
                .filter(RemoveLongFilter::limit(MAX_TOKEN_BYTES))
                .filter(LowerCaser)
                .build(),
            Parser::Ngram => TextAnalyzer::from(WordNgramTokenizer),
        }
    }
}

/// A `search` limit up to which the collector is sized by the request
/// alone (counting the matches first would cost more than it saves).
const SMALL_LIMIT: usize = 1024;

/// `MATCH … AGAINST (… IN NATURAL LANGUAGE MODE | IN BOOLEAN MODE)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatchMode {
    /// OR of the analyzed terms.
    Natural,
    /// MySQL boolean syntax subset (see module docs).
    Boolean,
}

/// [`FullTextIndex::matches_text`] for `parser` without an index: the exact
/// matcher the SQL layer uses for rows the index has not seen (its fresh
/// tail) and when no index path is taken, so every row of a query gets
/// the index's semantics. A malformed boolean query matches nothing (see
/// [`check_boolean`]).
pub fn matches_text_with(
    parser: Parser,
    fields: &[Option<&str>],
    query: &str,
    mode: MatchMode,
) -> bool {
    let mut analyzer = parser.analyzer();
    let docs: Vec<Vec<(usize, String)>> = fields
        .iter()
        .flatten()
        .map(|t| tokens_with_positions(&mut analyzer, t))
        .collect();
    match mode {
        MatchMode::Natural => {
            let q: HashSet<String> = tokens_with_positions(&mut analyzer, query)
                .into_iter()
                .map(|(_, t)| t)
                .collect();
            docs.iter().flatten().any(|(_, t)| q.contains(t))
        }
        MatchMode::Boolean => {
            let Ok(raw) = parse_boolean(query) else {
                return false;
            };
            let clauses = analyze(&mut analyzer, raw);
            let sets: Vec<BTreeSet<&str>> = docs
                .iter()
                .map(|d| d.iter().map(|(_, t)| t.as_str()).collect())
                .collect();
            let atom_ok = |atom: &Atom| -> bool {
                let Atom::Terms { tokens, prefix } = atom else {
                    return false;
                };
                let Some(plan) = AtomPlan::new(parser, tokens, *prefix) else {
                    return false;
                };
                docs.iter()
                    .zip(&sets)
                    .any(|(doc, set)| plan.matches(doc, set))
            };
            eval_clauses(&clauses, &atom_ok)
        }
    }
}

/// Whether `query` is a well-formed boolean-mode query: what `search`
/// accepts (unbalanced quotes or parentheses, doubled operators and
/// `@distance` are refused with [`IndexError::Query`]).
pub fn check_boolean(query: &str) -> Result<()> {
    parse_boolean(query).map(|_| ())
}

/// Tokenizes `text` with `parser`'s analyzer (what the index stores and searches).
pub fn tokenize_with(parser: Parser, text: &str) -> Vec<String> {
    tokens_with_positions(&mut parser.analyzer(), text)
        .into_iter()
        .map(|(_, t)| t)
        .collect()
}

fn tokens_with_positions(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut ts = analyzer.token_stream(text);
    while ts.advance() {
        let t = ts.token();
        out.push((t.position, t.text.clone()));
    }
    out
}

// ---------------------------------------------------------------------------------------
// Ngram tokenizer

/// Lowercases, splits on non-alphanumeric characters, and emits every gram of
/// `NGRAM_MIN..=NGRAM_MAX` characters of each word (words shorter than `NGRAM_MIN` are
/// emitted whole). Unlike tantivy's `NgramTokenizer` it never builds grams across word
/// boundaries.
#[derive(Clone, Default)]
struct WordNgramTokenizer;

struct VecTokenStream {
    tokens: Vec<Token>,
    /// Number of `advance` calls so far; the current token is `tokens[cursor - 1]`.
    cursor: usize,
    empty: Token,
}

impl TokenStream for VecTokenStream {
    fn advance(&mut self) -> bool {
        if self.cursor < self.tokens.len() {
            self.cursor += 1;
            true
        } else {
            self.cursor = self.tokens.len() + 1;
            false
        }
    }

    fn token(&self) -> &Token {
        self.cursor
            .checked_sub(1)
            .and_then(|i| self.tokens.get(i))
            .unwrap_or(&self.empty)
    }

    fn token_mut(&mut self) -> &mut Token {
        match self.cursor.checked_sub(1) {
            Some(i) if i < self.tokens.len() => &mut self.tokens[i],
            _ => &mut self.empty,
        }
    }
}

impl Tokenizer for WordNgramTokenizer {
    type TokenStream<'a> = VecTokenStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> VecTokenStream {
        let mut tokens = Vec::new();
        let mut word: Vec<(usize, char)> = Vec::new();
        // Position of a gram = position of the word's first character + offset of the
        // gram's first character in the word; consecutive words are one position apart
        // (whatever separates them), so 2-grams at consecutive positions spell out
        // contiguous text and phrase queries work on grams.
        let mut word_pos = 0usize;
        let mut flush = |word: &mut Vec<(usize, char)>, tokens: &mut Vec<Token>| {
            if word.is_empty() {
                return;
            }
            let end_of = |i: usize| -> usize {
                let (off, c) = word[i];
                off + c.len_utf8()
            };
            let n = word.len();
            if n < NGRAM_MIN {
                push_token(tokens, text, word[0].0, end_of(n - 1), word_pos);
            } else {
                for (start, &(from, _)) in word.iter().enumerate() {
                    for len in NGRAM_MIN..=NGRAM_MAX {
                        if start + len > n {
                            break;
                        }
                        push_token(
                            tokens,
                            text,
                            from,
                            end_of(start + len - 1),
                            word_pos + start,
                        );
                    }
                }
            }
            word_pos += n + 1;
            word.clear();
        };
        for (off, c) in text.char_indices() {
            if c.is_alphanumeric() {
                word.push((off, c));
            } else {
                flush(&mut word, &mut tokens);
            }
        }
        flush(&mut word, &mut tokens);
        VecTokenStream {
            tokens,
            cursor: 0,
            empty: Token::default(),
        }
    }
}

fn push_token(tokens: &mut Vec<Token>, text: &str, from: usize, to: usize, position: usize) {
    let Some(slice) = text.get(from..to) else {
        return;
    };
    tokens.push(Token {
        offset_from: from,
        offset_to: to,
        position,
        text: slice.to_lowercase(),
        position_length: 1,
    });
}

// ---------------------------------------------------------------------------------------
// Boolean-mode query parsing

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Occ {
    Must,
    MustNot,
    Should,
}

#[derive(Debug)]
enum RawAtom {
    Word { text: String, prefix: bool },
    Phrase(String),
    Group(Vec<(Occ, RawAtom)>),
}

/// Analyzed query tree shared by the tantivy translation and the exact matcher.
#[derive(Debug)]
enum Atom {
    /// Tokens (with query positions); `prefix`: the last token is a prefix.
    Terms {
        tokens: Vec<(usize, String)>,
        prefix: bool,
    },
    Group(Vec<(Occ, Atom)>),
}

fn parse_boolean(query: &str) -> Result<Vec<(Occ, RawAtom)>> {
    let chars: Vec<char> = query.chars().collect();
    let mut pos = 0usize;
    let clauses = parse_group(&chars, &mut pos, 0)?;
    if pos < chars.len() {
        return Err(IndexError::Query(format!(
            "unbalanced ')' at character {pos}"
        )));
    }
    Ok(clauses)
}

fn is_op(c: char) -> bool {
    matches!(c, '+' | '-' | '~' | '<' | '>')
}

fn parse_group(chars: &[char], pos: &mut usize, depth: usize) -> Result<Vec<(Occ, RawAtom)>> {
    if depth > MAX_GROUP_DEPTH {
        return Err(IndexError::Query(format!(
            "parentheses nested deeper than {MAX_GROUP_DEPTH}"
        )));
    }
    let mut clauses = Vec::new();
    loop {
        while *pos < chars.len() && chars[*pos].is_whitespace() {
            *pos += 1;
        }
        let Some(&c) = chars.get(*pos) else {
            if depth > 0 {
                return Err(IndexError::Query("unbalanced '('".into()));
            }
            return Ok(clauses);
        };
        if c == ')' {
            if depth == 0 {
                return Ok(clauses); // caller reports the stray ')'
            }
            *pos += 1;
            return Ok(clauses);
        }
        let mut occ = Occ::Should;
        if is_op(c) {
            occ = match c {
                '+' => Occ::Must,
                '-' => Occ::MustNot,
                _ => Occ::Should,
            };
            *pos += 1;
            match chars.get(*pos) {
                Some(&n) if is_op(n) => {
                    return Err(IndexError::Query(format!(
                        "doubled operator '{c}{n}' at character {}",
                        *pos - 1
                    )))
                }
                // A lone operator applies to nothing.
                None => continue,
                Some(n) if n.is_whitespace() => continue,
                _ => {}
            }
        }
        let Some(&c) = chars.get(*pos) else {
            continue;
        };
        match c {
            '"' => {
                let start = *pos + 1;
                let Some(len) = chars[start..].iter().position(|&x| x == '"') else {
                    return Err(IndexError::Query("unterminated '\"'".into()));
                };
                let text: String = chars[start..start + len].iter().collect();
                *pos = start + len + 1;
                clauses.push((occ, RawAtom::Phrase(text)));
            }
            '(' => {
                *pos += 1;
                let inner = parse_group(chars, pos, depth + 1)?;
                clauses.push((occ, RawAtom::Group(inner)));
            }
            '@' => {
                return Err(IndexError::Query(
                    "the '@distance' operator is not supported".into(),
                ))
            }
            ')' => {
                if depth == 0 {
                    return Ok(clauses);
                }
                // e.g. "(a +)": operator without atom.
                continue;
            }
            _ => {
                let start = *pos;
                while *pos < chars.len() {
                    let x = chars[*pos];
                    if x.is_whitespace() || x == '"' || x == '(' || x == ')' {
                        break;
                    }
                    *pos += 1;
                }
                let mut text: String = chars[start..*pos].iter().collect();
                let prefix = text.ends_with('*');
                while text.ends_with('*') {
                    text.pop();
                }
                clauses.push((occ, RawAtom::Word { text, prefix }));
            }
        }
    }
}

/// Analyzes raw atoms; atoms that produce no token are dropped.
fn analyze(analyzer: &mut TextAnalyzer, raw: Vec<(Occ, RawAtom)>) -> Vec<(Occ, Atom)> {
    let mut out = Vec::new();
    for (occ, atom) in raw {
        let atom = match atom {
            RawAtom::Word { text, prefix } => Atom::Terms {
                tokens: tokens_with_positions(analyzer, &text),
                prefix,
            },
            RawAtom::Phrase(text) => Atom::Terms {
                tokens: tokens_with_positions(analyzer, &text),
                prefix: false,
            },
            RawAtom::Group(inner) => Atom::Group(analyze(analyzer, inner)),
        };
        let empty = match &atom {
            Atom::Terms { tokens, .. } => tokens.is_empty(),
            Atom::Group(c) => c.is_empty(),
        };
        if !empty {
            out.push((occ, atom));
        }
    }
    out
}

fn escape_regex(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 4);
    for c in s.chars() {
        if !c.is_alphanumeric() {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Boolean evaluation shared by the exact matcher: `atom_ok` decides single atoms.
fn eval_clauses(clauses: &[(Occ, Atom)], atom_ok: &dyn Fn(&Atom) -> bool) -> bool {
    let mut has_must = false;
    let mut any_should = false;
    let mut has_positive = false;
    for (occ, atom) in clauses {
        let ok = match atom {
            Atom::Group(inner) => eval_clauses(inner, atom_ok),
            a => atom_ok(a),
        };
        match occ {
            Occ::Must => {
                has_must = true;
                has_positive = true;
                if !ok {
                    return false;
                }
            }
            Occ::MustNot => {
                if ok {
                    return false;
                }
            }
            Occ::Should => {
                has_positive = true;
                any_should |= ok;
            }
        }
    }
    has_positive && (has_must || any_should)
}

// ---------------------------------------------------------------------------------------
// The index

#[derive(Debug, Serialize, Deserialize)]
struct BlobHeader {
    n_fields: usize,
    parser: Parser,
}

/// The files of one commit of a [`FullTextIndex`], held by reference
/// ([`FullTextIndex::snapshot_files`]).
pub struct FullTextSnapshot {
    header: Vec<u8>,
    files: Vec<(String, tantivy::directory::FileSlice)>,
}

impl FullTextSnapshot {
    /// The checksummed blob [`FullTextIndex::from_bytes`] reads.
    pub fn into_bytes(self) -> Result<Vec<u8>> {
        let mut payload = Vec::new();
        codec::put_bytes(&mut payload, &self.header);
        payload.extend_from_slice(&(self.files.len() as u64).to_le_bytes());
        for (name, slice) in &self.files {
            let data = slice.read_bytes().map_err(tantivy::TantivyError::from)?;
            codec::put_bytes(&mut payload, name.as_bytes());
            codec::put_bytes(&mut payload, data.as_slice());
        }
        Ok(codec::seal(MAGIC, FORMAT_VERSION, &payload))
    }
}

/// An in-memory BM25 full-text index over `n_fields` text fields, keyed by `u64`.
/// `Send + Sync`: searches take `&self`; mutations take `&mut self`.
pub struct FullTextIndex {
    n_fields: usize,
    parser: Parser,
    index: Index,
    /// The directory `index` lives in: its files as written, footers
    /// included (`index.directory()` strips them when reading).
    ram: RamDirectory,
    reader: IndexReader,
    writer: Option<IndexWriter<TantivyDocument>>,
    /// Indexing threads of `writer`, and of the next writer
    /// ([`set_writer_threads`](Self::set_writer_threads)).
    writer_threads: (usize, usize),
    /// Buffered operations not yet committed.
    pending: bool,
    key_field: Field,
    text_fields: Vec<Field>,
    analyzer: TextAnalyzer,
}

impl std::fmt::Debug for FullTextIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FullTextIndex")
            .field("n_fields", &self.n_fields)
            .field("parser", &self.parser)
            .field("len", &self.len())
            .field("pending_writes", &self.writer.is_some())
            .finish()
    }
}

fn text_field_name(i: usize) -> String {
    format!("f{i}")
}

fn build_schema(n_fields: usize, parser: Parser) -> Schema {
    let mut b = Schema::builder();
    b.add_u64_field(
        KEY_FIELD,
        NumericOptions::default().set_indexed().set_fast(),
    );
    let text = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_tokenizer(parser.tokenizer_name())
            .set_index_option(IndexRecordOption::WithFreqsAndPositions),
    );
    for i in 0..n_fields {
        b.add_text_field(&text_field_name(i), text.clone());
    }
    b.build()
}

impl FullTextIndex {
    /// Creates an empty index over `n_fields` (≥ 1) text fields.
    pub fn new(n_fields: usize, parser: Parser) -> Result<Self> {
        if n_fields == 0 || n_fields > MAX_FIELDS {
            return Err(IndexError::InvalidOptions(format!(
                "a full-text index needs 1..={MAX_FIELDS} fields, got {n_fields}"
            )));
        }
        let ram = RamDirectory::create();
        let index = Index::builder()
            .schema(build_schema(n_fields, parser))
            .open_or_create(ram.clone())?;
        Self::from_index(index, ram, n_fields, parser)
    }

    /// `ram` is the directory `index` lives in (its raw files, for
    /// [`snapshot_files`](Self::snapshot_files)).
    fn from_index(
        index: Index,
        ram: RamDirectory,
        n_fields: usize,
        parser: Parser,
    ) -> Result<Self> {
        index
            .tokenizers()
            .register(parser.tokenizer_name(), parser.analyzer());
        let schema = index.schema();
        let key_field = schema
            .get_field(KEY_FIELD)
            .map_err(|e| IndexError::Corrupt(format!("schema: {e}")))?;
        if !matches!(
            schema.get_field_entry(key_field).field_type(),
            FieldType::U64(_)
        ) {
            return Err(IndexError::Corrupt("schema: key field is not u64".into()));
        }
        let mut text_fields = Vec::with_capacity(n_fields);
        for i in 0..n_fields {
            let f = schema
                .get_field(&text_field_name(i))
                .map_err(|e| IndexError::Corrupt(format!("schema: {e}")))?;
            match schema.get_field_entry(f).field_type() {
                FieldType::Str(opts)
                    if opts
                        .get_indexing_options()
                        .is_some_and(|o| o.tokenizer() == parser.tokenizer_name()) => {}
                _ => {
                    return Err(IndexError::Corrupt(format!(
                        "schema: field f{i} is not a text field analyzed by {}",
                        parser.name()
                    )))
                }
            }
            text_fields.push(f);
        }
        if schema.num_fields() != n_fields + 1 {
            return Err(IndexError::Corrupt(format!(
                "schema has {} fields, expected {}",
                schema.num_fields(),
                n_fields + 1
            )));
        }
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Self {
            n_fields,
            parser,
            index,
            ram,
            reader,
            writer: None,
            writer_threads: (1, 1),
            pending: false,
            key_field,
            text_fields,
            analyzer: parser.analyzer(),
        })
    }

    /// Number of text fields.
    pub fn n_fields(&self) -> usize {
        self.n_fields
    }

    /// The analyzer of this index.
    pub fn parser(&self) -> Parser {
        self.parser
    }

    /// Bytes the index's committed segments take in memory (its RAM
    /// directory; the writer's indexing arena is bounded separately).
    pub fn memory_usage(&self) -> usize {
        self.ram.total_mem_usage()
    }

    /// Number of live documents visible to searches (as of the last commit).
    pub fn len(&self) -> usize {
        usize::try_from(self.reader.searcher().num_docs()).unwrap_or(usize::MAX)
    }

    /// True when no committed live document exists.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when upserts/removes are buffered and not yet committed.
    pub fn has_pending(&self) -> bool {
        self.pending
    }

    /// How many threads index documents from now on (1 by default): a
    /// build uses several (`examples/fulltext_writer_threads.rs`: 2 threads
    /// index 1.4× faster than one), steady small batches one, since each
    /// thread that received documents writes its own segment at a commit.
    /// A writer with other threads is replaced once nothing is buffered.
    pub fn set_writer_threads(&mut self, n: usize) {
        self.writer_threads.1 = n.clamp(1, MAX_WRITER_THREADS);
    }

    fn writer(&mut self) -> Result<&IndexWriter<TantivyDocument>> {
        let (now, wanted) = self.writer_threads;
        if self.writer.is_some() && now != wanted && !self.pending {
            // Nothing buffered: dropping the writer loses nothing (its
            // merges stop; the next commit's merge policy starts them again).
            self.writer = None;
        }
        if self.writer.is_none() {
            let w = self
                .index
                .writer_with_num_threads(wanted, WRITER_MEMORY_BUDGET * wanted)?;
            self.writer = Some(w);
            self.writer_threads.0 = wanted;
        }
        match &self.writer {
            Some(w) => Ok(w),
            None => Err(IndexError::FullText(tantivy::TantivyError::InternalError(
                "writer vanished".into(),
            ))),
        }
    }

    /// Replaces the document under `key` (buffered until [`commit`](Self::commit)).
    /// `fields` must have exactly `n_fields` entries; `None` fields are not indexed.
    pub fn upsert(&mut self, key: u64, fields: &[Option<&str>]) -> Result<()> {
        if fields.len() != self.n_fields {
            return Err(IndexError::InvalidDocument(format!(
                "expected {} fields, got {}",
                self.n_fields,
                fields.len()
            )));
        }
        let mut doc = TantivyDocument::default();
        doc.add_u64(self.key_field, key);
        for (f, v) in self.text_fields.iter().zip(fields) {
            if let Some(v) = v {
                doc.add_text(*f, v);
            }
        }
        let term = Term::from_field_u64(self.key_field, key);
        let w = self.writer()?;
        w.delete_term(term);
        w.add_document(doc)?;
        self.pending = true;
        Ok(())
    }

    /// Removes the document under `key`, if any (buffered until commit).
    pub fn remove(&mut self, key: u64) -> Result<()> {
        let term = Term::from_field_u64(self.key_field, key);
        self.writer()?.delete_term(term);
        self.pending = true;
        Ok(())
    }

    /// Makes buffered operations searchable. The writer is kept for the next
    /// batch (creating one per commit cost more than the indexing of a
    /// small batch); merges continue in the background. [`release`](Self::release)
    /// waits for them and frees the writer.
    pub fn commit(&mut self) -> Result<()> {
        if let Some(w) = self.writer.as_mut() {
            if self.pending {
                w.commit()?;
                self.reader.reload()?;
                self.pending = false;
            }
        }
        Ok(())
    }

    /// Commit, wait for every segment merge, and drop the writer (its thread
    /// and memory arena), leaving the index quiescent.
    pub fn release(&mut self) -> Result<()> {
        if let Some(mut w) = self.writer.take() {
            w.commit()?;
            w.wait_merging_threads()?;
            self.reader.reload()?;
            self.pending = false;
        }
        Ok(())
    }

    fn build_query(&self, query: &str, mode: MatchMode) -> Result<Option<Box<dyn Query>>> {
        let mut analyzer = self.analyzer.clone();
        match mode {
            MatchMode::Natural => {
                let mut seen = HashSet::new();
                let mut clauses: Vec<(Occur, Box<dyn Query>)> = Vec::new();
                for (_, tok) in tokens_with_positions(&mut analyzer, query) {
                    if !seen.insert(tok.clone()) {
                        continue;
                    }
                    for f in &self.text_fields {
                        clauses.push((Occur::Should, self.term_query(*f, &tok)));
                    }
                }
                if clauses.is_empty() {
                    return Ok(None);
                }
                Ok(Some(Box::new(BooleanQuery::new(clauses))))
            }
            MatchMode::Boolean => {
                let clauses = analyze(&mut analyzer, parse_boolean(query)?);
                self.group_query(&clauses)
            }
        }
    }

    fn term_query(&self, field: Field, tok: &str) -> Box<dyn Query> {
        Box::new(TermQuery::new(
            Term::from_field_text(field, tok),
            IndexRecordOption::WithFreqs,
        ))
    }

    fn group_query(&self, clauses: &[(Occ, Atom)]) -> Result<Option<Box<dyn Query>>> {
        let mut out: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for (occ, atom) in clauses {
            let q = match atom {
                Atom::Group(inner) => self.group_query(inner)?,
                Atom::Terms { tokens, prefix } => self.terms_query(tokens, *prefix)?,
            };
            let Some(q) = q else { continue };
            let occur = match occ {
                Occ::Must => Occur::Must,
                Occ::MustNot => Occur::MustNot,
                Occ::Should => Occur::Should,
            };
            out.push((occur, q));
        }
        if out.is_empty() {
            return Ok(None);
        }
        Ok(Some(Box::new(BooleanQuery::new(out))))
    }

    /// One atom over all fields: OR of its per-field queries.
    fn terms_query(
        &self,
        tokens: &[(usize, String)],
        prefix: bool,
    ) -> Result<Option<Box<dyn Query>>> {
        let Some(plan) = AtomPlan::new(self.parser, tokens, prefix) else {
            return Ok(None);
        };
        let mut per_field: Vec<(Occur, Box<dyn Query>)> = Vec::new();
        for &f in &self.text_fields {
            let q: Box<dyn Query> = match &plan {
                AtomPlan::Term(t) => self.term_query(f, t),
                AtomPlan::Prefix { exact, prefix } => {
                    let re: Box<dyn Query> = Box::new(RegexQuery::from_pattern(
                        &format!("{}.*", escape_regex(prefix)),
                        f,
                    )?);
                    if exact.is_empty() {
                        re
                    } else {
                        let mut c: Vec<(Occur, Box<dyn Query>)> = exact
                            .iter()
                            .map(|t| (Occur::Must, self.term_query(f, t)))
                            .collect();
                        c.push((Occur::Must, re));
                        Box::new(BooleanQuery::new(c))
                    }
                }
                AtomPlan::Phrase(terms) => Box::new(PhraseQuery::new_with_offset(
                    terms
                        .iter()
                        .map(|(p, t)| (*p, Term::from_field_text(f, t)))
                        .collect(),
                )),
            };
            per_field.push((Occur::Should, q));
        }
        if per_field.len() == 1 {
            return Ok(per_field.pop().map(|(_, q)| q));
        }
        Ok(Some(Box::new(BooleanQuery::new(per_field))))
    }

    /// Searches committed documents: `(key, BM25 score)` by descending score (ties by
    /// key), at most `limit`. An empty or all-negative query returns nothing.
    pub fn search(&self, query: &str, mode: MatchMode, limit: usize) -> Result<Vec<(u64, f32)>> {
        let Some(q) = self.build_query(query, mode)? else {
            return Ok(Vec::new());
        };
        let searcher = self.reader.searcher();
        top_keys(&searcher, q.as_ref(), limit, None)
    }

    /// [`search`](Self::search) over this index together with `extra` documents that
    /// are not in it (rows changed since its view), every document scored against one
    /// set of BM25 statistics: this index's plus `extra`'s (document count, tokens per
    /// field, documents per term). Returns the index's hits (at most `limit`) and every
    /// matching `extra` document, each by descending score. With no `extra` this is
    /// exactly [`search`](Self::search).
    pub fn search_with_extra(
        &self,
        query: &str,
        mode: MatchMode,
        limit: usize,
        extra: &[(u64, Vec<Option<&str>>)],
    ) -> Result<ExtraHits> {
        let Some(q) = self.build_query(query, mode)? else {
            return Ok(ExtraHits::default());
        };
        let searcher = self.reader.searcher();
        if extra.is_empty() {
            return Ok(ExtraHits {
                hits: top_keys(&searcher, q.as_ref(), limit, None)?,
                extra: Vec::new(),
            });
        }
        let scratch = Self::scratch(self.n_fields, self.parser, extra)?;
        let scratch_searcher = scratch.reader.searcher();
        let both = Combined(&[&searcher, &scratch_searcher]);
        Ok(ExtraHits {
            hits: top_keys(&searcher, q.as_ref(), limit, Some(&both))?,
            extra: top_keys(&scratch_searcher, q.as_ref(), extra.len(), Some(&both))?,
        })
    }

    /// A throwaway index of `docs` written as one segment, without writer threads.
    fn scratch(n_fields: usize, parser: Parser, docs: &[(u64, Vec<Option<&str>>)]) -> Result<Self> {
        let fresh = Self::new(n_fields, parser)?;
        let bytes: usize = docs
            .iter()
            .flat_map(|(_, f)| f.iter().flatten())
            .map(|t| t.len())
            .sum();
        let budget = bytes
            .saturating_mul(8)
            .clamp(SCRATCH_MIN_BUDGET, WRITER_MEMORY_BUDGET);
        let mut w: SingleSegmentIndexWriter<TantivyDocument> =
            SingleSegmentIndexWriter::new(fresh.index.clone(), budget)?;
        for (key, fields) in docs {
            if fields.len() != n_fields {
                return Err(IndexError::InvalidDocument(format!(
                    "expected {n_fields} fields, got {}",
                    fields.len()
                )));
            }
            let mut doc = TantivyDocument::default();
            doc.add_u64(fresh.key_field, *key);
            for (f, v) in fresh.text_fields.iter().zip(fields) {
                if let Some(v) = v {
                    doc.add_text(*f, v);
                }
            }
            w.add_document(doc)?;
        }
        w.finalize()?;
        fresh.reader.reload()?;
        Ok(fresh)
    }

    /// Which searcher queries read: it changes only when a commit makes
    /// changes visible, so queries between commits share one searcher and
    /// no query reloads the reader.
    pub fn searcher_generation(&self) -> u64 {
        self.reader.searcher().generation().generation_id()
    }

    /// Tokenizes `text` with this index's analyzer.
    pub fn tokenize(&self, text: &str) -> Vec<String> {
        tokens_with_positions(&mut self.analyzer.clone(), text)
            .into_iter()
            .map(|(_, t)| t)
            .collect()
    }

    /// Exact evaluation of `query` against `fields` with the same analyzer and the same
    /// semantics as [`search`](Self::search) (for rows not indexed yet). A malformed
    /// boolean query matches nothing.
    pub fn matches_text(&self, fields: &[Option<&str>], query: &str, mode: MatchMode) -> bool {
        matches_text_with(self.parser, fields, query, mode)
    }

    /// Commits, then serializes every file of the index (meta.json, the managed-file
    /// list and all segment files) into one checksummed blob.
    pub fn to_bytes(&mut self) -> Result<Vec<u8>> {
        self.release()?;
        // No writer is left to merge segments: the copy cannot be raced.
        self.snapshot_files()?
            .ok_or_else(|| {
                IndexError::FullText(tantivy::TantivyError::InternalError(
                    "index files changed without a writer".into(),
                ))
            })?
            .into_bytes()
    }

    /// The files of the last commit, held by reference (cheap: segment files are
    /// immutable and shared), for [`FullTextSnapshot::into_bytes`] to serialize
    /// later, with no lock on this index. Takes `&self`, so searches go on.
    /// `None` when operations are buffered (their commit needs `&mut self`) or
    /// when a background segment merge replaced files meanwhile: the caller
    /// then uses [`to_bytes`](Self::to_bytes).
    pub fn snapshot_files(&self) -> Result<Option<FullTextSnapshot>> {
        if self.pending {
            return Ok(None);
        }
        let segments = self.index.searchable_segment_metas()?;
        let mut names: BTreeSet<PathBuf> = BTreeSet::new();
        names.insert(PathBuf::from("meta.json"));
        names.insert(PathBuf::from(".managed.json"));
        for seg in &segments {
            names.extend(seg.list_files());
        }
        let mut files = Vec::with_capacity(names.len());
        for name in names {
            let slice = match self.ram.open_read(&name) {
                Ok(s) => s,
                // Components a segment does not have (no deletes, …).
                Err(tantivy::directory::error::OpenReadError::FileDoesNotExist(_)) => continue,
                Err(e) => return Err(tantivy::TantivyError::from(e).into()),
            };
            let name = name.to_str().map(str::to_owned).ok_or_else(|| {
                IndexError::FullText(tantivy::TantivyError::InternalError(format!(
                    "non-UTF-8 file name {name:?}"
                )))
            })?;
            files.push((name, slice));
        }
        // A merge that ended in between wrote another meta.json and may
        // have deleted files listed above: the set would not be one commit.
        let now = self.index.searchable_segment_metas()?;
        if !now
            .iter()
            .map(|m| m.id())
            .eq(segments.iter().map(|m| m.id()))
        {
            return Ok(None);
        }
        let header = serde_json::to_vec(&BlobHeader {
            n_fields: self.n_fields,
            parser: self.parser,
        })
        .map_err(|e| IndexError::Corrupt(format!("encoding header: {e}")))?;
        Ok(Some(FullTextSnapshot { header, files }))
    }

    /// Rebuilds an index from [`to_bytes`](Self::to_bytes) output. Garbage, truncated
    /// or mismatching bytes yield [`IndexError::Corrupt`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let payload = codec::unseal(MAGIC, FORMAT_VERSION, bytes)?;
        let mut r = Reader::new(payload);
        let n = r.len_u64()?;
        let header: BlobHeader = serde_json::from_slice(r.take(n)?)
            .map_err(|e| IndexError::Corrupt(format!("header: {e}")))?;
        if header.n_fields == 0 || header.n_fields > MAX_FIELDS {
            return Err(IndexError::Corrupt(format!(
                "header: bad field count {}",
                header.n_fields
            )));
        }
        let count = r.len_u64()?;
        let dir = RamDirectory::create();
        let mut seen = HashSet::new();
        for _ in 0..count {
            let n = r.len_u64()?;
            let name = std::str::from_utf8(r.take(n)?)
                .map_err(|_| IndexError::Corrupt("non-UTF-8 file name".into()))?;
            if name.is_empty()
                || name.contains(['/', '\\'])
                || name == "."
                || name == ".."
                || !seen.insert(name.to_owned())
            {
                return Err(IndexError::Corrupt(format!("bad file name {name:?}")));
            }
            let n = r.len_u64()?;
            let data = r.take(n)?;
            dir.atomic_write(Path::new(name), data)
                .map_err(|e| IndexError::Corrupt(format!("writing {name}: {e}")))?;
        }
        if !r.is_empty() {
            return Err(IndexError::Corrupt("trailing bytes in payload".into()));
        }
        if !seen.contains("meta.json") {
            return Err(IndexError::Corrupt("meta.json missing".into()));
        }
        let index =
            Index::open(dir.clone()).map_err(|e| IndexError::Corrupt(format!("open: {e}")))?;
        Self::from_index(index, dir, header.n_fields, header.parser)
    }
}

/// What [`FullTextIndex::search_with_extra`] found: `(key, BM25 score)` pairs by
/// descending score (ties by key).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ExtraHits {
    /// Documents of the index.
    pub hits: Vec<(u64, f32)>,
    /// The matching extra documents.
    pub extra: Vec<(u64, f32)>,
}

/// BM25 scores of the documents of `docs` that match `query`, with `docs` as the whole
/// corpus (their own document count, field lengths and term frequencies) — how a
/// statement scores rows when no index answers it. Same analyzer, query semantics and
/// scoring as [`FullTextIndex::search`]; by descending score (ties by key).
pub fn score_documents(
    parser: Parser,
    n_fields: usize,
    docs: &[(u64, Vec<Option<&str>>)],
    query: &str,
    mode: MatchMode,
) -> Result<Vec<(u64, f32)>> {
    if docs.is_empty() {
        // Still refuse a malformed query, as a search would.
        return FullTextIndex::new(n_fields, parser)?
            .build_query(query, mode)
            .map(|_| Vec::new());
    }
    let scratch = FullTextIndex::scratch(n_fields, parser, docs)?;
    let Some(q) = scratch.build_query(query, mode)? else {
        return Ok(Vec::new());
    };
    top_keys(&scratch.reader.searcher(), q.as_ref(), docs.len(), None)
}

/// Several searchers' BM25 statistics summed, so that documents of each are scored
/// as if they were one corpus (the schemas are identical: same fields, same terms).
struct Combined<'a>(&'a [&'a Searcher]);

impl Bm25StatisticsProvider for Combined<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        self.0.iter().map(|s| s.total_num_tokens(field)).sum()
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        self.0
            .iter()
            .map(|s| Bm25StatisticsProvider::total_num_docs(*s))
            .sum()
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        self.0.iter().map(|s| s.doc_freq(term)).sum()
    }
}

/// The best `limit` matches of `q` in `searcher`, `(key, score)` by descending score
/// (ties by key), scored with `stats` (the searcher's own when `None`).
fn top_keys(
    searcher: &Searcher,
    q: &dyn Query,
    limit: usize,
    stats: Option<&dyn Bm25StatisticsProvider>,
) -> Result<Vec<(u64, f32)>> {
    let run = |c| match stats {
        Some(p) => searcher.search_with_statistics_provider(q, c, p),
        None => searcher.search(q, c),
    };
    // The top-n collector buffers `limit` entries up front: size it by
    // the matches (counted first, cheaply), not by the request, so a
    // "every hit" search of a rare term allocates little.
    let matching = if limit > SMALL_LIMIT {
        searcher.search(q, &Count)?
    } else {
        usize::try_from(searcher.num_docs()).unwrap_or(usize::MAX)
    };
    let limit = limit.min(matching);
    if limit == 0 {
        return Ok(Vec::new());
    }
    let top = run(&TopDocs::with_limit(limit))?;
    let mut columns = HashMap::new();
    let mut out = Vec::with_capacity(top.len());
    for (score, addr) in top {
        let col = match columns.entry(addr.segment_ord) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => e.insert(
                searcher
                    .segment_reader(addr.segment_ord)
                    .fast_fields()
                    .u64(KEY_FIELD)?,
            ),
        };
        let Some(key) = col.first(addr.doc_id) else {
            return Err(IndexError::FullText(tantivy::TantivyError::InternalError(
                format!("document {addr:?} has no key"),
            )));
        };
        out.push((key, score));
    }
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok(out)
}

/// How one analyzed atom is matched inside one field; shared by the tantivy
/// translation and the exact matcher so both have identical semantics.
enum AtomPlan<'a> {
    /// The field contains the token.
    Term(&'a str),
    /// The field contains every `exact` token and a token starting with `prefix`.
    Prefix {
        exact: Vec<&'a str>,
        prefix: &'a str,
    },
    /// The field contains the tokens at these relative positions (≥ 2 tokens).
    Phrase(Vec<(usize, &'a str)>),
}

impl<'a> AtomPlan<'a> {
    fn new(parser: Parser, tokens: &'a [(usize, String)], prefix: bool) -> Option<Self> {
        let ((_, last), init) = tokens.split_last()?;
        let phrase = |toks: Vec<&'a (usize, String)>| -> Option<Self> {
            let base = toks.first()?.0;
            if toks.len() == 1 {
                return Some(AtomPlan::Term(toks[0].1.as_str()));
            }
            Some(AtomPlan::Phrase(
                toks.iter()
                    .map(|(p, t)| (p.saturating_sub(base), t.as_str()))
                    .collect(),
            ))
        };
        match parser {
            Parser::Default => {
                if prefix {
                    Some(AtomPlan::Prefix {
                        exact: init.iter().map(|(_, t)| t.as_str()).collect(),
                        prefix: last.as_str(),
                    })
                } else {
                    phrase(tokens.iter().collect())
                }
            }
            Parser::Ngram => {
                // Grams already give substring matching; a trailing `*` only matters
                // for a one-character word ("d*": any gram starting with d).
                if prefix && tokens.len() == 1 && last.chars().count() < NGRAM_MIN {
                    return Some(AtomPlan::Prefix {
                        exact: Vec::new(),
                        prefix: last.as_str(),
                    });
                }
                // The shortest grams (and one-character words) tile the text: a phrase
                // of them at consecutive positions is a substring match.
                phrase(
                    tokens
                        .iter()
                        .filter(|(_, t)| t.chars().count() <= NGRAM_MIN)
                        .collect(),
                )
            }
        }
    }

    /// Does one field (its analyzed tokens, and the same as a set) match?
    fn matches(&self, doc: &[(usize, String)], set: &BTreeSet<&str>) -> bool {
        match self {
            AtomPlan::Term(t) => set.contains(t),
            AtomPlan::Prefix { exact, prefix } => {
                exact.iter().all(|t| set.contains(t))
                    && set
                        .range::<str, _>((Bound::Included(*prefix), Bound::Unbounded))
                        .next()
                        .is_some_and(|t| t.starts_with(prefix))
            }
            AtomPlan::Phrase(terms) => {
                let at: HashSet<(usize, &str)> =
                    doc.iter().map(|(p, t)| (*p, t.as_str())).collect();
                let Some((_, first)) = terms.first() else {
                    return false;
                };
                doc.iter().any(|(start, t)| {
                    t == first
                        && terms
                            .iter()
                            .all(|(rel, tok)| at.contains(&(start + rel, *tok)))
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Searches reuse one searcher until a commit with changes: a search
    /// never reloads the reader, and a commit with nothing pending does
    /// not either.
    #[test]
    fn searches_reuse_the_searcher_until_a_commit_changes_it() {
        let mut ix = FullTextIndex::new(1, Parser::Default).unwrap();
        ix.upsert(1, &[Some("red fox")]).unwrap();
        ix.commit().unwrap();
        let g = ix.searcher_generation();
        for _ in 0..3 {
            assert_eq!(ix.search("fox", MatchMode::Natural, 10).unwrap().len(), 1);
            assert_eq!(ix.searcher_generation(), g);
        }
        ix.commit().unwrap();
        assert_eq!(ix.searcher_generation(), g, "an empty commit reloaded");
        ix.upsert(2, &[Some("blue fox")]).unwrap();
        assert_eq!(
            ix.searcher_generation(),
            g,
            "staged changes are not visible"
        );
        ix.commit().unwrap();
        assert_ne!(ix.searcher_generation(), g);
        assert_eq!(ix.search("fox", MatchMode::Natural, 10).unwrap().len(), 2);
    }

    /// Two-field documents of varied lengths over a small vocabulary.
    fn corpus(n: u64) -> Vec<(u64, Vec<String>)> {
        let words = ["alpha", "beta", "gamma", "delta", "omega", "alphabet"];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n)
            .map(|k| {
                let mut field = || {
                    let len = 1 + next() % 9;
                    (0..len)
                        .map(|_| words[(next() % words.len() as u64) as usize])
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                (k, vec![field(), field()])
            })
            .collect()
    }

    fn as_docs(c: &[(u64, Vec<String>)]) -> Vec<(u64, Vec<Option<&str>>)> {
        c.iter()
            .map(|(k, f)| (*k, f.iter().map(|s| Some(s.as_str())).collect()))
            .collect()
    }

    const QUERIES: [(&str, MatchMode); 5] = [
        ("alpha omega", MatchMode::Natural),
        ("+beta -gamma", MatchMode::Boolean),
        ("\"alpha beta\" delta", MatchMode::Boolean),
        ("alpha* (gamma >omega)", MatchMode::Boolean),
        ("nothing", MatchMode::Natural),
    ];

    fn assert_close(what: &str, got: &[(u64, f32)], want: &[(u64, f32)]) {
        let keys = |v: &[(u64, f32)]| v.iter().map(|(k, _)| *k).collect::<Vec<_>>();
        assert_eq!(keys(got), keys(want), "{what}");
        for ((k, a), (_, b)) in got.iter().zip(want) {
            assert!(
                (a - b).abs() <= 1e-5 * b.abs().max(1.0),
                "{what}: {k}: {a} vs {b}"
            );
        }
    }

    /// Documents outside an index are scored exactly as if they were in it:
    /// the index's hits and the extra documents together equal one index of
    /// all of them, scores included.
    #[test]
    fn extra_documents_score_as_if_indexed() {
        let all = corpus(300);
        let (indexed, extra) = all.split_at(260);
        let mut ix = FullTextIndex::new(2, Parser::Default).unwrap();
        for (k, f) in as_docs(indexed) {
            ix.upsert(k, &f).unwrap();
        }
        ix.commit().unwrap();
        let mut whole = FullTextIndex::new(2, Parser::Default).unwrap();
        for (k, f) in as_docs(&all) {
            whole.upsert(k, &f).unwrap();
        }
        whole.commit().unwrap();
        for (query, mode) in QUERIES {
            let want = whole.search(query, mode, 1000).unwrap();
            let got = ix
                .search_with_extra(query, mode, 1000, &as_docs(extra))
                .unwrap();
            let mut merged = got.hits.clone();
            merged.extend(got.extra.iter().copied());
            merged.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            assert_close(query, &merged, &want);
            assert!(got.extra.iter().all(|(k, _)| *k >= 260));
            // Documents given as a corpus of their own score as their own index.
            let own = score_documents(Parser::Default, 2, &as_docs(&all), query, mode).unwrap();
            assert_close(query, &own, &want);
        }
        // No extra: exactly `search`.
        let plain = ix.search("alpha", MatchMode::Natural, 50).unwrap();
        let none = ix
            .search_with_extra("alpha", MatchMode::Natural, 50, &[])
            .unwrap();
        assert_eq!(none.hits, plain);
        assert!(none.extra.is_empty());
        // An empty index: the extra documents' own statistics, no NaN.
        let empty = FullTextIndex::new(2, Parser::Default).unwrap();
        let got = empty
            .search_with_extra("alpha", MatchMode::Natural, 10, &as_docs(extra))
            .unwrap();
        let own = score_documents(
            Parser::Default,
            2,
            &as_docs(extra),
            "alpha",
            MatchMode::Natural,
        )
        .unwrap();
        assert!(!own.is_empty() && own.iter().all(|(_, s)| s.is_finite() && *s > 0.0));
        assert_eq!(got.extra, own);
        // Malformed queries and wrong widths are errors, not empty answers.
        assert!(score_documents(Parser::Default, 2, &[], "\"open", MatchMode::Boolean).is_err());
        assert!(ix
            .search_with_extra("alpha", MatchMode::Natural, 10, &[(1, vec![Some("alpha")])])
            .is_err());
    }

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn is_send_sync() {
        assert_send_sync::<FullTextIndex>();
    }

    #[test]
    fn parser_names() {
        assert_eq!(Parser::from_name("ngram").unwrap(), Parser::Ngram);
        assert_eq!(Parser::from_name("NGRAM").unwrap(), Parser::Ngram);
        assert_eq!(Parser::from_name("default").unwrap(), Parser::Default);
        assert!(Parser::from_name("json").is_err());
    }

    #[test]
    fn analyzers() {
        assert_eq!(
            tokenize_with(Parser::Default, "Hello, Rust-DB world!"),
            vec!["hello", "rust", "db", "world"]
        );
        assert_eq!(
            tokenize_with(Parser::Ngram, "Tab a"),
            vec!["ta", "tab", "ab", "a"]
        );
        assert_eq!(
            tokenize_with(Parser::Ngram, "数据库"),
            vec!["数据", "数据库", "据库"]
        );
    }

    #[test]
    fn boolean_parser_errors() {
        for q in ["\"abc", "(a b", "a b)", "++a", "a @3", "+-a"] {
            assert!(
                matches!(parse_boolean(q), Err(IndexError::Query(_))),
                "{q} should be malformed"
            );
        }
        for q in ["", "a", "+a -b c*", "\"a b\" +(c d) -e", "+ a", "a -"] {
            assert!(parse_boolean(q).is_ok(), "{q} should parse");
        }
    }

    /// A snapshot taken while the writer lives on holds exactly the commit
    /// it was taken at: later commits do not leak into its blob.
    #[test]
    fn a_multi_threaded_writer_indexes_what_one_thread_does() {
        let docs = |ix: &mut FullTextIndex, from: u64, to: u64| {
            for k in from..to {
                let text = format!("alpha w{} doc{k}", k % 7);
                ix.upsert(k, &[Some(&text)]).unwrap();
            }
            ix.commit().unwrap();
        };
        let mut one = FullTextIndex::new(1, Parser::Default).unwrap();
        let mut two = FullTextIndex::new(1, Parser::Default).unwrap();
        two.set_writer_threads(2);
        docs(&mut one, 0, 3_000);
        docs(&mut two, 0, 3_000);
        assert_eq!(two.writer_threads, (2, 2));
        // Back to one thread: the next batch gets a one-thread writer.
        two.set_writer_threads(1);
        docs(&mut one, 3_000, 3_500);
        docs(&mut two, 3_000, 3_500);
        assert_eq!(two.writer_threads, (1, 1));
        one.remove(17).unwrap();
        two.remove(17).unwrap();
        one.commit().unwrap();
        two.commit().unwrap();
        assert_eq!((one.len(), two.len()), (3_499, 3_499));
        for q in ["alpha", "w3", "doc17", "doc3333", "w5 doc12"] {
            let hits = |ix: &FullTextIndex| {
                let mut h = ix.search(q, MatchMode::Natural, 10_000).unwrap();
                h.sort_by_key(|(k, _)| *k);
                h.into_iter().map(|(k, _)| k).collect::<Vec<_>>()
            };
            assert_eq!(hits(&one), hits(&two), "{q}");
        }
    }

    #[test]
    fn a_snapshot_is_one_commit_and_ignores_later_ones() {
        let mut ix = FullTextIndex::new(1, Parser::Default).unwrap();
        for k in 0..200u64 {
            ix.upsert(k, &[Some(&format!("alpha doc{k}"))]).unwrap();
        }
        assert!(ix.snapshot_files().unwrap().is_none(), "pending operations");
        ix.commit().unwrap();
        let snap = ix.snapshot_files().unwrap().expect("no pending operations");
        for k in 200..300u64 {
            ix.upsert(k, &[Some("alpha later")]).unwrap();
        }
        ix.remove(5).unwrap();
        ix.commit().unwrap();
        let back = FullTextIndex::from_bytes(&snap.into_bytes().unwrap()).unwrap();
        assert_eq!(back.len(), 200);
        assert_eq!(
            back.search("alpha", MatchMode::Natural, 1_000)
                .unwrap()
                .len(),
            200
        );
        assert_eq!(
            back.search("doc5", MatchMode::Natural, 10).unwrap().len(),
            1
        );
        assert!(back
            .search("later", MatchMode::Natural, 10)
            .unwrap()
            .is_empty());
        // And the index itself moved on.
        assert_eq!(ix.len(), 299);
        let whole = FullTextIndex::from_bytes(&ix.to_bytes().unwrap()).unwrap();
        assert_eq!(whole.len(), 299);
    }
}
