//! The arguments of a block's aggregates evaluated together, once per
//! row, on fixed-point numbers: `SUM(price * (1 - discount))` and
//! `SUM(price * (1 - discount) * (1 + tax))` compute `price * (1 -
//! discount)` once, as `i128` mantissas, building no `Value` per step.
//!
//! Owns: which arguments take this path — those made only of columns,
//! INT / DECIMAL literals and `+ - *` — the program of their shared
//! sub-expressions ([`ArgProgram`]), and its evaluation with exactly the
//! semantics of [`crate::sql::expr::arith`](mod@crate::sql::expr::arith) (INT with INT is INT, DECIMAL
//! with INT or DECIMAL exact DECIMAL at MySQL's scales). A row whose
//! values leave that ground (a DOUBLE, a text, a mantissa past `i64`,
//! an overflow) is declined and the caller evaluates its arguments the
//! ordinary way, so no error, warning or digit can differ.
//!
//! Never: raises an error or warning, reads anything but the row, or
//! names the executor's blocks (it sits below the operators with
//! `exec::agg`).

use crate::decimal::{Decimal, MAX_HELD_SCALE, MAX_SCALE};
use crate::sql::expr::{BinOp, CExpr};
use crate::types::Value;

/// A number on the fast path: what `arith` gives, without a `Value`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) enum Num {
    #[default]
    Null,
    Int(i64),
    /// A DECIMAL: mantissa (within `i64`), held scale, shown scale.
    Dec(i128, u8, u8),
}

impl Num {
    /// A value as a fast number; `None` off the fast path.
    pub(crate) fn of(v: &Value) -> Option<Num> {
        match v {
            Value::Null => Some(Num::Null),
            Value::Int(i) => Some(Num::Int(*i)),
            Value::Decimal(d) => {
                let (m, held) = d.small_parts()?;
                Some(Num::Dec(i128::from(m), held, d.scale()))
            }
            _ => None,
        }
    }

    /// The value `arith` would have built.
    pub(crate) fn value(self) -> Value {
        match self {
            Num::Null => Value::Null,
            Num::Int(i) => Value::Int(i),
            Num::Dec(m, held, shown) => {
                Value::Decimal(Decimal::from_i128(m, held).with_shown(shown))
            }
        }
    }

    /// As a DECIMAL (an INT is one of scale 0).
    fn dec(self) -> Option<(i128, u8, u8)> {
        match self {
            Num::Int(i) => Some((i128::from(i), 0, 0)),
            Num::Dec(m, h, s) => Some((m, h, s)),
            Num::Null => None,
        }
    }

    /// `self op o` as `arith` computes it; `None` where this path does
    /// not decide (an overflow, which `arith` reports; a result whose
    /// mantissa leaves `i64`).
    fn op(self, op: BinOp, o: Num) -> Option<Num> {
        if self == Num::Null || o == Num::Null {
            return Some(Num::Null);
        }
        if let (Num::Int(a), Num::Int(b)) = (self, o) {
            return match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                _ => None,
            }
            .map(Num::Int);
        }
        let ((a, ha, sa), (b, hb, sb)) = (self.dec()?, o.dec()?);
        let (m, held, shown) = match op {
            BinOp::Add | BinOp::Sub => {
                // Decimal::add: both at the larger held scale, the larger
                // shown one.
                let held = ha.max(hb);
                let up = |m: i128, h: u8| m.checked_mul(10i128.checked_pow(u32::from(held - h))?);
                let (a, b) = (up(a, ha)?, up(b, hb)?);
                let m = if op == BinOp::Add {
                    a.checked_add(b)?
                } else {
                    a.checked_sub(b)?
                };
                (m, held, sa.max(sb))
            }
            BinOp::Mul => {
                // Decimal::mul: scales add, at most MAX_SCALE shown.
                let held = ha.checked_add(hb).filter(|h| *h <= MAX_HELD_SCALE)?;
                (a.checked_mul(b)?, held, (sa + sb).min(MAX_SCALE))
            }
            _ => return None,
        };
        // An i64 mantissa: `decimal_result` keeps it as it is (at most 19
        // integer digits, room for 46 fractional ones).
        i64::try_from(m).ok()?;
        (shown <= 46).then_some(Num::Dec(m, held, shown))
    }
}

/// One step of a program.
#[derive(Clone, Debug, PartialEq)]
enum Step {
    Col(usize),
    Lit(Num),
    Bin(BinOp, usize, usize),
}

/// The arguments of a block's aggregates that take the fast path, as
/// steps over their distinct sub-expressions (each computed once per row).
#[derive(Debug, Default)]
pub(crate) struct ArgProgram {
    steps: Vec<Step>,
    /// Per aggregate slot, the step whose value is its argument (`None`:
    /// evaluated the ordinary way).
    args: Vec<Option<usize>>,
}

/// Deepest expression compiled (deeper ones take the ordinary path).
const MAX_DEPTH: usize = 32;

impl ArgProgram {
    /// The program of `args` (per aggregate slot); `None` when no two
    /// arguments share work and none is worth it — an argument that is
    /// a bare column or literal gains nothing here.
    pub(crate) fn compile<'e>(args: impl Iterator<Item = Option<&'e CExpr>>) -> Option<ArgProgram> {
        let mut p = ArgProgram::default();
        let mut worth = false;
        for a in args {
            let at = a.and_then(|e| p.add(e, 0));
            if let Some(i) = at {
                worth |= matches!(p.steps[i], Step::Bin(..));
            }
            p.args.push(at);
        }
        worth.then_some(p)
    }

    /// The step computing `e` (shared with an equal one already there).
    fn add(&mut self, e: &CExpr, depth: usize) -> Option<usize> {
        if depth > MAX_DEPTH {
            return None;
        }
        let step = match e {
            CExpr::Col(i) => Step::Col(*i),
            CExpr::Lit(v) => Step::Lit(Num::of(v)?),
            CExpr::Bin(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
                let a = self.add(a, depth + 1)?;
                let b = self.add(b, depth + 1)?;
                Step::Bin(*op, a, b)
            }
            _ => return None,
        };
        Some(match self.steps.iter().position(|s| *s == step) {
            Some(i) => i,
            None => {
                self.steps.push(step);
                self.steps.len() - 1
            }
        })
    }

    /// Run the program on `row` into `out` (one number per step); false
    /// when the row leaves the fast path (then evaluate every argument
    /// the ordinary way).
    pub(crate) fn run(&self, row: &[Value], out: &mut Vec<Num>) -> bool {
        out.clear();
        for s in &self.steps {
            let n = match *s {
                Step::Col(i) => row.get(i).map_or(Some(Num::Null), Num::of),
                Step::Lit(n) => Some(n),
                Step::Bin(op, a, b) => out[a].op(op, out[b]),
            };
            match n {
                Some(n) => out.push(n),
                None => return false,
            }
        }
        true
    }

    /// The argument of aggregate slot `slot` after a successful
    /// [`ArgProgram::run`]; `None` for one it does not compute.
    pub(crate) fn arg(&self, slot: usize, ran: &[Num]) -> Option<Num> {
        let i = (*self.args.get(slot)?)?;
        ran.get(i).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::expr::{EvalCtx, NoHost};

    fn col(i: usize) -> Box<CExpr> {
        Box::new(CExpr::Col(i))
    }
    fn lit(v: Value) -> Box<CExpr> {
        Box::new(CExpr::Lit(v))
    }
    fn bin(op: BinOp, a: Box<CExpr>, b: Box<CExpr>) -> Box<CExpr> {
        Box::new(CExpr::Bin(op, a, b))
    }
    fn eval(e: &CExpr, row: &[Value]) -> crate::error::SqlResult<Value> {
        e.eval(&EvalCtx {
            row,
            outer: &[],
            aggs: &[],
            matches: &[],
            funcs: &NoHost,
        })
    }
    /// The same value digit for digit (held and shown scale too).
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Decimal(x), Value::Decimal(y)) => {
                x.held_scale() == y.held_scale()
                    && x.scale() == y.scale()
                    && x.mantissa() == y.mantissa()
            }
            _ => a == b,
        }
    }

    /// Q1's arguments share `price * (1 - discount)`: computed once.
    #[test]
    fn shared_sub_expressions_are_computed_once() {
        let disc = bin(
            BinOp::Mul,
            col(0),
            bin(BinOp::Sub, lit(Value::Int(1)), col(1)),
        );
        let charge = bin(
            BinOp::Mul,
            disc.clone(),
            bin(BinOp::Add, lit(Value::Int(1)), col(2)),
        );
        let args = [Some(&*disc), Some(&*charge), None, Some(&CExpr::Col(0))];
        let p = ArgProgram::compile(args.iter().copied()).expect("compiled");
        // price, 1, discount, 1 - discount, the product, tax, 1 + tax,
        // the charge: eight steps, none twice.
        assert_eq!(p.steps.len(), 8, "{:?}", p.steps);
        assert_eq!(p.args, vec![Some(4), Some(7), None, Some(0)]);
        // A bare column alone is not worth a program.
        assert!(ArgProgram::compile([Some(&CExpr::Col(0)), None].into_iter()).is_none());
        // Division and functions take the ordinary path.
        let div = bin(BinOp::Div, col(0), col(1));
        assert!(ArgProgram::compile([Some(&*div)].into_iter()).is_none());
    }

    /// On random INT / DECIMAL / NULL rows, every argument the program
    /// computes is exactly what `CExpr::eval` gives; rows it declines
    /// are those `eval` answers with an error, a DOUBLE, or a big
    /// mantissa.
    #[test]
    fn program_values_equal_eval() {
        let mut x: u64 = 17;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        let mut declined = 0;
        let mut ran = 0;
        for _ in 0..400 {
            // A random expression tree over 4 columns.
            fn tree(next: &mut dyn FnMut(u64) -> u64, depth: u32) -> Box<CExpr> {
                match if depth > 3 { next(2) } else { next(5) } {
                    0 => col(next(4) as usize),
                    1 => lit(match next(3) {
                        0 => Value::Int(next(5) as i64 - 2),
                        1 => Value::Decimal(Decimal::from_i128(next(300) as i128 - 100, 2)),
                        _ => Value::Decimal(Decimal::from_i128(next(7) as i128 + 1, 1)),
                    }),
                    n => bin(
                        [BinOp::Add, BinOp::Sub, BinOp::Mul][(n - 2) as usize],
                        tree(next, depth + 1),
                        tree(next, depth + 1),
                    ),
                }
            }
            let exprs: Vec<Box<CExpr>> = (0..3).map(|_| tree(&mut next, 0)).collect();
            let Some(p) = ArgProgram::compile(exprs.iter().map(|e| Some(&**e))) else {
                continue;
            };
            let mut out = Vec::new();
            for _ in 0..20 {
                let row: Vec<Value> = (0..4)
                    .map(|_| match next(8) {
                        0 => Value::Null,
                        1 => Value::Int(next(2000) as i64 - 1000),
                        2 => Value::Int(i64::MAX - next(3) as i64),
                        3 => Value::Float(1.5),
                        4 => Value::Decimal(Decimal::from_i128(
                            i128::from(i64::MAX) / 3 - next(5) as i128,
                            next(4) as u8,
                        )),
                        5 => Value::Decimal(
                            Decimal::from_i128(next(1 << 30) as i128, 9).with_shown(4),
                        ),
                        _ => Value::Decimal(Decimal::from_i128(
                            next(200_000) as i128 - 100_000,
                            next(5) as u8,
                        )),
                    })
                    .collect();
                if !p.run(&row, &mut out) {
                    declined += 1;
                    continue;
                }
                ran += 1;
                for (slot, e) in exprs.iter().enumerate() {
                    let Some(got) = p.arg(slot, &out).map(Num::value) else {
                        continue;
                    };
                    let want = eval(e, &row).expect("no error where the program answers");
                    assert!(same(&got, &want), "{e:?} on {row:?}: {got:?} vs {want:?}");
                }
            }
        }
        assert!(
            ran > 500 && declined > 100,
            "ran {ran}, declined {declined}"
        );
    }
}
