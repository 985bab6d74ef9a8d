//! SQL arithmetic over values: `+ - * / DIV %` with MySQL's result types
//! (INT, exact DECIMAL, DOUBLE), its out-of-range error 1690 and its
//! division by zero (NULL with warning 1365), and MatrixOne's element-wise
//! vector arithmetic.
//!
//! Evaluates nothing but two values: never compiles, never names the
//! function registry or the evaluator (the registry's evaluators and the
//! evaluator both call it).

use super::tree::BinOp;
use super::value::{as_f64, exact, num};
use crate::decimal::Decimal;
use crate::error::{code, SqlError, SqlResult};
use crate::types::Value;

/// An operand as MySQL prints it in an out-of-range message.
fn operand_text(v: &Value) -> String {
    match v {
        Value::Float(f) if f.abs() >= 1e15 => format!("{f:e}"),
        Value::Text(t) => format!("'{t}'"),
        other => other.to_string(),
    }
}

/// MySQL's 1690 for a `ty` result of `a op b` out of range.
fn out_of_range(ty: &str, op: BinOp, a: &Value, b: &Value) -> SqlError {
    SqlError::new(
        1690,
        format!(
            "{ty} value is out of range in '({} {} {})'",
            operand_text(a),
            op.sql(),
            operand_text(b)
        ),
    )
}

/// NULL with MySQL's warning 1365 (an error in a strict-mode write).
fn division_by_zero() -> SqlResult<Value> {
    crate::warnings::note(code::DIVISION_BY_ZERO, "Division by 0")?;
    Ok(Value::Null)
}

/// A DECIMAL result: at most 65 digits (fewer fractional digits when the
/// integer part needs them), 1690 when the integer part alone is wider.
fn decimal_result(d: Decimal, op: BinOp, a: &Value, b: &Value) -> SqlResult<Value> {
    // An `i64` mantissa has at most 19 integer digits: room for 46
    // fractional ones (no digit count per row for the common case).
    if d.small_parts().is_some() && d.scale() <= 46 {
        return Ok(Value::Decimal(d));
    }
    let int = d.int_digits();
    if int > crate::decimal::MAX_PRECISION {
        return Err(out_of_range("DECIMAL", op, a, b));
    }
    let room = crate::decimal::MAX_PRECISION - int;
    Ok(Value::Decimal(if u32::from(d.scale()) > room {
        d.rescale(room as u8)
    } else {
        d
    }))
}

/// `+ - * / DIV %` with MySQL's types: INT with INT is INT (`/` DECIMAL),
/// DECIMAL with INT or DECIMAL is exact DECIMAL, anything with a DOUBLE or
/// a string is DOUBLE. Out of range is 1690; division by zero NULL + 1365.
pub(crate) fn arith(op: BinOp, a: &Value, b: &Value) -> SqlResult<Value> {
    // `+ - *` of DECIMAL with DECIMAL or INT (`price * (1 - discount)`):
    // the operands are read in place, not copied as numbers first.
    if let BinOp::Add | BinOp::Sub | BinOp::Mul = op {
        let exact_op = |p: &Decimal, q: &Decimal| match op {
            BinOp::Add => p.add(q),
            BinOp::Sub => p.sub(q),
            _ => p.mul(q),
        };
        let r = match (a, b) {
            (Value::Decimal(p), Value::Decimal(q)) => Some(exact_op(p, q)),
            (Value::Int(i), Value::Decimal(q)) => Some(exact_op(&Decimal::from_i64(*i), q)),
            (Value::Decimal(p), Value::Int(i)) => Some(exact_op(p, &Decimal::from_i64(*i))),
            _ => None,
        };
        if let Some(r) = r {
            return decimal_result(r, op, a, b);
        }
    }
    if a.is_null() || b.is_null() {
        return Ok(Value::Null);
    }
    let (Some(x), Some(y)) = (num(a), num(b)) else {
        return Ok(Value::Null);
    };
    let texty = matches!(a, Value::Text(_)) || matches!(b, Value::Text(_));
    if let (Value::Int(p), Value::Int(q)) = (&x, &y) {
        let (p, q) = (*p, *q);
        let r = match op {
            BinOp::Add => p.checked_add(q),
            BinOp::Sub => p.checked_sub(q),
            BinOp::Mul => p.checked_mul(q),
            BinOp::Mod | BinOp::IntDiv if q == 0 => return division_by_zero(),
            BinOp::Mod => Some(p.wrapping_rem(q)),
            BinOp::IntDiv => p.checked_div(q),
            _ => None,
        };
        if op != BinOp::Div {
            return match r {
                Some(r) => Ok(Value::Int(r)),
                None => Err(out_of_range("BIGINT", op, a, b)),
            };
        }
    }
    let float = texty || matches!(x, Value::Float(_)) || matches!(y, Value::Float(_));
    if !float {
        let (Some(p), Some(q)) = (exact(&x), exact(&y)) else {
            return Ok(Value::Null);
        };
        let r = match op {
            BinOp::Add => p.add(&q),
            BinOp::Sub => p.sub(&q),
            BinOp::Mul => p.mul(&q),
            BinOp::Div => match p.div(&q) {
                Some(r) => r,
                None => return division_by_zero(),
            },
            BinOp::IntDiv => {
                let Some(r) = p.int_div(&q) else {
                    return division_by_zero();
                };
                return r
                    .to_i64_exact()
                    .map(Value::Int)
                    .ok_or_else(|| out_of_range("BIGINT", op, a, b));
            }
            BinOp::Mod => match p.rem(&q) {
                Some(r) => r,
                None => return division_by_zero(),
            },
            _ => return Ok(Value::Null),
        };
        return decimal_result(r, op, a, b);
    }
    let (p, q) = (as_f64(&x).unwrap_or(0.0), as_f64(&y).unwrap_or(0.0));
    let r = match op {
        BinOp::Add => p + q,
        BinOp::Sub => p - q,
        BinOp::Mul => p * q,
        BinOp::Div | BinOp::Mod | BinOp::IntDiv if q == 0.0 => return division_by_zero(),
        BinOp::Div => p / q,
        BinOp::Mod => p % q,
        BinOp::IntDiv => {
            let t = (p / q).trunc();
            if !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&t) {
                return Err(out_of_range("BIGINT", op, a, b));
            }
            return Ok(Value::Int(t as i64));
        }
        _ => return Ok(Value::Null),
    };
    if r.is_finite() {
        Ok(Value::Float(r))
    } else {
        Err(out_of_range("DOUBLE", op, a, b))
    }
}

/// Element-wise vector arithmetic as MatrixOne defines it: vector ∘ vector
/// of the same dimension, vector ∘ scalar, and scalar + / * vector (a
/// scalar may not be the minuend or the dividend). A text operand beside a
/// vector is read as a vector literal. NULL in, NULL out.
pub(crate) fn vector_arith(op: BinOp, l: Value, r: Value) -> SqlResult<Value> {
    enum Operand {
        Vec(Vec<f64>),
        Scalar(f64),
    }
    fn operand(v: Value) -> SqlResult<Option<Operand>> {
        Ok(match v {
            Value::Null => None,
            Value::Vector(x) => Some(Operand::Vec(x)),
            Value::Text(s) if s.trim_start().starts_with('[') => Some(Operand::Vec(
                crate::catalog::schema::parse_vector(&s)
                    .map_err(|m| SqlError::new(code::WRONG_ARGUMENTS, m))?,
            )),
            other => match as_f64(&other) {
                Some(f) => Some(Operand::Scalar(f)),
                None => {
                    return Err(SqlError::new(
                        code::WRONG_ARGUMENTS,
                        format!("invalid operand {other} for vector arithmetic"),
                    ))
                }
            },
        })
    }
    let sym = match op {
        BinOp::Add => "+",
        BinOp::Sub => "-",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        _ => return Err(SqlError::unsupported(format!("{op:?} on vectors"))),
    };
    let (Some(a), Some(b)) = (operand(l)?, operand(r)?) else {
        return Ok(Value::Null);
    };
    let apply = |x: f64, y: f64| -> SqlResult<f64> {
        let z = match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            _ => {
                if y == 0.0 {
                    return Err(SqlError::new(code::DIVISION_BY_ZERO, "Division by 0"));
                }
                x / y
            }
        };
        if z.is_finite() {
            Ok(z)
        } else {
            Err(SqlError::new(
                1690,
                format!("vector element value is out of range in '{sym}'"),
            ))
        }
    };
    let out = match (a, b) {
        (Operand::Vec(x), Operand::Vec(y)) => {
            if x.len() != y.len() {
                return Err(SqlError::new(
                    code::WRONG_ARGUMENTS,
                    format!(
                        "vector ops between different dimensions ({}, {}) is not permitted",
                        x.len(),
                        y.len()
                    ),
                ));
            }
            x.iter()
                .zip(&y)
                .map(|(p, q)| apply(*p, *q))
                .collect::<SqlResult<Vec<_>>>()?
        }
        (Operand::Vec(x), Operand::Scalar(q)) => {
            x.iter().map(|p| apply(*p, q)).collect::<SqlResult<_>>()?
        }
        (Operand::Scalar(p), Operand::Vec(y)) => {
            if !matches!(op, BinOp::Add | BinOp::Mul) {
                return Err(SqlError::new(
                    code::WRONG_ARGUMENTS,
                    format!("a scalar cannot be the left operand of '{sym}' with a vector"),
                ));
            }
            y.iter().map(|q| apply(p, *q)).collect::<SqlResult<_>>()?
        }
        (Operand::Scalar(_), Operand::Scalar(_)) => {
            return Err(SqlError::internal("vector arithmetic without a vector"))
        }
    };
    Ok(Value::Vector(out))
}
