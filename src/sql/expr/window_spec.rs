//! Named windows (`WINDOW w AS (…)`) resolved while compiling an
//! expression: the effective `OVER (…)` specification of a window call
//! under a block's `WINDOW` clause, with MySQL's inheritance rules and
//! errors (3579–3583, 3591).
//!
//! Owns only that resolution (it is compiling, not executing). Never
//! plans, evaluates or reads rows.

use sqlparser::ast;

use crate::error::{code, SqlError, SqlResult};

/// The effective specification of `spec` under the block's named windows
/// (`WINDOW w AS (…)`): a reference to `w` inherits w's PARTITION BY and
/// ORDER BY, with MySQL's rules — the referring window may not partition
/// (3581) nor order when w orders (3583), w may have no frame (3582); an
/// unknown name is 3579, a cycle 3580.
pub(crate) fn resolve_spec(
    named: &[ast::NamedWindowDefinition],
    spec: &ast::WindowSpec,
) -> SqlResult<ast::WindowSpec> {
    resolve_depth(named, spec, 0)
}

fn resolve_depth(
    named: &[ast::NamedWindowDefinition],
    spec: &ast::WindowSpec,
    depth: usize,
) -> SqlResult<ast::WindowSpec> {
    let Some(base_name) = &spec.window_name else {
        return Ok(spec.clone());
    };
    if depth > named.len() {
        return Err(SqlError::new(
            code::WINDOW_CIRCULARITY,
            "There is a circularity in the window dependency graph.",
        ));
    }
    let base = lookup(named, base_name)?;
    let base = resolve_depth(named, &base, depth + 1)?;
    if !spec.partition_by.is_empty() {
        return Err(SqlError::new(
            code::WINDOW_NO_CHILD_PARTITIONING,
            "A window which depends on another cannot define partitioning.",
        ));
    }
    if base.window_frame.is_some() {
        return Err(SqlError::new(
            code::WINDOW_NO_INHERIT_FRAME,
            format!(
                "Window '{}' has a frame definition, so cannot be referenced by another window.",
                base_name.value
            ),
        ));
    }
    if !spec.order_by.is_empty() && !base.order_by.is_empty() {
        return Err(SqlError::new(
            code::WINDOW_NO_REDEFINE_ORDER_BY,
            format!(
                "Window '<unnamed window>' cannot inherit '{}' since both contain an ORDER BY clause.",
                base_name.value
            ),
        ));
    }
    Ok(ast::WindowSpec {
        window_name: None,
        partition_by: base.partition_by,
        order_by: if spec.order_by.is_empty() {
            base.order_by
        } else {
            spec.order_by.clone()
        },
        window_frame: spec.window_frame.clone(),
    })
}

/// The definition of the named window `name` (as a spec that may itself
/// refer to another).
pub(crate) fn lookup(
    named: &[ast::NamedWindowDefinition],
    name: &ast::Ident,
) -> SqlResult<ast::WindowSpec> {
    let def = named
        .iter()
        .find(|d| d.0.value.eq_ignore_ascii_case(&name.value))
        .ok_or_else(|| {
            SqlError::new(
                code::WINDOW_NO_SUCH_WINDOW,
                format!("Window name '{}' is not defined.", name.value),
            )
        })?;
    Ok(match &def.1 {
        ast::NamedWindowExpr::WindowSpec(s) => s.clone(),
        ast::NamedWindowExpr::NamedWindow(other) => ast::WindowSpec {
            window_name: Some(other.clone()),
            partition_by: Vec::new(),
            order_by: Vec::new(),
            window_frame: None,
        },
    })
}

/// Check a block's `WINDOW` clause as MySQL does, used or not: no name
/// twice (3591), every definition resolvable (3579 / 3580 / 3581 / 3582
/// / 3583).
pub(crate) fn check_named(named: &[ast::NamedWindowDefinition]) -> SqlResult<()> {
    for (i, d) in named.iter().enumerate() {
        if named[..i]
            .iter()
            .any(|e| e.0.value.eq_ignore_ascii_case(&d.0.value))
        {
            return Err(SqlError::new(
                code::WINDOW_DUPLICATE_NAME,
                format!("Window '{}' is defined twice.", d.0.value),
            ));
        }
    }
    for d in named {
        let spec = lookup(named, &d.0)?;
        check_spec(&spec)?;
        resolve_spec(named, &spec)?;
    }
    Ok(())
}

/// Refuse what MySQL refuses in a window's PARTITION BY / ORDER BY: a
/// position (`ORDER BY 1`, 3592) and a window function (3595).
pub(crate) fn check_spec(spec: &ast::WindowSpec) -> SqlResult<()> {
    for e in spec
        .partition_by
        .iter()
        .chain(spec.order_by.iter().map(|o| &o.expr))
    {
        if matches!(e, ast::Expr::Value(v) if matches!(v.value, ast::Value::Number(..))) {
            return Err(SqlError::new(
                code::WINDOW_ILLEGAL_ORDER_BY,
                "Window '<unnamed window>': ORDER BY or PARTITION BY uses legacy position indication which is not supported, use expression.",
            ));
        }
        if ast::Visit::visit(e, &mut NestedWindow(0)).is_break() {
            return Err(SqlError::new(
                code::WINDOW_NESTED_IN_SPEC,
                "You cannot nest a window function in the specification of window '<unnamed window>'.",
            ));
        }
    }
    Ok(())
}

/// Finds a window function call outside any subquery (one inside a
/// subquery of the specification belongs to that query block).
struct NestedWindow(usize);

impl ast::Visitor for NestedWindow {
    type Break = ();

    fn pre_visit_query(&mut self, _: &ast::Query) -> std::ops::ControlFlow<()> {
        self.0 += 1;
        std::ops::ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _: &ast::Query) -> std::ops::ControlFlow<()> {
        self.0 -= 1;
        std::ops::ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, x: &ast::Expr) -> std::ops::ControlFlow<()> {
        match x {
            ast::Expr::Function(f) if f.over.is_some() && self.0 == 0 => {
                std::ops::ControlFlow::Break(())
            }
            _ => std::ops::ControlFlow::Continue(()),
        }
    }
}
