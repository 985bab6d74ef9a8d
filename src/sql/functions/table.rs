//! The table of functions: one entry per function, in sections. Adding a
//! function is adding an entry here (and writing its evaluator); the
//! compiler, the typing code, the evaluator's dispatch, the privilege
//! check, the planner's determinism test and `docs/FUNCTIONS.md` read it.

use super::Category::{
    Aggregate, ControlFlow, DateTime as Dt, FaultInjection, Internal, Json, Numeric, Regexp,
    Session, String as Str, Vector, Window,
};
use super::Eval::{Exprs, Host, Rewritten, Values};
use super::Returns::{Fixed, Rule};
use super::TextLen::{OfFirstArg, SumOfArgs};
use super::{control, def, digest, scalar, uuid, FunctionDef, Parity, Purity, VARIADIC};
use crate::sql::agg_stats::StatFunc;
use crate::sql::expr::tree::{
    AggFunc, WinFunc, FIXED_TEXT, HEX_OPERAND, IS_FALSE, IS_TRUE, JSON_AGG, LIKE_BINARY, SHOW_SCALE,
};
use crate::sql::expr::{datetime, regexp};
use crate::types::ColumnKind::{Bytes, Date, DateTime, Float, Int, Text};

const V: u8 = VARIADIC;
const DT_CALL: super::Eval = Values(datetime::call);
const RE_CALL: super::Eval = Values(regexp::call);
const NUMERIC_RULE: super::Returns = Rule("its argument's type (DOUBLE for a string)");
const ARGS_RULE: super::Returns = Rule("the common type of the arguments it may return");

/// Every function the engine implements.
pub(crate) static FUNCTIONS: &[FunctionDef] = &[
    // ---- window functions (only with OVER; compiled into slots the window operator fills)
    def(Window, "row_number", (0, 0), Fixed(Int), super::Eval::Window(WinFunc::RowNumber),
        "The row's number in its partition, from 1, in the window's order."),
    def(Window, "rank", (0, 0), Fixed(Int), super::Eval::Window(WinFunc::Rank),
        "The row's rank in its partition: peers share one, with gaps after them."),
    def(Window, "dense_rank", (0, 0), Fixed(Int), super::Eval::Window(WinFunc::DenseRank),
        "The row's rank in its partition without gaps."),
    def(Window, "percent_rank", (0, 0), Fixed(Float), super::Eval::Window(WinFunc::PercentRank),
        "(rank - 1) / (partition rows - 1); 0 in a one-row partition."),
    def(Window, "cume_dist", (0, 0), Fixed(Float), super::Eval::Window(WinFunc::CumeDist),
        "Rows up to and including the row's last peer / partition rows."),
    def(Window, "ntile", (1, 1), Fixed(Int), super::Eval::Window(WinFunc::Ntile),
        "The row's bucket (1..n) when the partition is cut into n as equal as possible; n a positive integer constant."),
    def(Window, "lag", (1, 3), Rule("its first argument's type"), super::Eval::Window(WinFunc::Lag),
        "LAG(x [, n [, default]]): x of the row n (a constant, default 1) before in the partition, else default (NULL)."),
    def(Window, "lead", (1, 3), Rule("its first argument's type"), super::Eval::Window(WinFunc::Lead),
        "LEAD(x [, n [, default]]): x of the row n (a constant, default 1) after in the partition, else default (NULL)."),
    def(Window, "first_value", (1, 1), Rule("its argument's type"), super::Eval::Window(WinFunc::FirstValue),
        "x of the first row of the frame."),
    def(Window, "last_value", (1, 1), Rule("its argument's type"), super::Eval::Window(WinFunc::LastValue),
        "x of the last row of the frame."),
    def(Window, "nth_value", (2, 2), Rule("its first argument's type"), super::Eval::Window(WinFunc::NthValue),
        "NTH_VALUE(x, n): x of the frame's n-th row (n a positive integer constant), else NULL."),
    // ---- aggregates (compiled into slots; OVER makes them window functions)
    def(Aggregate, "count", (1, 1), Fixed(Int), super::Eval::Aggregate(AggFunc::Count),
        "Number of non-NULL values (`COUNT(*)`: of rows); `DISTINCT` counts distinct ones."),
    def(Aggregate, "sum", (1, 1), Rule("DECIMAL for exact arguments (p + 22 digits), else DOUBLE"),
        super::Eval::Aggregate(AggFunc::Sum), "Sum of the non-NULL values; NULL when there is none."),
    def(Aggregate, "avg", (1, 1), Rule("DECIMAL with 4 more fractional digits for exact arguments, else DOUBLE"),
        super::Eval::Aggregate(AggFunc::Avg), "Mean of the non-NULL values."),
    def(Aggregate, "min", (1, 1), Rule("the argument's type"), super::Eval::Aggregate(AggFunc::Min),
        "Smallest non-NULL value (under the argument's collation)."),
    def(Aggregate, "max", (1, 1), Rule("the argument's type"), super::Eval::Aggregate(AggFunc::Max),
        "Largest non-NULL value (under the argument's collation)."),
    def(Aggregate, "std", (1, 1), Fixed(Float), super::Eval::Aggregate(AggFunc::Stat(StatFunc::StdPop)),
        "Population standard deviation of the non-NULL values (DOUBLE, the argument's decimals + 4).")
        .aliases(&["stddev", "stddev_pop"]),
    def(Aggregate, "stddev_samp", (1, 1), Fixed(Float), super::Eval::Aggregate(AggFunc::Stat(StatFunc::StdSamp)),
        "Sample standard deviation; NULL over fewer than two values."),
    def(Aggregate, "variance", (1, 1), Fixed(Float), super::Eval::Aggregate(AggFunc::Stat(StatFunc::VarPop)),
        "Population variance of the non-NULL values.")
        .aliases(&["var_pop"]),
    def(Aggregate, "var_samp", (1, 1), Fixed(Float), super::Eval::Aggregate(AggFunc::Stat(StatFunc::VarSamp)),
        "Sample variance; NULL over fewer than two values."),
    def(Aggregate, "bit_and", (1, 1), Rule("BIGINT UNSIGNED (BIGINT here)"), super::Eval::Aggregate(AggFunc::Stat(StatFunc::BitAnd)),
        "Bitwise AND of the non-NULL values as 64-bit unsigned; 18446744073709551615 over none."),
    def(Aggregate, "bit_or", (1, 1), Rule("BIGINT UNSIGNED (BIGINT here)"), super::Eval::Aggregate(AggFunc::Stat(StatFunc::BitOr)),
        "Bitwise OR of the non-NULL values as 64-bit unsigned; 0 over none."),
    def(Aggregate, "bit_xor", (1, 1), Rule("BIGINT UNSIGNED (BIGINT here)"), super::Eval::Aggregate(AggFunc::Stat(StatFunc::BitXor)),
        "Bitwise XOR of the non-NULL values as 64-bit unsigned; 0 over none."),
    def(Aggregate, "json_arrayagg", (1, 1), Fixed(Text), super::Eval::Aggregate(AggFunc::Stat(StatFunc::JsonArray { json: false })),
        "A JSON array of the values, NULLs as null; NULL over no row.")
        .json(),
    def(Aggregate, "json_objectagg", (2, 2), Fixed(Text), super::Eval::Aggregate(AggFunc::Stat(StatFunc::JsonObject)),
        "A JSON object of key / value pairs, the last duplicate key winning; a NULL key is 3158.")
        .json(),
    // ---- control flow
    def(ControlFlow, "coalesce", (1, V), ARGS_RULE, Exprs(control::coalesce),
        "The first non-NULL argument; the ones after it are not evaluated."),
    def(ControlFlow, "ifnull", (2, 2), ARGS_RULE, Exprs(control::ifnull),
        "The first argument unless it is NULL, else the second."),
    def(ControlFlow, "if", (3, 3), ARGS_RULE, Exprs(control::if_),
        "The second argument when the first is true, else the third."),
    def(ControlFlow, "nullif", (2, 2), Rule("the first argument's type"), Values(scalar::nullif),
        "NULL when the two arguments are equal, else the first."),
    def(ControlFlow, "greatest", (2, V), ARGS_RULE, Values(scalar::greatest),
        "The largest argument (NULL if one is NULL); numbers compare as numbers, else as strings.")
        .aliases(&["least"]),
    // ---- numeric
    def(Numeric, "abs", (1, 1), NUMERIC_RULE, Values(scalar::abs), "Absolute value."),
    def(Numeric, "floor", (1, 1), Rule("BIGINT, DECIMAL past 18 digits, DOUBLE of a DOUBLE"),
        Values(scalar::floor), "Largest integer not above the argument (CEIL: smallest not below).")
        .aliases(&["ceil", "ceiling"]),
    def(Numeric, "round", (1, 2), NUMERIC_RULE, Values(scalar::round),
        "Round to D decimals (default 0): exact values half away from zero, DOUBLEs half to even."),
    def(Numeric, "truncate", (2, 2), NUMERIC_RULE, Values(scalar::truncate),
        "Cut to D decimals (negative D: zero that many integer digits)."),
    def(Numeric, "mod", (2, 2), NUMERIC_RULE, Values(scalar::mod_), "Remainder of N / M (`N % M`)."),
    def(Numeric, "sign", (1, 1), Fixed(Int), Values(scalar::sign), "-1, 0 or 1 as the argument is negative, zero or positive."),
    def(Numeric, "sqrt", (1, 1), Fixed(Float), Values(scalar::sqrt), "Square root; NULL for a negative argument."),
    def(Numeric, "pow", (2, 2), Fixed(Float), Values(scalar::pow_),
        "X raised to the power Y (ATAN2: arc tangent of Y / X by quadrant); out of range is 1690.")
        .aliases(&["power", "atan2"]),
    def(Numeric, "exp", (1, 1), Fixed(Float), Values(scalar::exp),
        "The math function of its name; NULL outside its domain (LN, LOG2, LOG10 of x <= 0; ASIN, ACOS outside [-1, 1]).")
        .aliases(&["sin", "cos", "tan", "cot", "asin", "acos", "ln", "log2", "log10", "degrees", "radians"]),
    def(Numeric, "log", (1, 2), Fixed(Float), Values(scalar::log),
        "Natural logarithm of X, or (two arguments) logarithm of X to base B."),
    def(Numeric, "atan", (1, 2), Fixed(Float), Values(scalar::atan), "Arc tangent of X, or of Y / X by quadrant."),
    def(Numeric, "pi", (0, 0), Fixed(Float), Values(scalar::pi), "π (shown with 6 decimals).")
        .decimals(6),
    // ---- string
    def(Str, "lower", (1, 1), Fixed(Text), Values(scalar::lower), "Lower-case (a binary string: unchanged).").aliases(&["lcase"])
        .text_len(OfFirstArg).binary_with_binary_arg(),
    def(Str, "upper", (1, 1), Fixed(Text), Values(scalar::upper), "Upper-case (a binary string: unchanged).").aliases(&["ucase"])
        .text_len(OfFirstArg).binary_with_binary_arg(),
    def(Str, "length", (1, 1), Fixed(Int), Values(scalar::length), "Length in bytes (UTF-8; a binary string's own).")
        .aliases(&["octet_length"]),
    def(Str, "char_length", (1, 1), Fixed(Int), Values(scalar::char_length), "Length in characters (of a binary string: bytes).")
        .aliases(&["character_length"]),
    def(Str, "concat", (1, V), Fixed(Text), Values(scalar::concat),
        "The arguments joined; NULL if one is NULL; a binary string if one argument is.")
        .text_len(SumOfArgs).binary_with_binary_arg(),
    def(Str, "concat_ws", (2, V), Fixed(Text), Values(scalar::concat_ws),
        "The non-NULL arguments after the first joined with the first as separator; binary if one argument is.")
        .binary_with_binary_arg(),
    def(Str, "substring", (2, 3), Fixed(Text), Values(scalar::substring),
        "LEN characters (default: to the end) from 1-based POS (negative: from the end); bytes of a binary string.")
        .aliases(&["substr", "mid"]).binary_with_binary_arg(),
    def(Str, "left", (2, 2), Fixed(Text), Values(scalar::left),
        "The first N characters (RIGHT: the last N); bytes of a binary string.").aliases(&["right"])
        .binary_with_binary_arg(),
    def(Str, "lpad", (3, 3), Fixed(Text), Values(scalar::lpad),
        "Padded on the left (RPAD: right) with PAD, or cut, to LEN characters (bytes of a binary string).").aliases(&["rpad"])
        .binary_with_binary_arg(),
    def(Str, "ltrim", (1, 1), Fixed(Text), Values(scalar::ltrim),
        "Leading (RTRIM: trailing, TRIM: both) spaces removed.").aliases(&["rtrim", "trim"])
        .text_len(OfFirstArg).binary_with_binary_arg(),
    def(Str, "replace", (3, 3), Fixed(Text), Values(scalar::replace), "Every FROM replaced by TO (byte-wise with a binary argument).")
        .binary_with_binary_arg(),
    def(Str, "instr", (2, 2), Fixed(Int), Values(scalar::instr),
        "1-based position of SUBSTR in STR, 0 if absent (in bytes with a binary argument)."),
    def(Str, "locate", (2, 3), Fixed(Int), Values(scalar::instr),
        "1-based position of SUBSTR in STR from POS (default 1), 0 if absent (also `POSITION(s IN str)`; bytes with a binary argument)."),
    def(Str, "reverse", (1, 1), Fixed(Text), Values(scalar::reverse), "Characters (of a binary string: bytes) in reverse order.")
        .text_len(OfFirstArg).binary_with_binary_arg(),
    def(Str, "repeat", (2, 2), Fixed(Text), Values(scalar::repeat), "STR repeated COUNT times.")
        .binary_with_binary_arg(),
    def(Str, "space", (1, 1), Fixed(Text), Values(scalar::space), "N spaces."),
    // ---- regular expressions (ICU syntax, as MySQL 8)
    def(Regexp, "regexp_like", (2, 3), Fixed(Int), RE_CALL,
        "1 if the pattern matches (also `expr REGEXP pat`), with optional match type."),
    def(Regexp, "regexp_instr", (2, 6), Fixed(Int), RE_CALL, "Position of a match (POS, OCCURRENCE, RETURN_OPTION, match type)."),
    def(Regexp, "regexp_substr", (2, 5), Fixed(Text), RE_CALL, "The matching substring (POS, OCCURRENCE, match type)."),
    def(Regexp, "regexp_replace", (3, 6), Fixed(Text), RE_CALL, "Matches replaced (POS, OCCURRENCE, match type)."),
    // ---- date and time
    def(Dt, "curdate", (0, 0), Fixed(Date), DT_CALL, "Today's date (UTC).")
        .aliases(&["current_date", "utc_date"]),
    def(Dt, "curtime", (0, 0), Fixed(Text), DT_CALL, "The time of day (UTC).")
        .aliases(&["current_time", "utc_time"]),
    def(Dt, "utc_timestamp", (0, 0), Fixed(DateTime(Some(0))), DT_CALL, "The current date and time (UTC, whole seconds)."),
    def(Dt, "now", (0, 1), Fixed(DateTime(None)), Values(scalar::now),
        "The current date and time (UTC), whole seconds or NOW(fsp) with fsp fractional digits.")
        .aliases(&["current_timestamp", "sysdate"])
        .purity(Purity::Volatile),
    def(Dt, "date", (1, 1), Fixed(Date), DT_CALL, "The date part.").aliases(&["last_day"]),
    def(Dt, "time", (1, 1), Fixed(Text), DT_CALL, "The time part."),
    def(Dt, "year", (1, 1), Fixed(Int), DT_CALL, "The named field of a date or datetime.")
        .aliases(&["month", "day", "dayofmonth", "dayofweek", "dayofyear", "weekday", "quarter", "to_days"]),
    def(Dt, "hour", (1, 1), Fixed(Int), DT_CALL, "The named field of a time or datetime.")
        .aliases(&["minute", "second", "microsecond"]),
    def(Dt, "week", (1, 2), Fixed(Int), DT_CALL, "Week number under MODE (default 0)."),
    def(Dt, "monthname", (1, 1), Fixed(Text), DT_CALL, "English name of the month (DAYNAME: of the weekday).")
        .aliases(&["dayname"]),
    def(Dt, "datediff", (2, 2), Fixed(Int), DT_CALL, "Days from the second date to the first."),
    def(Dt, "timestampdiff", (3, 3), Fixed(Int), DT_CALL, "Whole UNITs from the second datetime to the third."),
    def(Dt, "timestampadd", (3, 3), Fixed(Text), DT_CALL, "The datetime plus N UNITs."),
    def(Dt, "date_add", (2, 2), Rule("DATE for a DATE plus days or longer, else DATETIME; text stays text"),
        Rewritten, "The date plus an `INTERVAL n unit` (ADDDATE(d, n): n days).")
        .aliases(&["adddate"]),
    def(Dt, "date_sub", (2, 2), Rule("as DATE_ADD"), Rewritten,
        "The date minus an `INTERVAL n unit` (SUBDATE(d, n): n days).")
        .aliases(&["subdate"]),
    def(Dt, "unix_timestamp", (0, 1), Rule("BIGINT; DECIMAL for a literal with fractional seconds"), DT_CALL,
        "Seconds since 1970-01-01 UTC of the argument (default: now)."),
    def(Dt, "convert_tz", (3, 3), Fixed(DateTime(None)), DT_CALL,
        "CONVERT_TZ(dt, from, to): dt read on the clock of zone `from`, on the clock of `to`; a zone is SYSTEM (UTC), '+HH:MM' or an IANA name. NULL for an unknown zone; unchanged outside the TIMESTAMP range."),
    def(Dt, "from_unixtime", (1, 2), Rule("DATETIME; VARCHAR with a format"), DT_CALL,
        "The datetime of a Unix timestamp, or its text under FORMAT."),
    def(Dt, "date_format", (2, 2), Fixed(Text), DT_CALL, "The date as text under a MySQL format string."),
    def(Dt, "str_to_date", (2, 2), Fixed(Text), DT_CALL, "The date a string holds under a MySQL format string."),
    // ---- JSON
    def(Json, "json_extract", (2, V), Fixed(Text), Exprs(control::json), "The values at the paths (also `doc->path`).")
        .json(),
    def(Json, "json_unquote", (1, 1), Fixed(Text), Exprs(control::json), "A JSON string's text (`doc->>path`)."),
    def(Json, "json_quote", (1, 1), Fixed(Text), Exprs(control::json), "A string as a JSON string."),
    def(Json, "json_object", (0, V), Fixed(Text), Exprs(control::json), "An object of key, value pairs.")
        .parity(Parity::Even)
        .json(),
    def(Json, "json_array", (0, V), Fixed(Text), Exprs(control::json), "An array of the arguments.")
        .json(),
    def(Json, "json_valid", (1, 1), Fixed(Int), Exprs(control::json), "1 if the argument is valid JSON."),
    def(Json, "json_type", (1, 1), Fixed(Text), Exprs(control::json), "The JSON type name of the value."),
    def(Json, "json_length", (1, 2), Fixed(Int), Exprs(control::json), "Number of elements (at a path)."),
    def(Json, "json_depth", (1, 1), Fixed(Int), Exprs(control::json), "Maximum nesting depth."),
    def(Json, "json_keys", (1, 2), Fixed(Text), Exprs(control::json), "An object's keys as an array (at a path).")
        .json(),
    def(Json, "json_contains", (2, 3), Fixed(Int), Exprs(control::json), "1 if the candidate is contained (at a path)."),
    def(Json, "json_contains_path", (3, V), Fixed(Int), Exprs(control::json), "1 if one / all of the paths exist."),
    def(Json, "json_set", (3, V), Fixed(Text), Exprs(control::json), "Values written at paths (replace or insert).")
        .parity(Parity::Odd)
        .json(),
    def(Json, "json_insert", (3, V), Fixed(Text), Exprs(control::json), "Values written at paths that do not exist.")
        .parity(Parity::Odd)
        .json(),
    def(Json, "json_replace", (3, V), Fixed(Text), Exprs(control::json), "Values written at paths that exist.")
        .parity(Parity::Odd)
        .json(),
    def(Json, "json_array_append", (3, V), Fixed(Text), Exprs(control::json), "Values appended to the arrays at paths.")
        .parity(Parity::Odd)
        .json(),
    def(Json, "json_remove", (2, V), Fixed(Text), Exprs(control::json), "The document without the paths.")
        .json(),
    def(Json, "json_merge_preserve", (2, V), Fixed(Text), Exprs(control::json), "The documents merged, duplicates kept.")
        .json(),
    // ---- vectors (MatrixOne-compatible)
    def(Vector, "l2_distance", (2, 2), Fixed(Float), Values(scalar::vector_distance),
        "The named distance (or similarity) of two vectors of one dimension.")
        .aliases(&["l2_distance_sq", "cosine_distance", "cosine_similarity", "inner_product", "l1_distance"]),
    def(Vector, "l2_norm", (1, 1), Fixed(Float), Values(scalar::l2_norm), "Euclidean norm."),
    def(Vector, "l1_norm", (1, 1), Fixed(Float), Values(scalar::l1_norm),
        "Sum of absolute values (SUMMATION: of the values).").aliases(&["summation"]),
    def(Vector, "normalize_l2", (1, 1), Fixed(Text), Values(scalar::normalize_l2),
        "The vector scaled to norm 1 (a zero vector is error 1525)."),
    def(Vector, "subvector", (2, 3), Fixed(Text), Values(scalar::subvector),
        "LEN elements (default: to the end) from 1-based POS (negative: from the end)."),
    def(Vector, "vector_dims", (1, 1), Fixed(Int), Values(scalar::vector_dims), "Number of dimensions."),
    // ---- session and server
    def(Session, "version", (0, 0), Fixed(Text), Values(scalar::version), "The server version string."),
    def(Session, "uuid", (0, 0), Fixed(Text), Values(uuid::uuid),
        "A version-1 (time-based) UUID as 36 characters; a different one at each call.")
        .purity(Purity::Volatile),
    def(Session, "uuid_short", (0, 0), Fixed(Int), Values(uuid::uuid_short),
        "A 64-bit number unique among this server's calls: server_id (1) << 56 + start second << 24, counted up.")
        .purity(Purity::Volatile),
    def(Str, "md5", (1, 1), Fixed(Text), Values(digest::md5), "MD5 of the string's bytes: 32 lower-case hex digits."),
    def(Str, "sha1", (1, 1), Fixed(Text), Values(digest::sha1), "SHA-1 of the string's bytes: 40 lower-case hex digits.")
        .aliases(&["sha"]),
    def(Str, "sha2", (2, 2), Fixed(Text), Values(digest::sha2),
        "SHA-2 of the string's bytes with BITS 224, 256 (or 0), 384 or 512, in hex; NULL for another length."),
    def(Str, "crc32", (1, 1), Fixed(Int), Values(digest::crc32), "CRC-32 of the string's bytes (unsigned)."),
    def(Str, "hex", (1, 1), Fixed(Text), Values(digest::hex),
        "A string's bytes as hex digits; a number's value (rounded to an integer) in hex."),
    def(Str, "to_base64", (1, 1), Fixed(Text), Values(digest::to_base64), "The string's bytes in base-64."),
    def(Str, "binary", (1, 1), Fixed(Bytes), Values(digest::binary),
        "`BINARY(x)`: x's bytes as a binary string (as `BINARY x`)."),
    def(Str, "unhex", (1, 1), Fixed(Bytes), Values(digest::unhex),
        "The binary string whose bytes the hex digits spell; NULL for a character that is not a hex digit."),
    def(Str, "from_base64", (1, 1), Fixed(Bytes), Values(digest::from_base64),
        "The binary string a base-64 text encodes; NULL when it is not base-64."),
    def(Str, "uuid_to_bin", (1, 2), Fixed(Bytes), Values(uuid::uuid_to_bin),
        "The 16 bytes of a UUID's text (SWAP 1: time-high and time-low groups swapped); 1411 for text that is not a UUID."),
    def(Str, "bin_to_uuid", (1, 2), Fixed(Text), Values(uuid::bin_to_uuid),
        "The dashed text of a 16-byte UUID (SWAP 1: undo UUID_TO_BIN's swap); 1411 for another length."),
    def(Str, "is_uuid", (1, 1), Fixed(Int), Values(uuid::is_uuid),
        "1 for a UUID in text form (32 hex digits, dashed 8-4-4-4-12, or that in braces), else 0; NULL for NULL."),
    def(Session, "database", (0, 0), Fixed(Text), Host, "The current database, NULL if none.")
        .aliases(&["schema"]),
    def(Session, "user", (0, 0), Fixed(Text), Host, "The session's user as `name@localhost`.")
        .aliases(&["current_user"]),
    def(Session, "last_insert_id", (0, 0), Fixed(Int), Host,
        "The first AUTO_INCREMENT value of the session's last insert.")
        .purity(Purity::Session),
    def(Session, "connection_id", (0, 0), Fixed(Int), Host, "The session's connection id."),
    def(Session, "get_lock", (2, 2), Fixed(Int), Host,
        "Take the named user-level lock, waiting up to TIMEOUT seconds (negative: no limit): 1, or 0 on timeout. Held across transactions until RELEASE_LOCK or the session ends; taken again by counting.")
        .purity(Purity::Volatile),
    def(Session, "release_lock", (1, 1), Fixed(Int), Host,
        "Give back one count of the named lock: 1, 0 when another session holds it, NULL when nobody does.")
        .purity(Purity::Volatile),
    def(Session, "is_free_lock", (1, 1), Fixed(Int), Host, "1 when nobody holds the named lock, else 0.")
        .purity(Purity::Volatile),
    def(Session, "release_all_locks", (0, 0), Fixed(Int), Host,
        "Give back every user-level lock of the session: how many counts it held.")
        .purity(Purity::Volatile),
    def(Session, "sleep", (1, 1), Fixed(Int), Host,
        "Sleep N seconds (ended early by KILL or max_execution_time); 0.")
        .purity(Purity::Volatile),
    // ---- fault injection (MatrixOne-compatible; SUPER only)
    def(FaultInjection, "enable_fault_injection", (0, 0), Fixed(Text), Host, "Turn fault injection on.")
        .super_only().purity(Purity::Volatile),
    def(FaultInjection, "disable_fault_injection", (0, 0), Fixed(Text), Host, "Turn fault injection off.")
        .super_only().purity(Purity::Volatile),
    def(FaultInjection, "add_fault_point", (4, 6), Fixed(Text), Host,
        "Add a fault point (name, frequency, action, int arg[, string arg[, constant]]).")
        .super_only().purity(Purity::Volatile),
    def(FaultInjection, "remove_fault_point", (1, 1), Fixed(Text), Host, "Remove a fault point.")
        .super_only().purity(Purity::Volatile),
    def(FaultInjection, "trigger_fault_point", (1, 1), Fixed(Int), Host, "Trigger a fault point; its count.")
        .super_only().purity(Purity::Volatile),
    def(FaultInjection, "list_fault_points", (0, 0), Fixed(Text), Host, "The fault points as JSON.")
        .super_only().purity(Purity::Volatile),
    def(FaultInjection, "fault_inject", (2, 3), Fixed(Text), Host, "A fault-injection command (scope, method[, params]).")
        .super_only().purity(Purity::Volatile),
    // ---- internal: produced by the compiler, never called by name
    def(Internal, "@@", (1, 1), Rule("BIGINT for an integer variable, else VARCHAR"), Host,
        "`@@name` / `@@session.name`: a system variable.").purity(Purity::Session),
    def(Internal, "@@global", (1, 1), Rule("BIGINT for an integer variable, else VARCHAR"), Host,
        "`@@global.name`: a system variable's server-wide value."),
    def(Internal, "@", (1, 1), Fixed(Text), Host, "`@name`: a user variable.").purity(Purity::Session),
    def(Internal, IS_TRUE, (1, 1), Fixed(Int), Values(scalar::is_true), "`x IS TRUE`."),
    def(Internal, IS_FALSE, (1, 1), Fixed(Int), Values(scalar::is_false), "`x IS FALSE`."),
    def(Internal, HEX_OPERAND, (3, 3), Fixed(Bytes), Values(scalar::hex_operand),
        "A hexadecimal literal compared with a column: its number beside a number, else its bytes."),
    def(Internal, LIKE_BINARY, (2, 2), Fixed(Int), Values(scalar::like_binary),
        "`x LIKE BINARY p`: the bytes matched, `_` one byte."),
    def(Internal, SHOW_SCALE, (2, 2), Rule("the first argument's type"), Values(scalar::show_scale),
        "A DECIMAL shown with its type's scale (IFNULL / COALESCE as text)."),
    def(Internal, FIXED_TEXT, (2, 2), Fixed(Text), Values(scalar::fixed_text),
        "A DOUBLE as text with its type's fixed decimals."),
    def(Internal, JSON_AGG, (1, 1), Fixed(Text), Values(crate::sql::agg_stats::json_aggregate),
        "A JSON_ARRAYAGG / JSON_OBJECTAGG slot's JSON text, typed JSON without being parsed again.")
        .json(),
    def(Internal, "trim both", (2, 2), Fixed(Text), Values(scalar::trim_both),
        "`TRIM(BOTH s FROM str)` (and LEADING, TRAILING).")
        .aliases(&["trim leading", "trim trailing"])
        .text_len(OfFirstArg).binary_with_binary_arg(),
    def(Internal, "cast_as_json", (1, 1), Fixed(Text), Exprs(control::json), "`CAST(x AS JSON)`.")
        .json(),
    def(Internal, "date_add interval", (3, 3), Rule("as DATE_ADD"), DT_CALL,
        "DATE_ADD / DATE_SUB with a unit: (date, n, unit).")
        .aliases(&["date_sub interval"]),
];
