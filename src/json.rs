//! MySQL 8's JSON functions (JSON_EXTRACT, JSON_SET, JSON_OBJECT, ...) as
//! pure functions over [`Value`]: documents arrive as JSON text, results
//! leave as JSON text, text or integers.
//!
//! Owns: MySQL's JSON semantics. That is the parser (rapidjson's grammar,
//! error messages and byte positions, and the nesting limit of 100), the
//! canonical text form (members sorted by key length, then key bytes, the
//! last duplicate winning; `", "` and `": "` separators; doubles printed as
//! `my_gcvt` prints them), path expressions (`$.k`, `$."k"`, `$[n]`,
//! `$[last-n]`, `$[m to n]`, `$.*`, `$[*]`, `$**`, and the auto-wrapping of
//! non-arrays by `[0]`), and how SQL values convert to JSON.
//!
//! Never: touches storage, sessions or the catalog. Callers hand in the
//! argument values and whether each one is JSON-typed; nothing else. It
//! sits beside [`crate::types`] (value semantics, no layer of its own):
//! the catalog validates JSON columns with [`normalize`], the SQL layer
//! evaluates the functions with [`call`].

use std::collections::HashSet;
use std::fmt::{self, Write as _};
use std::mem;
use std::ops::Range;

use crate::error::{SqlError, SqlResult};
use crate::types::Value;

/// The deepest nesting of arrays and objects MySQL accepts.
const MAX_DEPTH: usize = 100;

const ER_SP_DOES_NOT_EXIST: u16 = 1305;
const ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT: u16 = 1582;
const ER_INCORRECT_TYPE: u16 = 3064;
const ER_INVALID_JSON_TEXT: u16 = 3140;
const ER_INVALID_JSON_TEXT_IN_PARAM: u16 = 3141;
const ER_INVALID_JSON_PATH: u16 = 3143;
const ER_INVALID_TYPE_FOR_JSON: u16 = 3146;
const ER_INVALID_JSON_PATH_WILDCARD: u16 = 3149;
const ER_JSON_VACUOUS_PATH: u16 = 3153;
const ER_JSON_BAD_ONE_OR_ALL_ARG: u16 = 3154;
const ER_JSON_DOCUMENT_TOO_DEEP: u16 = 3157;
const ER_JSON_DOCUMENT_NULL_KEY: u16 = 3158;

const INVALID_VALUE: &str = "Invalid value.";
const BAD_SURROGATE: &str = "The surrogate pair in string is invalid.";

/// One argument: its value and whether the expression that produced it is
/// JSON-typed (a JSON column, or the result of a JSON function other than
/// JSON_UNQUOTE etc.).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonArg {
    pub value: Value,
    pub json: bool,
}

/// Evaluate JSON function `name` (lower case) over `args`.
pub fn call(name: &str, args: &[JsonArg]) -> SqlResult<Value> {
    if arity_ok(name, args.len()) == Some(false) {
        return Err(SqlError::new(
            ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT,
            format!("Incorrect parameter count in the call to native function '{name}'"),
        ));
    }
    let call = Call { name, args };
    match name {
        "json_extract" => call.extract(),
        "json_unquote" => call.unquote(),
        "json_quote" => call.quote(),
        "json_object" => call.object(),
        "json_array" => call.array(),
        "json_valid" => call.valid(),
        "json_type" => call.json_type(),
        "json_length" => call.length(),
        "json_keys" => call.keys(),
        "json_contains" => call.contains(),
        "json_contains_path" => call.contains_path(),
        "json_set" => call.write(Mode::Set),
        "json_insert" => call.write(Mode::Insert),
        "json_replace" => call.write(Mode::Replace),
        "json_remove" => call.remove(),
        "json_array_append" => call.array_append(),
        "json_merge_preserve" => call.merge_preserve(),
        "json_depth" => call.depth(),
        "cast_as_json" => call.cast(),
        _ => Err(SqlError::new(
            ER_SP_DOES_NOT_EXIST,
            format!("FUNCTION {name} does not exist"),
        )),
    }
}

/// Validate and normalise text stored into a JSON column (MySQL's canonical
/// form). The 3140 message lacks MySQL's "in value for column '…'" tail,
/// which only the caller can name.
pub fn normalize(text: &str) -> SqlResult<String> {
    parse(text).map(|doc| doc.to_string()).map_err(|e| {
        e.into_error(|msg, pos| {
            SqlError::new(
                ER_INVALID_JSON_TEXT,
                format!("Invalid JSON text: \"{msg}\" at position {pos}."),
            )
        })
    })
}

/// Whether `n` arguments suit function `name`; `None` for an unknown name.
fn arity_ok(name: &str, n: usize) -> Option<bool> {
    Some(match name {
        "json_quote" | "json_unquote" | "json_valid" | "json_type" | "json_depth"
        | "cast_as_json" => n == 1,
        "json_length" | "json_keys" => (1..=2).contains(&n),
        "json_contains" => (2..=3).contains(&n),
        "json_extract" | "json_remove" | "json_merge_preserve" => n >= 2,
        "json_contains_path" => n >= 3,
        "json_set" | "json_insert" | "json_replace" | "json_array_append" => {
            n >= 3 && !n.is_multiple_of(2)
        }
        "json_object" => n.is_multiple_of(2),
        "json_array" => true,
        _ => return None,
    })
}

/// What JSON_SET, JSON_INSERT and JSON_REPLACE may do to a path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Set,
    Insert,
    Replace,
}

/// A call being evaluated: the function's name (for messages) and its
/// arguments.
struct Call<'a> {
    name: &'a str,
    args: &'a [JsonArg],
}

// The functions, in MySQL's order of evaluating their arguments: a NULL
// document or path makes the result NULL as soon as it is met.
impl Call<'_> {
    fn extract(&self) -> SqlResult<Value> {
        let Some(doc) = self.doc(0)? else {
            return Ok(Value::Null);
        };
        let mut many = self.args.len() > 2;
        let mut hits = Vec::new();
        for i in 1..self.args.len() {
            let Some(path) = self.path(i)? else {
                return Ok(Value::Null);
            };
            many |= path.is_wild();
            hits.extend(path.seek(&doc, true));
        }
        match hits.as_slice() {
            [] => Ok(Value::Null),
            [one] if !many => json_text(one),
            _ => json_text(&Json::Array(hits.into_iter().cloned().collect())),
        }
    }

    fn unquote(&self) -> SqlResult<Value> {
        if self.args[0].json {
            return self.doc(0)?.map_or(Ok(Value::Null), unquoted);
        }
        match &self.args[0].value {
            Value::Null => Ok(Value::Null),
            Value::Text(t) if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') => {
                unquoted(self.parse_arg(0, t)?)
            }
            Value::Text(t) => Ok(Value::Text(t.clone())),
            _ => Err(self.incorrect_type()),
        }
    }

    fn quote(&self) -> SqlResult<Value> {
        match &self.args[0] {
            JsonArg {
                value: Value::Null, ..
            } => Ok(Value::Null),
            JsonArg {
                value: Value::Text(t),
                json: false,
            } => Ok(Value::Text(Json::Str(t.clone()).to_string())),
            _ => Err(self.incorrect_type()),
        }
    }

    fn object(&self) -> SqlResult<Value> {
        let mut members = Vec::with_capacity(self.args.len() / 2);
        for i in (0..self.args.len()).step_by(2) {
            let key = match &self.args[i].value {
                Value::Null => {
                    return Err(SqlError::new(
                        ER_JSON_DOCUMENT_NULL_KEY,
                        "JSON documents may not contain NULL member names.",
                    ))
                }
                key => key.to_string(),
            };
            members.push((key, self.value(i + 1)?));
        }
        json_text(&Json::Object(Object::from_members(members)))
    }

    /// `CAST(x AS JSON)`: text is parsed as a document, any other value
    /// becomes the JSON scalar it is; NULL stays NULL.
    fn cast(&self) -> SqlResult<Value> {
        match &self.args[0].value {
            Value::Null => Ok(Value::Null),
            Value::Text(t) => json_text(&self.parse_arg(0, t)?),
            other => json_text(&Json::from_sql(other)),
        }
    }

    fn array(&self) -> SqlResult<Value> {
        let items = (0..self.args.len())
            .map(|i| self.value(i))
            .collect::<SqlResult<Vec<_>>>()?;
        json_text(&Json::Array(items))
    }

    fn valid(&self) -> SqlResult<Value> {
        let arg = &self.args[0];
        let valid = match &arg.value {
            Value::Null => return Ok(Value::Null),
            Value::Text(t) => match parse(t) {
                Ok(_) => true,
                Err(ParseError::Syntax(..)) => false,
                Err(ParseError::TooDeep) => return Err(too_deep()),
            },
            _ => arg.json,
        };
        Ok(Value::Int(valid.into()))
    }

    fn json_type(&self) -> SqlResult<Value> {
        Ok(self
            .doc(0)?
            .map_or(Value::Null, |doc| Value::Text(doc.type_name().into())))
    }

    fn length(&self) -> SqlResult<Value> {
        let Some(doc) = self.doc(0)? else {
            return Ok(Value::Null);
        };
        Ok(self
            .target(&doc, 1, true)?
            .map_or(Value::Null, |t| Value::Int(t.length() as i64)))
    }

    fn keys(&self) -> SqlResult<Value> {
        let Some(doc) = self.doc(0)? else {
            return Ok(Value::Null);
        };
        match self.target(&doc, 1, false)? {
            Some(Json::Object(o)) => json_text(&Json::Array(
                o.0.iter().map(|(k, _)| Json::Str(k.clone())).collect(),
            )),
            _ => Ok(Value::Null),
        }
    }

    fn contains(&self) -> SqlResult<Value> {
        let Some(doc) = self.doc(0)? else {
            return Ok(Value::Null);
        };
        let Some(candidate) = self.doc(1)? else {
            return Ok(Value::Null);
        };
        Ok(self.target(&doc, 2, true)?.map_or(Value::Null, |scope| {
            Value::Int(contains(scope, &candidate).into())
        }))
    }

    fn contains_path(&self) -> SqlResult<Value> {
        let Some(doc) = self.doc(0)? else {
            return Ok(Value::Null);
        };
        let all = match &self.args[1].value {
            Value::Null => return Ok(Value::Null),
            mode => match mode.to_string().to_lowercase().as_str() {
                "one" => false,
                "all" => true,
                _ => {
                    return Err(SqlError::new(
                        ER_JSON_BAD_ONE_OR_ALL_ARG,
                        format!(
                            "The oneOrAll argument to {} may take these values: 'one' or 'all'.",
                            self.name
                        ),
                    ))
                }
            },
        };
        // 'one' is decided by the first path found, 'all' by the first missing.
        for i in 2..self.args.len() {
            let Some(path) = self.path(i)? else {
                return Ok(Value::Null);
            };
            let found = !path.seek(&doc, true).is_empty();
            if found != all {
                return Ok(Value::Int(found.into()));
            }
        }
        Ok(Value::Int(all.into()))
    }

    fn write(&self, mode: Mode) -> SqlResult<Value> {
        self.apply_pairs(|doc, legs, value| match locate_mut(doc, legs) {
            Some(node) if mode != Mode::Insert => *node = value,
            None if mode != Mode::Replace => insert_missing(doc, legs, value),
            _ => {}
        })
    }

    fn array_append(&self) -> SqlResult<Value> {
        self.apply_pairs(|doc, legs, value| match locate_mut(doc, legs) {
            Some(Json::Array(items)) => items.push(value),
            Some(node) => *node = Json::Array(vec![mem::replace(node, Json::Null), value]),
            None => {}
        })
    }

    /// The shape of JSON_SET / INSERT / REPLACE / ARRAY_APPEND: a document,
    /// then (path, value) pairs applied in order by `step`, the depth
    /// checked after each; NULL for a NULL document or path.
    fn apply_pairs(&self, mut step: impl FnMut(&mut Json, &[&Leg], Json)) -> SqlResult<Value> {
        let Some(mut doc) = self.doc(0)? else {
            return Ok(Value::Null);
        };
        for i in (1..self.args.len()).step_by(2) {
            let Some(path) = self.fixed_path(i)? else {
                return Ok(Value::Null);
            };
            let value = self.value(i + 1)?;
            let legs = path.unwrapped(&doc);
            step(&mut doc, &legs, value);
            check_depth(&doc)?;
        }
        json_text(&doc)
    }

    fn remove(&self) -> SqlResult<Value> {
        let Some(mut doc) = self.doc(0)? else {
            return Ok(Value::Null);
        };
        let paths = (1..self.args.len())
            .map(|i| self.fixed_path(i))
            .collect::<SqlResult<Option<Vec<_>>>>()?;
        let Some(paths) = paths else {
            return Ok(Value::Null);
        };
        if paths.iter().any(|p| p.legs.is_empty()) {
            return Err(SqlError::new(
                ER_JSON_VACUOUS_PATH,
                "The path expression '$' is not allowed in this context.",
            ));
        }
        for path in &paths {
            let legs = path.unwrapped(&doc);
            if let Some((last, parent)) = legs.split_last() {
                if let Some(node) = locate_mut(&mut doc, parent) {
                    remove_child(node, last);
                }
            }
        }
        json_text(&doc)
    }

    fn merge_preserve(&self) -> SqlResult<Value> {
        let Some(mut merged) = self.doc(0)? else {
            return Ok(Value::Null);
        };
        for i in 1..self.args.len() {
            let Some(doc) = self.doc(i)? else {
                return Ok(Value::Null);
            };
            merged = merge(merged, doc);
        }
        json_text(&merged)
    }

    fn depth(&self) -> SqlResult<Value> {
        Ok(self
            .doc(0)?
            .map_or(Value::Null, |doc| Value::Int(doc.depth() as i64)))
    }
}

// Argument conversions.
impl Call<'_> {
    /// Argument `i` as a JSON document (text is parsed); `None` for NULL.
    fn doc(&self, i: usize) -> SqlResult<Option<Json>> {
        let arg = &self.args[i];
        match &arg.value {
            Value::Null => Ok(None),
            Value::Text(text) => self.parse_arg(i, text).map(Some),
            other if arg.json => Ok(Some(Json::from_sql(other))),
            _ => Err(SqlError::new(
                ER_INVALID_TYPE_FOR_JSON,
                format!(
                    "Invalid data type for JSON data in argument {} to function {}; \
                     a JSON string or JSON type is required.",
                    i + 1,
                    self.name
                ),
            )),
        }
    }

    /// Argument `i` as a JSON value: SQL NULL is JSON null, and text is a
    /// JSON string unless the argument is JSON-typed.
    fn value(&self, i: usize) -> SqlResult<Json> {
        match &self.args[i] {
            JsonArg {
                value: Value::Text(text),
                json: true,
            } => self.parse_arg(i, text),
            arg => Ok(Json::from_sql(&arg.value)),
        }
    }

    fn parse_arg(&self, i: usize, text: &str) -> SqlResult<Json> {
        parse(text).map_err(|e| {
            e.into_error(|msg, pos| {
                SqlError::new(
                    ER_INVALID_JSON_TEXT_IN_PARAM,
                    format!(
                        "Invalid JSON text in argument {} to function {}: \"{msg}\" at position {pos}.",
                        i + 1,
                        self.name
                    ),
                )
            })
        })
    }

    /// Argument `i` as a path expression; `None` for NULL.
    fn path(&self, i: usize) -> SqlResult<Option<Path>> {
        match &self.args[i].value {
            Value::Null => Ok(None),
            text => Path::parse(&text.to_string()).map(Some).map_err(|pos| {
                SqlError::new(
                    ER_INVALID_JSON_PATH,
                    format!(
                        "Invalid JSON path expression. The error is around character position {pos}."
                    ),
                )
            }),
        }
    }

    /// Like [`Call::path`], for functions whose paths must select at most
    /// one value (no `*`, `**` or ranges).
    fn fixed_path(&self, i: usize) -> SqlResult<Option<Path>> {
        let path = self.path(i)?;
        if path.as_ref().is_some_and(Path::is_wild) {
            return Err(SqlError::new(
                ER_INVALID_JSON_PATH_WILDCARD,
                "In this situation, path expressions may not contain the * and ** tokens or an array range.",
            ));
        }
        Ok(path)
    }

    /// What the optional path argument `i` selects in `doc` (all of `doc`
    /// without one); `None` when the path is NULL or selects nothing.
    fn target<'d>(&self, doc: &'d Json, i: usize, autowrap: bool) -> SqlResult<Option<&'d Json>> {
        if self.args.len() <= i {
            return Ok(Some(doc));
        }
        let Some(path) = self.fixed_path(i)? else {
            return Ok(None);
        };
        Ok(path.seek(doc, autowrap).into_iter().next())
    }

    fn incorrect_type(&self) -> SqlError {
        SqlError::new(
            ER_INCORRECT_TYPE,
            format!("Incorrect type for argument 1 in function {}.", self.name),
        )
    }
}

fn too_deep() -> SqlError {
    SqlError::new(
        ER_JSON_DOCUMENT_TOO_DEEP,
        format!("The JSON document exceeds the maximum depth of {MAX_DEPTH}."),
    )
}

/// Refuse documents nested deeper than MySQL allows. Run after every step
/// that can deepen a document, so none past twice the limit is ever built,
/// walked or dropped.
fn check_depth(doc: &Json) -> SqlResult<()> {
    if doc.exceeds(MAX_DEPTH) {
        Err(too_deep())
    } else {
        Ok(())
    }
}

/// A JSON-typed result.
fn json_text(doc: &Json) -> SqlResult<Value> {
    check_depth(doc)?;
    Ok(Value::Text(doc.to_string()))
}

/// JSON_UNQUOTE's text of a value: a string's contents, else its JSON text.
fn unquoted(doc: Json) -> SqlResult<Value> {
    match doc {
        Json::Str(s) => Ok(Value::Text(s)),
        other => json_text(&other),
    }
}

/// JSON_CONTAINS: whether `doc` contains `candidate`.
fn contains(doc: &Json, candidate: &Json) -> bool {
    match (doc, candidate) {
        (Json::Object(d), Json::Object(c)) => {
            c.0.iter()
                .all(|(k, v)| d.get(k).is_some_and(|dv| contains(dv, v)))
        }
        (Json::Object(_), _) => false,
        (Json::Array(d), Json::Array(c)) => c.iter().all(|x| array_contains(d, x)),
        (Json::Array(d), x) => array_contains(d, x),
        (d, c) => scalar_eq(d, c),
    }
}

/// Whether an element of array `items` contains `x` (an array only in an
/// array element, anything else in a container element or equal to a
/// scalar one).
fn array_contains(items: &[Json], x: &Json) -> bool {
    items.iter().any(|item| match (item, x) {
        (Json::Array(_), _) => contains(item, x),
        (Json::Object(_), Json::Object(_)) => contains(item, x),
        (_, Json::Array(_)) | (Json::Object(_), _) => false,
        _ => scalar_eq(item, x),
    })
}

/// JSON equality of scalars: numbers by value across integer and double.
fn scalar_eq(a: &Json, b: &Json) -> bool {
    let int = |j: &Json| match j {
        Json::Int(i) => Some(i128::from(*i)),
        Json::UInt(u) => Some(i128::from(*u)),
        _ => None,
    };
    let float = |j: &Json| match j {
        Json::Int(i) => Some(*i as f64),
        Json::UInt(u) => Some(*u as f64),
        Json::Double(d) => Some(*d),
        Json::Decimal(d) => Some(d.to_f64()),
        _ => None,
    };
    match (int(a), int(b), float(a), float(b)) {
        (Some(x), Some(y), ..) => x == y,
        (.., Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// JSON_MERGE_PRESERVE of two documents: objects merge member-wise,
/// anything else concatenates as arrays.
fn merge(a: Json, b: Json) -> Json {
    match (a, b) {
        (Json::Object(x), Json::Object(y)) => Json::Object(x.merge(y)),
        (a, b) => {
            let mut items = into_items(a);
            items.extend(into_items(b));
            Json::Array(items)
        }
    }
}

fn into_items(doc: Json) -> Vec<Json> {
    match doc {
        Json::Array(items) => items,
        other => vec![other],
    }
}

/// JSON_SET / JSON_INSERT of a path that selects nothing: add `value` under
/// the parent the path's last leg names, wrapping a non-array parent of a
/// cell leg into an array first.
fn insert_missing(doc: &mut Json, legs: &[&Leg], value: Json) {
    let Some((last, parent)) = legs.split_last() else {
        return;
    };
    let Some(node) = locate_mut(doc, parent) else {
        return;
    };
    match (last, node) {
        (Leg::Cell(i), Json::Array(items)) => items.insert(i.position(items.len()), value),
        (Leg::Cell(i), node) => {
            let mut items = vec![mem::replace(node, Json::Null)];
            items.insert(i.position(1), value);
            *node = Json::Array(items);
        }
        (Leg::Member(key), Json::Object(members)) => members.insert(key.clone(), value),
        _ => {}
    }
}

fn remove_child(node: &mut Json, leg: &Leg) {
    match (node, leg) {
        (Json::Object(members), Leg::Member(key)) => members.remove(key),
        (Json::Array(items), Leg::Cell(i)) => {
            if let Some(p) = i.slot(items.len()) {
                items.remove(p);
            }
        }
        _ => {}
    }
}

/// The value `legs` (member and cell legs) lead to, for changing it.
fn locate_mut<'a>(doc: &'a mut Json, legs: &[&Leg]) -> Option<&'a mut Json> {
    legs.iter().try_fold(doc, |node, leg| leg.child_mut(node))
}

/// A JSON value as MySQL's JSON type holds it.
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    UInt(u64),
    Double(f64),
    /// An SQL DECIMAL put into a document (`JSON_ARRAY(1.50)` is `[1.50]`);
    /// JSON text never parses to one (its numbers are INTEGER or DOUBLE).
    Decimal(crate::decimal::Decimal),
    Str(String),
    Array(Vec<Json>),
    Object(Object),
}

impl Json {
    /// An SQL value as JSON: text becomes a JSON string, a datetime its
    /// MySQL text, a vector an array of doubles.
    fn from_sql(value: &Value) -> Json {
        match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Int(i) => Json::Int(*i),
            Value::Float(x) => Json::double(*x),
            Value::Decimal(d) => Json::Decimal(d.clone()),
            Value::Text(s) => Json::Str(s.clone()),
            Value::DateTime(us) => Json::Str(datetime_text(*us)),
            Value::Vector(xs) => Json::Array(xs.iter().map(|x| Json::double(*x)).collect()),
            // MySQL's opaque form of a binary string (a VARBINARY's
            // type code 15, the bytes in base-64).
            Value::Bytes(b) => {
                use base64::Engine as _;
                Json::Str(format!(
                    "base64:type15:{}",
                    base64::engine::general_purpose::STANDARD.encode(b)
                ))
            }
        }
    }

    /// JSON has no NaN or infinity: those become null.
    fn double(x: f64) -> Json {
        if x.is_finite() {
            Json::Double(x)
        } else {
            Json::Null
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Json::Null => "NULL",
            Json::Bool(_) => "BOOLEAN",
            Json::Int(_) => "INTEGER",
            Json::UInt(_) => "UNSIGNED INTEGER",
            Json::Double(_) => "DOUBLE",
            Json::Decimal(_) => "DECIMAL",
            Json::Str(_) => "STRING",
            Json::Array(_) => "ARRAY",
            Json::Object(_) => "OBJECT",
        }
    }

    /// JSON_LENGTH: elements, members, or 1 for a scalar.
    fn length(&self) -> usize {
        match self {
            Json::Array(items) => items.len(),
            Json::Object(o) => o.0.len(),
            _ => 1,
        }
    }

    /// JSON_DEPTH: 1 for a scalar or an empty container.
    fn depth(&self) -> usize {
        1 + self.children().map(Json::depth).max().unwrap_or(0)
    }

    /// Whether more than `levels` arrays and objects nest here (recursing
    /// at most `levels` deep).
    fn exceeds(&self, levels: usize) -> bool {
        match self {
            Json::Array(_) | Json::Object(_) => {
                levels == 0 || self.children().any(|c| c.exceeds(levels - 1))
            }
            _ => false,
        }
    }

    /// This value and all those inside it, in document order.
    fn preorder<'a>(&'a self, out: &mut Vec<&'a Json>) {
        out.push(self);
        for child in self.children() {
            child.preorder(out);
        }
    }

    fn children(&self) -> impl Iterator<Item = &Json> {
        let (items, members): (&[Json], &[(String, Json)]) = match self {
            Json::Array(items) => (items.as_slice(), &[]),
            Json::Object(o) => (&[], o.0.as_slice()),
            _ => (&[], &[]),
        };
        items.iter().chain(members.iter().map(|(_, v)| v))
    }
}

/// MySQL's text form: `[1, 2]`, `{"a": 1, "b": "x"}`.
impl fmt::Display for Json {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Json::Null => f.write_str("null"),
            Json::Bool(b) => write!(f, "{b}"),
            Json::Int(i) => write!(f, "{i}"),
            Json::UInt(u) => write!(f, "{u}"),
            Json::Double(x) => f.write_str(&format_double(*x)),
            Json::Decimal(d) => write!(f, "{d}"),
            Json::Str(s) => write_quoted(f, s),
            Json::Array(items) => {
                f.write_char('[')?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_char(']')
            }
            Json::Object(o) => {
                f.write_char('{')?;
                for (i, (key, value)) in o.0.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write_quoted(f, key)?;
                    write!(f, ": {value}")?;
                }
                f.write_char('}')
            }
        }
    }
}

/// A JSON string literal, escaped as MySQL escapes (`\u00XX` for the
/// control characters without a short escape; `/` and non-ASCII as is).
fn write_quoted(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\u{8}' => f.write_str("\\b")?,
            '\u{c}' => f.write_str("\\f")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if c < ' ' => write!(f, "\\u{:04x}", u32::from(c))?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

/// A double as MySQL prints it in JSON (`1.0`, `0.1`, `1e20`): `my_gcvt`'s
/// choice between fixed and exponent notation over the shortest round-trip
/// digits, then `.0` appended when the result would read as an integer.
fn format_double(x: f64) -> String {
    let sci = format!("{:e}", x.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits = mantissa.replace('.', "");
    let exp: i32 = exponent.parse().unwrap_or(0);
    let (len, point) = (digits.len() as i32, exp + 1);
    let mut out = String::from(if x.is_sign_negative() { "-" } else { "" });
    if point >= -14 && (point <= 15 || point < len) {
        if point <= 0 {
            out.push_str("0.");
            out.push_str(&"0".repeat(point.unsigned_abs() as usize));
            out.push_str(&digits);
        } else if point < len {
            let (whole, fraction) = digits.split_at(point as usize);
            let _ = write!(out, "{whole}.{fraction}");
        } else {
            out.push_str(&digits);
            out.push_str(&"0".repeat((point - len) as usize));
        }
    } else {
        let (first, rest) = digits.split_at(1);
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        let _ = write!(out, "e{exp}");
    }
    if !out.contains(['.', 'e']) {
        out.push_str(".0");
    }
    out
}

/// Object members in MySQL's order (key length, then key bytes), keys
/// unique.
#[derive(Debug, Clone, PartialEq)]
struct Object(Vec<(String, Json)>);

impl Object {
    /// From members in any order; of duplicate keys the last one wins.
    fn from_members(members: Vec<(String, Json)>) -> Object {
        Object::collect(members, |_, new| new)
    }

    /// JSON_MERGE_PRESERVE of two objects: values of a shared key merge.
    fn merge(self, other: Object) -> Object {
        let mut members = self.0;
        members.extend(other.0);
        Object::collect(members, merge)
    }

    /// Sort (stably) and fold the values of equal keys with `combine`.
    fn collect(mut members: Vec<(String, Json)>, combine: fn(Json, Json) -> Json) -> Object {
        members.sort_by(|a, b| key_order(&a.0, &b.0));
        let mut out: Vec<(String, Json)> = Vec::with_capacity(members.len());
        for (key, value) in members {
            match out.last_mut() {
                Some((last, old)) if *last == key => {
                    *old = combine(mem::replace(old, Json::Null), value);
                }
                _ => out.push((key, value)),
            }
        }
        Object(out)
    }

    fn find(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| key_order(k, key))
    }

    fn get(&self, key: &str) -> Option<&Json> {
        self.find(key).ok().map(|i| &self.0[i].1)
    }

    fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
        self.find(key).ok().map(|i| &mut self.0[i].1)
    }

    fn insert(&mut self, key: String, value: Json) {
        match self.find(&key) {
            Ok(i) => self.0[i].1 = value,
            Err(i) => self.0.insert(i, (key, value)),
        }
    }

    fn remove(&mut self, key: &str) {
        if let Ok(i) = self.find(key) {
            self.0.remove(i);
        }
    }
}

/// MySQL's member order: shorter keys first, then by bytes.
fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

/// Why text is not a JSON document.
#[derive(Debug)]
enum ParseError {
    /// rapidjson's message and the byte offset it reports.
    Syntax(&'static str, usize),
    TooDeep,
}

impl ParseError {
    /// The SQL error; `syntax` words a syntax error from message and offset.
    fn into_error(self, syntax: impl FnOnce(&str, usize) -> SqlError) -> SqlError {
        match self {
            ParseError::Syntax(msg, pos) => syntax(msg, pos),
            ParseError::TooDeep => too_deep(),
        }
    }
}

/// Parse a JSON document as MySQL does: rapidjson's grammar, messages and
/// offsets, at most [`MAX_DEPTH`] nested arrays and objects.
fn parse(text: &str) -> Result<Json, ParseError> {
    let mut p = Parser { text, pos: 0 };
    p.skip_ws();
    if p.peek().is_none() {
        return Err(p.error("The document is empty."));
    }
    let doc = p.value(0)?;
    p.skip_ws();
    if p.peek().is_some() {
        return Err(p.error("The document root must not be followed by other values."));
    }
    Ok(doc)
}

/// A recursive-descent parser; recursion is bounded by the depth limit.
struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        self.pos += usize::from(hit);
        hit
    }

    fn error(&self, msg: &'static str) -> ParseError {
        ParseError::Syntax(msg, self.pos)
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// Skip ASCII digits, returning how many.
    fn digits(&mut self) -> usize {
        let start = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// A value inside `depth` arrays and objects.
    fn value(&mut self, depth: usize) -> Result<Json, ParseError> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => self.string().map(Json::Str),
            Some(b't') => self.literal("true", Json::Bool(true)),
            Some(b'f') => self.literal("false", Json::Bool(false)),
            Some(b'n') => self.literal("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error(INVALID_VALUE)),
        }
    }

    fn literal(&mut self, word: &str, value: Json) -> Result<Json, ParseError> {
        for &b in word.as_bytes() {
            if !self.eat(b) {
                return Err(self.error(INVALID_VALUE));
            }
        }
        Ok(value)
    }

    fn array(&mut self, depth: usize) -> Result<Json, ParseError> {
        if depth > MAX_DEPTH {
            return Err(ParseError::TooDeep);
        }
        self.pos += 1;
        self.skip_ws();
        let mut items = Vec::new();
        if self.eat(b']') {
            return Ok(Json::Array(items));
        }
        loop {
            items.push(self.value(depth)?);
            self.skip_ws();
            if self.eat(b']') {
                return Ok(Json::Array(items));
            }
            if !self.eat(b',') {
                return Err(self.error("Missing a comma or ']' after an array element."));
            }
            self.skip_ws();
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, ParseError> {
        if depth > MAX_DEPTH {
            return Err(ParseError::TooDeep);
        }
        self.pos += 1;
        self.skip_ws();
        let mut members = Vec::new();
        if self.eat(b'}') {
            return Ok(Json::Object(Object(members)));
        }
        loop {
            if self.peek() != Some(b'"') {
                return Err(self.error("Missing a name for object member."));
            }
            let key = self.string()?;
            self.skip_ws();
            if !self.eat(b':') {
                return Err(self.error("Missing a colon after a name of object member."));
            }
            self.skip_ws();
            members.push((key, self.value(depth)?));
            self.skip_ws();
            if self.eat(b'}') {
                return Ok(Json::Object(Object::from_members(members)));
            }
            if !self.eat(b',') {
                return Err(self.error("Missing a comma or '}' after an object member."));
            }
            self.skip_ws();
        }
    }

    /// A number: an integer if it has neither fraction nor exponent and
    /// fits (non-negative ones above 2^32 - 1 are UNSIGNED, as rapidjson
    /// reports them to MySQL), else a double.
    fn number(&mut self) -> Result<Json, ParseError> {
        let start = self.pos;
        let negative = self.eat(b'-');
        if !self.eat(b'0') {
            if !matches!(self.peek(), Some(b'1'..=b'9')) {
                return Err(self.error(INVALID_VALUE));
            }
            self.digits();
        }
        let mut integral = true;
        if self.eat(b'.') {
            if self.digits() == 0 {
                return Err(self.error("Miss fraction part in number."));
            }
            integral = false;
        }
        if self.eat(b'e') || self.eat(b'E') {
            let _sign = self.eat(b'+') || self.eat(b'-');
            if self.digits() == 0 {
                return Err(self.error("Miss exponent in number."));
            }
            integral = false;
        }
        let literal = &self.text[start..self.pos];
        if integral && negative {
            if let Ok(i) = literal.parse::<i64>() {
                return Ok(Json::Int(i));
            }
        } else if integral {
            if let Ok(u) = literal.parse::<u64>() {
                return Ok(u32::try_from(u).map_or(Json::UInt(u), |small| Json::Int(small.into())));
            }
        }
        match literal.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Json::Double(x)),
            _ => Err(ParseError::Syntax(
                "Number too big to be stored in double.",
                start,
            )),
        }
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let start = self.pos;
            while self
                .peek()
                .is_some_and(|b| b != b'"' && b != b'\\' && b >= 0x20)
            {
                self.pos += 1;
            }
            // Both ends sit next to ASCII bytes, so on char boundaries.
            out.push_str(&self.text[start..self.pos]);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => out.push(self.escape()?),
                Some(_) => return Err(self.error("Invalid encoding in string.")),
                None => return Err(self.error("Missing a closing quotation mark in string.")),
            }
        }
    }

    /// The character an escape sequence stands for; errors point at its
    /// backslash.
    fn escape(&mut self) -> Result<char, ParseError> {
        let at = self.pos;
        self.pos += 1;
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                return self.unicode(at);
            }
            _ => {
                return Err(ParseError::Syntax(
                    "Invalid escape character in string.",
                    at,
                ))
            }
        };
        self.pos += 1;
        Ok(c)
    }

    /// The code point of `\uXXXX`, or of a `\uD8XX\uDCXX` surrogate pair.
    fn unicode(&mut self, at: usize) -> Result<char, ParseError> {
        let surrogate = ParseError::Syntax(BAD_SURROGATE, at);
        let code = match self.hex4(at)? {
            high @ 0xD800..=0xDBFF => {
                if !(self.eat(b'\\') && self.eat(b'u')) {
                    return Err(surrogate);
                }
                let low = self.hex4(at)?;
                if !(0xDC00..=0xDFFF).contains(&low) {
                    return Err(surrogate);
                }
                0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            }
            code => code,
        };
        char::from_u32(code).ok_or(surrogate)
    }

    fn hex4(&mut self, at: usize) -> Result<u32, ParseError> {
        let hex = self
            .text
            .get(self.pos..self.pos + 4)
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .ok_or(ParseError::Syntax(
                "Incorrect hex digit after \\u escape in string.",
                at,
            ))?;
        self.pos += 4;
        Ok(hex)
    }
}

/// A parsed path expression: `$` and its legs.
#[derive(Debug)]
struct Path {
    legs: Vec<Leg>,
}

/// One step of a path.
#[derive(Debug)]
enum Leg {
    /// `.name` or `."name"`
    Member(String),
    /// `.*`
    AnyMember,
    /// `[n]`, `[last]`, `[last - n]`
    Cell(Index),
    /// `[m to n]`
    Range(Index, Index),
    /// `[*]`
    AnyCell,
    /// `**`: this value and every value inside it.
    Ellipsis,
}

/// An array index counted from the start, or from the end (`last - n`).
#[derive(Debug, Clone, Copy)]
struct Index {
    n: usize,
    from_end: bool,
}

impl Index {
    /// Where it falls in an array of `len`, clamped to `0..=len` as MySQL
    /// clamps it for insertion.
    fn position(self, len: usize) -> usize {
        if self.from_end {
            len.saturating_sub(self.n + 1)
        } else {
            self.n.min(len)
        }
    }

    /// The element it selects in an array of `len`, if any.
    fn slot(self, len: usize) -> Option<usize> {
        (self.n < len).then(|| self.position(len))
    }
}

impl Leg {
    /// The cells an array leg selects in an array of `len`.
    fn cells(&self, len: usize) -> Range<usize> {
        match self {
            Leg::Cell(i) => i.slot(len).map_or(0..0, |p| p..p + 1),
            Leg::Range(first, last) => {
                first.position(len)..last.slot(len).map_or(last.position(len), |p| p + 1)
            }
            Leg::AnyCell => 0..len,
            _ => 0..0,
        }
    }

    /// Whether a non-array matches this leg as the single element of an
    /// implicit array (`[0]`, `[last]`, ranges that include 0).
    fn is_autowrap(&self) -> bool {
        matches!(self, Leg::Cell(_) | Leg::Range(..)) && !self.cells(1).is_empty()
    }

    /// Add what this leg selects in `node` to `out`.
    fn step<'a>(&self, node: &'a Json, autowrap: bool, out: &mut Vec<&'a Json>) {
        match (self, node) {
            (Leg::Member(key), Json::Object(o)) => out.extend(o.get(key)),
            (Leg::AnyMember, Json::Object(o)) => out.extend(o.0.iter().map(|(_, v)| v)),
            (Leg::Cell(_) | Leg::Range(..) | Leg::AnyCell, Json::Array(items)) => {
                out.extend(items.get(self.cells(items.len())).unwrap_or_default());
            }
            (Leg::Ellipsis, _) => node.preorder(out),
            _ if autowrap && self.is_autowrap() => out.push(node),
            _ => {}
        }
    }

    /// The one value a member or cell leg selects, without auto-wrapping.
    fn child<'a>(&self, node: &'a Json) -> Option<&'a Json> {
        match (self, node) {
            (Leg::Member(key), Json::Object(o)) => o.get(key),
            (Leg::Cell(i), Json::Array(items)) => items.get(i.slot(items.len())?),
            _ => None,
        }
    }

    fn child_mut<'a>(&self, node: &'a mut Json) -> Option<&'a mut Json> {
        match (self, node) {
            (Leg::Member(key), Json::Object(o)) => o.get_mut(key),
            (Leg::Cell(i), Json::Array(items)) => {
                let slot = i.slot(items.len())?;
                items.get_mut(slot)
            }
            _ => None,
        }
    }
}

impl Path {
    /// Parse a path expression; `Err` holds the byte offset MySQL reports.
    fn parse(text: &str) -> Result<Path, usize> {
        let mut cur = PathCursor { text, pos: 0 };
        cur.skip_ws();
        if cur.next() != Some(b'$') {
            return Err(cur.pos);
        }
        let mut legs = Vec::new();
        cur.skip_ws();
        while let Some(b) = cur.peek() {
            legs.push(match b {
                b'[' => cur.array_leg()?,
                b'.' => cur.member_leg()?,
                b'*' => cur.ellipsis()?,
                _ => return Err(cur.pos),
            });
            cur.skip_ws();
        }
        if matches!(legs.last(), Some(Leg::Ellipsis)) {
            return Err(cur.pos);
        }
        Ok(Path { legs })
    }

    /// Whether the path can select more than one value.
    fn is_wild(&self) -> bool {
        self.legs
            .iter()
            .any(|leg| !matches!(leg, Leg::Member(_) | Leg::Cell(_)))
    }

    /// The values the path selects in `doc`, in MySQL's order, each once.
    /// Applied leg by leg, so long paths cost no stack.
    fn seek<'a>(&self, doc: &'a Json, autowrap: bool) -> Vec<&'a Json> {
        self.legs.iter().fold(vec![doc], |nodes, leg| {
            let mut next = Vec::new();
            for node in nodes {
                leg.step(node, autowrap, &mut next);
            }
            let mut seen = HashSet::new();
            next.retain(|node| seen.insert(std::ptr::from_ref(*node)));
            next
        })
    }

    /// The legs left once those auto-wrapping a non-array are dropped
    /// (MySQL's `clone_without_autowrapping`): `$[0]` of a scalar is the
    /// scalar itself.
    fn unwrapped(&self, doc: &Json) -> Vec<&Leg> {
        let mut node = Some(doc);
        let mut legs = Vec::new();
        for leg in &self.legs {
            if leg.is_autowrap() && node.is_some_and(|n| !matches!(n, Json::Array(_))) {
                continue;
            }
            legs.push(leg);
            node = node.and_then(|n| leg.child(n));
        }
        legs
    }
}

/// Reads a path expression the way MySQL's `Stream` does, so that error
/// offsets match.
struct PathCursor<'a> {
    text: &'a str,
    pos: usize,
}

impl PathCursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }

    fn rest(&self) -> &[u8] {
        self.text.as_bytes().get(self.pos..).unwrap_or_default()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(is_path_space) {
            self.pos += 1;
        }
    }

    fn ellipsis(&mut self) -> Result<Leg, usize> {
        self.pos += 1;
        if self.next() != Some(b'*') || matches!(self.peek(), None | Some(b'*')) {
            return Err(self.pos);
        }
        Ok(Leg::Ellipsis)
    }

    fn array_leg(&mut self) -> Result<Leg, usize> {
        self.pos += 1;
        self.skip_ws();
        let leg = if self.peek() == Some(b'*') {
            self.pos += 1;
            Leg::AnyCell
        } else {
            let first = self.index()?;
            self.skip_ws();
            if self.at_to() {
                self.pos += 3;
                self.skip_ws();
                let last = self.index()?;
                // Ranges that select nothing in any array are refused.
                let (a, b) = (first.n, last.n);
                if first.from_end == last.from_end && (if first.from_end { a < b } else { b < a }) {
                    return Err(self.pos);
                }
                Leg::Range(first, last)
            } else {
                Leg::Cell(first)
            }
        };
        self.skip_ws();
        if self.next() != Some(b']') {
            return Err(self.pos);
        }
        Ok(leg)
    }

    /// At ` to ` (the space before already read) between range bounds.
    fn at_to(&self) -> bool {
        let before = self
            .pos
            .checked_sub(1)
            .and_then(|i| self.text.as_bytes().get(i));
        let rest = self.rest();
        rest.len() > 3
            && rest.starts_with(b"to")
            && rest.get(2).copied().is_some_and(is_path_space)
            && before.copied().is_some_and(is_path_space)
    }

    fn index(&mut self) -> Result<Index, usize> {
        let from_end = self.rest().starts_with(b"last");
        if from_end {
            self.pos += 4;
            self.skip_ws();
            if self.peek() != Some(b'-') {
                return Ok(Index { n: 0, from_end });
            }
            self.pos += 1;
            self.skip_ws();
        }
        let len = self
            .rest()
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let n = self
            .text
            .get(self.pos..self.pos + len)
            .and_then(|d| d.parse::<u32>().ok())
            .ok_or(self.pos)?;
        self.pos += len;
        Ok(Index {
            n: n as usize,
            from_end,
        })
    }

    fn member_leg(&mut self) -> Result<Leg, usize> {
        self.pos += 1;
        self.skip_ws();
        let quoted = match self.peek() {
            None => return Err(self.pos),
            Some(b'*') => {
                self.pos += 1;
                return Ok(Leg::AnyMember);
            }
            Some(b) => b == b'"',
        };
        let start = self.pos;
        self.pos = self.name_end(quoted);
        let raw = self.text.get(start..self.pos).ok_or(self.pos)?;
        // Either way the name goes through the JSON string parser, so an
        // unquoted one may hold escapes too; it must be an identifier.
        let name = if quoted {
            json_string(raw)
        } else {
            json_string(&format!("\"{raw}\"")).filter(|n| is_identifier(n))
        };
        name.map(Leg::Member).ok_or(self.pos)
    }

    /// Where the member name at the cursor ends: after its closing quote,
    /// or before the space, `[`, `.` or `*` ending an unquoted one.
    fn name_end(&self, quoted: bool) -> usize {
        let rest = self.rest();
        if !quoted {
            let end = rest
                .iter()
                .position(|&b| is_path_space(b) || matches!(b, b'[' | b'.' | b'*'));
            return self.pos + end.unwrap_or(rest.len());
        }
        let mut i = 1;
        while let Some(&b) = rest.get(i) {
            i += 1;
            match b {
                b'\\' => i += 1,
                b'"' => return self.pos + i,
                _ => {}
            }
        }
        self.pos + rest.len()
    }
}

/// White space in a path (`my_isspace`).
fn is_path_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// The text of a JSON string literal, if `literal` is exactly one.
fn json_string(literal: &str) -> Option<String> {
    match parse(literal) {
        Ok(Json::Str(s)) => Some(s),
        _ => None,
    }
}

/// Whether an unquoted member name is an ECMAScript identifier.
fn is_identifier(name: &str) -> bool {
    let combining = |c: char| ('\u{300}'..='\u{36f}').contains(&c);
    let starts = |c: char| c == '$' || c == '_' || (c.is_alphabetic() && !combining(c));
    let continues = |c: char| {
        starts(c)
            || combining(c)
            || c.is_ascii_digit()
            || matches!(
                c,
                '\u{203f}' | '\u{2040}' | '\u{2054}' | '\u{fe33}' | '\u{fe34}' | '\u{fe4d}'
                    ..='\u{fe4f}' | '\u{ff3f}' | '\u{200c}' | '\u{200d}'
            )
    };
    let mut chars = name.chars();
    chars.next().is_some_and(starts) && chars.all(continues)
}

/// A datetime as MySQL prints one in JSON: `YYYY-MM-DD HH:MM:SS.ffffff`,
/// always with microseconds.
fn datetime_text(us: i64) -> String {
    let text = crate::types::format_datetime(us);
    if text.contains('.') {
        text
    } else {
        text + ".000000"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cast_as_json_parses_text_and_wraps_scalars() {
        let one = |v: Value| {
            call(
                "cast_as_json",
                &[JsonArg {
                    value: v,
                    json: false,
                }],
            )
        };
        assert_eq!(
            one(Value::Text("{\"b\":1,\"a\":2}".into())).unwrap(),
            Value::Text("{\"a\": 2, \"b\": 1}".into())
        );
        assert_eq!(one(Value::Int(7)).unwrap(), Value::Text("7".into()));
        assert_eq!(one(Value::Null).unwrap(), Value::Null);
        assert_eq!(
            one(Value::Text("nope".into())).unwrap_err().code,
            ER_INVALID_JSON_TEXT_IN_PARAM
        );
    }

    fn text(s: &str) -> JsonArg {
        JsonArg {
            value: Value::Text(s.into()),
            json: false,
        }
    }

    fn json(s: &str) -> JsonArg {
        JsonArg {
            value: Value::Text(s.into()),
            json: true,
        }
    }

    fn sql(value: Value) -> JsonArg {
        JsonArg { value, json: false }
    }

    fn null() -> JsonArg {
        sql(Value::Null)
    }

    /// The text result of a call that must succeed with text.
    fn t(name: &str, args: &[JsonArg]) -> String {
        match call(name, args) {
            Ok(Value::Text(s)) => s,
            other => panic!("{name}: expected text, got {other:?}"),
        }
    }

    fn int(name: &str, args: &[JsonArg]) -> i64 {
        match call(name, args) {
            Ok(Value::Int(i)) => i,
            other => panic!("{name}: expected an integer, got {other:?}"),
        }
    }

    fn is_null(name: &str, args: &[JsonArg]) -> bool {
        matches!(call(name, args), Ok(Value::Null))
    }

    fn err(name: &str, args: &[JsonArg]) -> SqlError {
        match call(name, args) {
            Err(e) => e,
            Ok(v) => panic!("{name}: expected an error, got {v:?}"),
        }
    }

    fn norm(s: &str) -> String {
        match normalize(s) {
            Ok(n) => n,
            Err(e) => panic!("normalize({s}): {e:?}"),
        }
    }

    fn nested(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn names_and_result_types() {
        for name in [
            "json_extract",
            "json_unquote",
            "json_quote",
            "json_object",
            "json_array",
            "json_valid",
            "json_type",
            "json_length",
            "json_keys",
            "json_contains",
            "json_contains_path",
            "json_set",
            "json_insert",
            "json_replace",
            "json_remove",
            "json_array_append",
            "json_merge_preserve",
            "json_depth",
        ] {
            assert!(arity_ok(name, 0).is_some(), "{name}");
        }
        assert!(arity_ok("json_search", 0).is_none());
        assert!(arity_ok("concat", 0).is_none());
        assert_eq!(err("json_search", &[]).code, 1305);
    }

    #[test]
    fn arity_errors() {
        let e = err("json_object", &[text("a")]);
        assert_eq!(e.code, 1582);
        assert_eq!(
            e.message,
            "Incorrect parameter count in the call to native function 'json_object'"
        );
        assert_eq!(err("json_extract", &[text("[]")]).code, 1582);
        assert_eq!(err("json_set", &[text("[]"), text("$")]).code, 1582);
        assert_eq!(
            err("json_set", &[text("[]"), text("$"), text("1"), text("$")]).code,
            1582
        );
        assert_eq!(err("json_quote", &[text("a"), text("b")]).code, 1582);
        assert_eq!(err("json_length", &[]).code, 1582);
        assert_eq!(
            err("json_contains_path", &[text("[]"), text("one")]).code,
            1582
        );
        assert_eq!(t("json_array", &[]), "[]");
        assert_eq!(t("json_object", &[]), "{}");
    }

    #[test]
    fn normalise_orders_keys_by_length_then_bytes() {
        assert_eq!(
            norm(r#"{"b": 1, "aa": 2, "a": 3, "B": 4, "ab": 5}"#),
            r#"{"B": 4, "a": 3, "b": 1, "aa": 2, "ab": 5}"#
        );
        assert_eq!(norm(r#"{"a":1,"a":2}"#), r#"{"a": 2}"#);
        assert_eq!(
            norm(" [1,{\"x\":[true,false,null]},\t\"s\"]\n"),
            r#"[1, {"x": [true, false, null]}, "s"]"#
        );
        assert_eq!(norm("{}"), "{}");
        assert_eq!(norm("[ ]"), "[]");
        // Multi-byte keys sort by byte length.
        assert_eq!(
            norm(r#"{"é": 1, "zz": 2, "z": 3}"#),
            r#"{"z": 3, "zz": 2, "é": 1}"#
        );
    }

    #[test]
    fn normalise_numbers() {
        assert_eq!(norm("1.0"), "1.0");
        assert_eq!(norm("1e2"), "100.0");
        assert_eq!(norm("-0"), "0");
        assert_eq!(norm("-0.0"), "-0.0");
        assert_eq!(norm("0.1"), "0.1");
        assert_eq!(norm("1.5E-7"), "0.00000015");
        assert_eq!(norm("1e20"), "1e20");
        assert_eq!(norm("18446744073709551615"), "18446744073709551615");
        assert_eq!(norm("-9223372036854775808"), "-9223372036854775808");
        assert_eq!(norm("18446744073709551616"), "1.8446744073709552e19");
    }

    #[test]
    fn doubles_print_like_mysql() {
        let cases = [
            (1.5, "1.5"),
            (1e20, "1e20"),
            (0.1, "0.1"),
            (100.0, "100.0"),
            (0.0, "0.0"),
            (-2.5, "-2.5"),
            (1e15, "1e15"),
            (1e14, "100000000000000.0"),
            (123456789012345680.0, "1.2345678901234568e17"),
            (1234567890123456.7, "1234567890123456.8"),
            (1e-7, "0.0000001"),
            (1e-15, "0.000000000000001"),
            (1e-16, "1e-16"),
            (1.25e-20, "1.25e-20"),
            (3.5e300, "3.5e300"),
            (-1e100, "-1e100"),
            (0.3333333333333333, "0.3333333333333333"),
        ];
        for (x, want) in cases {
            assert_eq!(format_double(x), want, "{x:e}");
        }
    }

    #[test]
    fn normalise_errors() {
        let e = normalize("").unwrap_err();
        assert_eq!(e.code, 3140);
        assert_eq!(
            e.message,
            "Invalid JSON text: \"The document is empty.\" at position 0."
        );
        let cases = [
            ("abc", "Invalid value.", 0),
            ("tru", "Invalid value.", 3),
            ("[1,]", "Invalid value.", 3),
            ("[1 2]", "Missing a comma or ']' after an array element.", 3),
            (
                "{\"a\" 1}",
                "Missing a colon after a name of object member.",
                5,
            ),
            ("{\"a\":1,}", "Missing a name for object member.", 7),
            (
                "{\"a\":1",
                "Missing a comma or '}' after an object member.",
                6,
            ),
            (
                "1 2",
                "The document root must not be followed by other values.",
                2,
            ),
            (
                "01",
                "The document root must not be followed by other values.",
                1,
            ),
            ("\"abc", "Missing a closing quotation mark in string.", 4),
            ("\"a\\x\"", "Invalid escape character in string.", 2),
            (
                "\"\\u12G4\"",
                "Incorrect hex digit after \\u escape in string.",
                1,
            ),
            ("\"\\uD800\"", "The surrogate pair in string is invalid.", 1),
            ("\"\\uDC00\"", "The surrogate pair in string is invalid.", 1),
            ("\"a\tb\"", "Invalid encoding in string.", 2),
            ("1.", "Miss fraction part in number.", 2),
            ("1e+", "Miss exponent in number.", 3),
            ("-", "Invalid value.", 1),
            ("1e400", "Number too big to be stored in double.", 0),
        ];
        for (input, msg, pos) in cases {
            let e = normalize(input).unwrap_err();
            assert_eq!(
                e.message,
                format!("Invalid JSON text: \"{msg}\" at position {pos}."),
                "{input}"
            );
        }
    }

    #[test]
    fn depth_limit() {
        assert_eq!(norm(&nested(100)), nested(100));
        assert_eq!(normalize(&nested(101)).unwrap_err().code, 3157);
        // Hostile nesting fails fast instead of overflowing the stack.
        assert_eq!(normalize(&"[".repeat(1_000_000)).unwrap_err().code, 3157);
        let deep_object = format!("{}1{}", "{\"a\":".repeat(101), "}".repeat(101));
        let e = normalize(&deep_object).unwrap_err();
        assert_eq!(e.code, 3157);
        assert_eq!(
            e.message,
            "The JSON document exceeds the maximum depth of 100."
        );
        // Building past the limit fails too.
        assert_eq!(err("json_array", &[json(&nested(100))]).code, 3157);
    }

    #[test]
    fn escapes() {
        assert_eq!(
            t(
                "json_quote",
                &[text("a\"b\\c/d\n\r\t\u{8}\u{c}\u{1}\u{1f}é😀")]
            ),
            r#""a\"b\\c/d\n\r\t\b\f\u0001\u001fé😀""#
        );
        assert_eq!(norm(r#""\u00e9\ud83d\ude00\/\u0000""#), "\"é😀/\\u0000\"");
        assert_eq!(t("json_unquote", &[text(r#""\t\u0032\"""#)]), "\t2\"");
    }

    #[test]
    fn extract() {
        let doc = text("[10, 20, [30, 40]]");
        assert_eq!(t("json_extract", &[doc.clone(), text("$[1]")]), "20");
        assert_eq!(
            t("json_extract", &[doc.clone(), text("$[1]"), text("$[0]")]),
            "[20, 10]"
        );
        assert_eq!(
            t("json_extract", &[doc.clone(), text("$[2][*]")]),
            "[30, 40]"
        );
        assert_eq!(
            t("json_extract", &[doc.clone(), text("$[last]")]),
            "[30, 40]"
        );
        assert_eq!(t("json_extract", &[doc.clone(), text("$[last - 1]")]), "20");
        assert_eq!(
            t("json_extract", &[doc.clone(), text("$[0 to 1]")]),
            "[10, 20]"
        );
        assert_eq!(
            t("json_extract", &[doc.clone(), text("$")]),
            "[10, 20, [30, 40]]"
        );
        assert!(is_null("json_extract", &[doc.clone(), text("$[3]")]));
        assert!(is_null(
            "json_extract",
            &[doc.clone(), text("$[3]"), text("$[4]")]
        ));
        // One path that could match many always gives an array.
        assert_eq!(t("json_extract", &[doc, text("$[0 to 0]")]), "[10]");
        let obj = text(r#"{"a": "abc", "b": {"c": 1.5}, "d e": [1, 2]}"#);
        assert_eq!(t("json_extract", &[obj.clone(), text("$.a")]), "\"abc\"");
        assert_eq!(
            t("json_extract", &[obj.clone(), text(" $ . b . c ")]),
            "1.5"
        );
        assert_eq!(
            t("json_extract", &[obj.clone(), text(r#"$."d e"[1]"#)]),
            "2"
        );
        assert!(is_null("json_extract", &[obj, text("$.z")]));
        // Repeated paths repeat their matches.
        assert_eq!(
            t("json_extract", &[text("[1]"), text("$[0]"), text("$[0]")]),
            "[1, 1]"
        );
    }

    #[test]
    fn extract_wildcards() {
        let doc = text(r#"{"a": 1, "b": 2, "c": [3, 4, 5]}"#);
        assert_eq!(
            t("json_extract", &[doc.clone(), text("$.*")]),
            "[1, 2, [3, 4, 5]]"
        );
        assert_eq!(
            t("json_extract", &[doc.clone(), text("$.c[*]")]),
            "[3, 4, 5]"
        );
        assert!(is_null("json_extract", &[doc, text("$.x[*]")]));
        let nested = text(r#"{"a": {"b": 1}, "c": {"b": 2}, "b": 0}"#);
        assert_eq!(
            t("json_extract", &[nested.clone(), text("$**.b")]),
            "[0, 1, 2]"
        );
        assert_eq!(t("json_extract", &[nested, text("$.*.b")]), "[1, 2]");
        // `**` then an auto-wrapping leg: every value once.
        assert_eq!(
            t("json_extract", &[text("[[1]]"), text("$**[0]")]),
            "[[1], 1]"
        );
        assert_eq!(
            t("json_extract", &[text("[1, [2, [3]]]"), text("$**[*]")]),
            "[1, [2, [3]], 2, [3], 3]"
        );
    }

    #[test]
    fn extract_autowraps_non_arrays() {
        assert_eq!(
            t("json_extract", &[text(r#"{"a": 1}"#), text("$[0]")]),
            r#"{"a": 1}"#
        );
        assert_eq!(t("json_extract", &[text("5"), text("$[last]")]), "5");
        assert!(is_null("json_extract", &[text("5"), text("$[1]")]));
        assert!(is_null("json_extract", &[text("5"), text("$[*]")]));
    }

    #[test]
    fn extract_nulls_and_errors() {
        assert!(is_null("json_extract", &[null(), text("$")]));
        assert!(is_null("json_extract", &[text("[1]"), null()]));
        assert!(is_null(
            "json_extract",
            &[text("[1]"), text("$[0]"), null()]
        ));
        let e = err("json_extract", &[text(r#"{"a":1"#), text("$")]);
        assert_eq!(e.code, 3141);
        assert_eq!(
            e.message,
            "Invalid JSON text in argument 1 to function json_extract: \
             \"Missing a comma or '}' after an object member.\" at position 6."
        );
        let e = err("json_extract", &[sql(Value::Int(1)), text("$")]);
        assert_eq!(e.code, 3146);
        assert_eq!(
            e.message,
            "Invalid data type for JSON data in argument 1 to function json_extract; \
             a JSON string or JSON type is required."
        );
        let e = err("json_extract", &[text("[]"), text("$.")]);
        assert_eq!(e.code, 3143);
        assert_eq!(
            e.message,
            "Invalid JSON path expression. The error is around character position 2."
        );
    }

    #[test]
    fn path_syntax() {
        let pos = |p: &str| Path::parse(p).unwrap_err();
        assert_eq!(pos(""), 0);
        assert_eq!(pos("a"), 1);
        assert_eq!(pos("$."), 2);
        assert_eq!(pos("$["), 2);
        assert_eq!(pos("$[1"), 3);
        assert_eq!(pos("$[-1]"), 2);
        assert_eq!(pos("$[4294967296]"), 2);
        assert_eq!(pos("$**"), 3);
        assert_eq!(pos("$***.a"), 3);
        assert_eq!(pos("$.a b"), 4);
        assert_eq!(pos("$.1a"), 4);
        assert_eq!(pos("$.a-b"), 5);
        assert_eq!(pos("$.\"a"), 4);
        assert_eq!(pos("$[3 to 1]"), 8);
        assert_eq!(pos("$[last-1 to last-3]"), 18);
        assert_eq!(pos("$a"), 1);
        for ok in [
            "$",
            " $ ",
            "$.a",
            "$.$_a1",
            "$.é",
            "$.\\u0061",
            "$.\"\"",
            "$.\"a.b\\\"\"",
            "$[ 1 ]",
            "$[last]",
            "$[last-2]",
            "$[last - 2 to last]",
            "$[1 to 3]",
            "$[*]",
            "$.*",
            "$**.a",
            "$.a**[0]",
        ] {
            assert!(Path::parse(ok).is_ok(), "{ok}");
        }
        let legs = Path::parse("$.\"a.b\\\"\"").map(|p| p.legs).unwrap();
        assert!(matches!(legs.as_slice(), [Leg::Member(k)] if k == "a.b\""));
    }

    #[test]
    fn unquote() {
        assert_eq!(t("json_unquote", &[text("\"abc\"")]), "abc");
        assert_eq!(t("json_unquote", &[text("abc")]), "abc");
        assert_eq!(t("json_unquote", &[text("\"")]), "\"");
        assert_eq!(t("json_unquote", &[text("[1, 2]")]), "[1, 2]");
        assert_eq!(t("json_unquote", &[json("\"abc\"")]), "abc");
        assert_eq!(t("json_unquote", &[json(r#"["a",1]"#)]), r#"["a", 1]"#);
        assert!(is_null("json_unquote", &[null()]));
        let extracted = t("json_extract", &[text(r#"{"k": "v\"w"}"#), text("$.k")]);
        assert_eq!(t("json_unquote", &[json(&extracted)]), "v\"w");
        let e = err("json_unquote", &[text("\"a\"b\"")]);
        assert_eq!(e.code, 3141);
        assert!(e.message.contains("function json_unquote"));
        let e = err("json_unquote", &[sql(Value::Int(1))]);
        assert_eq!(e.code, 3064);
        assert_eq!(
            e.message,
            "Incorrect type for argument 1 in function json_unquote."
        );
    }

    #[test]
    fn quote() {
        assert_eq!(t("json_quote", &[text("null")]), "\"null\"");
        assert_eq!(t("json_quote", &[text("\"null\"")]), r#""\"null\"""#);
        assert_eq!(t("json_quote", &[text("[1, 2, 3]")]), "\"[1, 2, 3]\"");
        assert!(is_null("json_quote", &[null()]));
        assert_eq!(err("json_quote", &[sql(Value::Int(1))]).code, 3064);
        assert_eq!(err("json_quote", &[json("[1]")]).code, 3064);
    }

    #[test]
    fn object() {
        assert_eq!(
            t(
                "json_object",
                &[
                    text("id"),
                    sql(Value::Int(87)),
                    text("name"),
                    text("carrot")
                ]
            ),
            r#"{"id": 87, "name": "carrot"}"#
        );
        assert_eq!(
            t(
                "json_object",
                &[
                    text("b"),
                    sql(Value::Int(1)),
                    text("a"),
                    null(),
                    text("b"),
                    sql(Value::Bool(true))
                ]
            ),
            r#"{"a": null, "b": true}"#
        );
        assert_eq!(
            t(
                "json_object",
                &[
                    sql(Value::Int(1)),
                    text("[1]"),
                    text("j"),
                    json("[1, \"x\"]")
                ]
            ),
            r#"{"1": "[1]", "j": [1, "x"]}"#
        );
        assert_eq!(
            t(
                "json_object",
                &[
                    text("f"),
                    sql(Value::Float(2.0)),
                    text("v"),
                    sql(Value::Vector(vec![1.0, 0.5]))
                ]
            ),
            r#"{"f": 2.0, "v": [1.0, 0.5]}"#
        );
        let e = err("json_object", &[null(), sql(Value::Int(1))]);
        assert_eq!(e.code, 3158);
        assert_eq!(
            e.message,
            "JSON documents may not contain NULL member names."
        );
        assert_eq!(err("json_object", &[text("a"), json("[1")]).code, 3141);
    }

    #[test]
    fn array() {
        assert_eq!(
            t(
                "json_array",
                &[
                    sql(Value::Int(1)),
                    text("abc"),
                    null(),
                    sql(Value::Bool(true)),
                    sql(Value::Float(1e20)),
                    json("{\"b\":1,\"a\":2}"),
                ]
            ),
            r#"[1, "abc", null, true, 1e20, {"a": 2, "b": 1}]"#
        );
        assert_eq!(t("json_array", &[sql(Value::Float(f64::NAN))]), "[null]");
    }

    #[test]
    fn datetimes_become_strings() {
        let at = |us: i64| t("json_array", &[sql(Value::DateTime(us))]);
        assert_eq!(at(0), r#"["1970-01-01 00:00:00.000000"]"#);
        assert_eq!(
            at(1_700_000_000_123_456),
            r#"["2023-11-14 22:13:20.123456"]"#
        );
        assert_eq!(at(-1), r#"["1969-12-31 23:59:59.999999"]"#);
        assert_eq!(at(951_782_400_000_000), r#"["2000-02-29 00:00:00.000000"]"#);
    }

    #[test]
    fn valid() {
        assert_eq!(int("json_valid", &[text(r#"{"a": 1}"#)]), 1);
        assert_eq!(int("json_valid", &[text("hello")]), 0);
        assert_eq!(int("json_valid", &[text("")]), 0);
        assert_eq!(int("json_valid", &[sql(Value::Int(1))]), 0);
        assert_eq!(int("json_valid", &[json("[1]")]), 1);
        assert!(is_null("json_valid", &[null()]));
        assert_eq!(err("json_valid", &[text(&nested(101))]).code, 3157);
    }

    #[test]
    fn json_type() {
        let ty = |s: &str| t("json_type", &[text(s)]);
        assert_eq!(ty(r#"{"a": 1}"#), "OBJECT");
        assert_eq!(ty("[1]"), "ARRAY");
        assert_eq!(ty("\"s\""), "STRING");
        assert_eq!(ty("-3"), "INTEGER");
        assert_eq!(ty("4294967295"), "INTEGER");
        assert_eq!(ty("4294967296"), "UNSIGNED INTEGER");
        assert_eq!(ty("1.0"), "DOUBLE");
        assert_eq!(ty("true"), "BOOLEAN");
        assert_eq!(ty("null"), "NULL");
        assert!(is_null("json_type", &[null()]));
        assert_eq!(err("json_type", &[text("x")]).code, 3141);
    }

    #[test]
    fn length() {
        assert_eq!(int("json_length", &[text(r#"[1, 2, {"a": 3}]"#)]), 3);
        assert_eq!(
            int("json_length", &[text(r#"{"a": 1, "b": {"c": 30}}"#)]),
            2
        );
        assert_eq!(
            int(
                "json_length",
                &[text(r#"{"a": 1, "b": {"c": 30}}"#), text("$.b")]
            ),
            1
        );
        assert_eq!(int("json_length", &[text("\"abc\"")]), 1);
        assert_eq!(int("json_length", &[text("7"), text("$[0]")]), 1);
        assert!(is_null("json_length", &[text("[]"), text("$[0]")]));
        assert!(is_null("json_length", &[text("[]"), null()]));
        assert!(is_null("json_length", &[null()]));
        let e = err("json_length", &[text("[]"), text("$[*]")]);
        assert_eq!(e.code, 3149);
        assert_eq!(
            e.message,
            "In this situation, path expressions may not contain the * and ** tokens or an array range."
        );
    }

    #[test]
    fn keys() {
        let doc = text(r#"{"a": 1, "b": {"c": 30}, "aa": 2}"#);
        assert_eq!(
            t("json_keys", std::slice::from_ref(&doc)),
            r#"["a", "b", "aa"]"#
        );
        assert_eq!(t("json_keys", &[doc.clone(), text("$.b")]), r#"["c"]"#);
        assert!(is_null("json_keys", &[doc.clone(), text("$.a")]));
        assert!(is_null("json_keys", &[doc, text("$.z")]));
        assert!(is_null("json_keys", &[text("[1]")]));
        // No auto-wrapping for JSON_KEYS.
        assert!(is_null("json_keys", &[text(r#"{"a": 1}"#), text("$[0]")]));
    }

    #[test]
    fn contains() {
        let doc = text(r#"{"a": 1, "b": 2, "c": {"d": 4}}"#);
        let has = |cand: &str, path: Option<&str>| {
            let mut args = vec![doc.clone(), text(cand)];
            args.extend(path.map(text));
            int("json_contains", &args)
        };
        assert_eq!(has("1", Some("$.a")), 1);
        assert_eq!(has("1", Some("$.b")), 0);
        assert_eq!(has(r#"{"d": 4}"#, Some("$.a")), 0);
        assert_eq!(has(r#"{"d": 4}"#, Some("$.c")), 1);
        assert_eq!(has(r#"{"a": 1, "c": {}}"#, None), 1);
        assert_eq!(has(r#"{"a": 1.0}"#, None), 1);
        assert_eq!(has(r#"{"a": "1"}"#, None), 0);
        assert!(is_null(
            "json_contains",
            &[doc.clone(), text("1"), text("$.z")]
        ));
        let arr = |target: &str, cand: &str| int("json_contains", &[text(target), text(cand)]);
        assert_eq!(arr("[1, 2, [3, 4]]", "[2, 1]"), 1);
        assert_eq!(arr("[1, 2, [3, 4]]", "[3]"), 1);
        assert_eq!(arr("[1, 2, [3, 4]]", "3"), 1);
        assert_eq!(arr("[1, 2, [3, 4]]", "[[4]]"), 1);
        assert_eq!(arr("[1, 2, [3, 4]]", "[5]"), 0);
        assert_eq!(arr("[1, 2]", "[]"), 1);
        assert_eq!(arr(r#"[{"a": 1, "b": 2}]"#, r#"{"a": 1}"#), 1);
        assert_eq!(arr("\"a\"", "\"a\""), 1);
        assert_eq!(arr("1", "[1]"), 0);
        assert!(is_null("json_contains", &[null(), text("1")]));
        assert!(is_null("json_contains", &[text("1"), null()]));
        assert_eq!(
            err("json_contains", &[text("[1]"), sql(Value::Int(1))]).code,
            3146
        );
        assert_eq!(
            err("json_contains", &[text("[1]"), text("1"), text("$[*]")]).code,
            3149
        );
    }

    #[test]
    fn contains_path() {
        let doc = text(r#"{"a": 1, "b": 2, "c": {"d": 4}}"#);
        let cp = |mode: &str, paths: &[&str]| {
            let mut args = vec![doc.clone(), text(mode)];
            args.extend(paths.iter().map(|p| text(p)));
            int("json_contains_path", &args)
        };
        assert_eq!(cp("one", &["$.a", "$.e"]), 1);
        assert_eq!(cp("all", &["$.a", "$.e"]), 0);
        assert_eq!(cp("ALL", &["$.a", "$.c.d"]), 1);
        assert_eq!(cp("One", &["$.c.d"]), 1);
        assert_eq!(cp("one", &["$.x", "$.*"]), 1);
        assert_eq!(cp("one", &["$[0]"]), 1);
        assert!(is_null(
            "json_contains_path",
            &[doc.clone(), null(), text("$")]
        ));
        assert!(is_null(
            "json_contains_path",
            &[doc.clone(), text("all"), text("$.a"), null()]
        ));
        // 'one' stops at the first match, before a later NULL path.
        assert_eq!(
            int(
                "json_contains_path",
                &[doc.clone(), text("one"), text("$.a"), null()]
            ),
            1
        );
        let e = err("json_contains_path", &[doc, text("any"), text("$")]);
        assert_eq!(e.code, 3154);
        assert_eq!(
            e.message,
            "The oneOrAll argument to json_contains_path may take these values: 'one' or 'all'."
        );
    }

    #[test]
    fn set_insert_replace() {
        let doc = text(r#"{ "a": 1, "b": [2, 3]}"#);
        let args = |doc: &JsonArg| {
            [
                doc.clone(),
                text("$.a"),
                sql(Value::Int(10)),
                text("$.c"),
                text("[true, false]"),
            ]
        };
        assert_eq!(
            t("json_set", &args(&doc)),
            r#"{"a": 10, "b": [2, 3], "c": "[true, false]"}"#
        );
        assert_eq!(
            t("json_insert", &args(&doc)),
            r#"{"a": 1, "b": [2, 3], "c": "[true, false]"}"#
        );
        assert_eq!(t("json_replace", &args(&doc)), r#"{"a": 10, "b": [2, 3]}"#);
        let set = |doc: &str, path: &str, v: JsonArg| t("json_set", &[text(doc), text(path), v]);
        assert_eq!(set("[1, 2]", "$[5]", sql(Value::Int(3))), "[1, 2, 3]");
        assert_eq!(set("[1, 2]", "$[0]", null()), "[null, 2]");
        assert_eq!(set("[1, 2]", "$[last-5]", sql(Value::Int(0))), "[0, 1, 2]");
        assert_eq!(set("\"x\"", "$[0]", text("a")), "\"a\"");
        assert_eq!(set("\"x\"", "$[1]", text("a")), r#"["x", "a"]"#);
        assert_eq!(set(r#"{"a": 1}"#, "$", json("[1]")), "[1]");
        assert_eq!(
            set(r#"{"a": 1}"#, "$.b.c", sql(Value::Int(2))),
            r#"{"a": 1}"#
        );
        assert_eq!(
            set(r#"{"a": {}}"#, "$.a.b", json(r#"{"c": 2}"#)),
            r#"{"a": {"b": {"c": 2}}}"#
        );
        assert_eq!(
            set(r#"{"a": [1]}"#, "$.a[0][1]", sql(Value::Int(2))),
            r#"{"a": [[1, 2]]}"#
        );
        assert_eq!(
            t(
                "json_insert",
                &[text("1"), text("$[1]"), sql(Value::Int(2))]
            ),
            "[1, 2]"
        );
        assert_eq!(
            t(
                "json_insert",
                &[text("1"), text("$[0]"), sql(Value::Int(2))]
            ),
            "1"
        );
        assert_eq!(
            t("json_insert", &[text("[1]"), text("$"), sql(Value::Int(2))]),
            "[1]"
        );
        assert_eq!(
            t(
                "json_replace",
                &[text("[1]"), text("$[1]"), sql(Value::Int(2))]
            ),
            "[1]"
        );
        // Pairs apply in order, each to the result of the one before.
        assert_eq!(
            t(
                "json_set",
                &[
                    text("{}"),
                    text("$.a"),
                    json("[]"),
                    text("$.a[0]"),
                    sql(Value::Int(1))
                ]
            ),
            r#"{"a": [1]}"#
        );
        assert!(is_null(
            "json_set",
            &[null(), text("$"), sql(Value::Int(1))]
        ));
        assert!(is_null(
            "json_set",
            &[text("[]"), null(), sql(Value::Int(1))]
        ));
        assert_eq!(
            err("json_set", &[text("[]"), text("$[*]"), sql(Value::Int(1))]).code,
            3149
        );
        assert_eq!(
            err(
                "json_insert",
                &[text("[]"), text("$**.a"), sql(Value::Int(1))]
            )
            .code,
            3149
        );
        assert_eq!(
            err(
                "json_replace",
                &[text("[]"), text("$[0 to 1]"), sql(Value::Int(1))]
            )
            .code,
            3149
        );
    }

    #[test]
    fn writes_cannot_nest_past_the_limit() {
        let set = |value: &str| call("json_set", &[text("[]"), text("$[0]"), json(value)]);
        assert_eq!(
            set(&nested(99)).map_err(|e| e.code),
            Ok(Value::Text(format!("[{}]", nested(99))))
        );
        assert_eq!(set(&nested(100)).unwrap_err().code, 3157);
        let append = call(
            "json_array_append",
            &[text("[]"), text("$"), json(&nested(100))],
        );
        assert_eq!(append.unwrap_err().code, 3157);
        let merged = call("json_merge_preserve", &[text("1"), json(&nested(100))]);
        assert_eq!(
            merged.map_err(|e| e.code),
            Ok(Value::Text(format!("[1, {}]", nested(99))))
        );
    }

    #[test]
    fn remove() {
        assert_eq!(
            t(
                "json_remove",
                &[text(r#"["a", ["b", "c"], "d"]"#), text("$[1]")]
            ),
            r#"["a", "d"]"#
        );
        assert_eq!(
            t(
                "json_remove",
                &[
                    text(r#"{"a": 1, "b": [1, 2]}"#),
                    text("$.a"),
                    text("$.b[last]")
                ]
            ),
            r#"{"b": [1]}"#
        );
        assert_eq!(
            t("json_remove", &[text("[1, 2]"), text("$[5]"), text("$.a")]),
            "[1, 2]"
        );
        // `$.a[0]` of a scalar `a` means `a` itself.
        assert_eq!(
            t(
                "json_remove",
                &[text(r#"{"a": 1, "b": 2}"#), text("$.a[0]")]
            ),
            r#"{"b": 2}"#
        );
        let e = err("json_remove", &[text("[1]"), text("$")]);
        assert_eq!(e.code, 3153);
        assert_eq!(
            e.message,
            "The path expression '$' is not allowed in this context."
        );
        assert!(is_null("json_remove", &[text("[1]"), text("$[0]"), null()]));
        assert_eq!(err("json_remove", &[text("[1]"), text("$[*]")]).code, 3149);
    }

    #[test]
    fn array_append() {
        let doc = text(r#"["a", ["b", "c"], "d"]"#);
        let append = |doc: &JsonArg, path: &str, v: JsonArg| {
            t("json_array_append", &[doc.clone(), text(path), v])
        };
        assert_eq!(
            append(&doc, "$[1]", sql(Value::Int(1))),
            r#"["a", ["b", "c", 1], "d"]"#
        );
        assert_eq!(
            append(&doc, "$[0]", sql(Value::Int(2))),
            r#"[["a", 2], ["b", "c"], "d"]"#
        );
        assert_eq!(
            append(&doc, "$[1][0]", sql(Value::Int(3))),
            r#"["a", [["b", 3], "c"], "d"]"#
        );
        let obj = text(r#"{"a": 1, "b": [2, 3], "c": 4}"#);
        assert_eq!(
            append(&obj, "$.b", text("x")),
            r#"{"a": 1, "b": [2, 3, "x"], "c": 4}"#
        );
        assert_eq!(
            append(&obj, "$.c", text("y")),
            r#"{"a": 1, "b": [2, 3], "c": [4, "y"]}"#
        );
        assert_eq!(
            append(&obj, "$.z", text("y")),
            r#"{"a": 1, "b": [2, 3], "c": 4}"#
        );
        assert_eq!(
            append(&text(r#"{"a": 1}"#), "$", text("z")),
            r#"[{"a": 1}, "z"]"#
        );
        assert_eq!(append(&text("1"), "$[0]", null()), "[1, null]");
    }

    #[test]
    fn merge_preserve() {
        let merge = |docs: &[&str]| {
            let args: Vec<_> = docs.iter().map(|d| text(d)).collect();
            t("json_merge_preserve", &args)
        };
        assert_eq!(merge(&["[1, 2]", "[true, false]"]), "[1, 2, true, false]");
        assert_eq!(
            merge(&[r#"{"name": "x"}"#, r#"{"id": 47}"#]),
            r#"{"id": 47, "name": "x"}"#
        );
        assert_eq!(merge(&["1", "true"]), "[1, true]");
        assert_eq!(merge(&["[1, 2]", r#"{"id": 47}"#]), r#"[1, 2, {"id": 47}]"#);
        assert_eq!(
            merge(&[
                r#"{"a": 1, "b": 2}"#,
                r#"{"a": 3, "c": 4}"#,
                r#"{"a": 5, "d": 6}"#
            ]),
            r#"{"a": [1, 3, 5], "b": 2, "c": 4, "d": 6}"#
        );
        assert_eq!(
            merge(&[r#"{"a": {"x": 1}}"#, r#"{"a": {"x": 2, "y": 3}}"#]),
            r#"{"a": {"x": [1, 2], "y": 3}}"#
        );
        assert!(is_null("json_merge_preserve", &[text("[1]"), null()]));
        assert_eq!(err("json_merge_preserve", &[text("[1]"), text("[")]).message,
            "Invalid JSON text in argument 2 to function json_merge_preserve: \"Invalid value.\" at position 1.");
    }

    #[test]
    fn depth() {
        let depth = |s: &str| int("json_depth", &[text(s)]);
        assert_eq!(depth("{}"), 1);
        assert_eq!(depth("[]"), 1);
        assert_eq!(depth("true"), 1);
        assert_eq!(depth("[10, 20]"), 2);
        assert_eq!(depth(r#"[[], {}]"#), 2);
        assert_eq!(depth(r#"[10, {"a": 20}]"#), 3);
        assert_eq!(depth(&nested(100)), 100);
        assert!(is_null("json_depth", &[null()]));
    }

    #[test]
    fn json_typed_arguments_nest() {
        let inner = t("json_object", &[text("k"), text("v")]);
        assert_eq!(
            t("json_array", &[json(&inner), text(&inner)]),
            r#"[{"k": "v"}, "{\"k\": \"v\"}"]"#
        );
        let extracted = t("json_extract", &[text(r#"{"a": "x"}"#), text("$.a")]);
        assert_eq!(t("json_array", &[json(&extracted)]), r#"["x"]"#);
        assert_eq!(err("json_array", &[json("{")]).code, 3141);
    }
}
