//! Start-up arming from the `TRIBUTARY_FAULTS` environment variable.
//!
//! Owns the compact spec grammar
//! `point[:target]=action[(arg)][@freq]` (entries separated by `;`), e.g.
//! `fj/x=abort;fj/y:idx01=sleep(5);fj/z=wait;fj/w=return(boom)@1:1::`.
//! `sleep(N)` sets `iarg`; the argument of every other action sets `sarg`.
//! `TRIBUTARY_FAULTS_SEED` (optional, u64) seeds probabilistic points.
//!
//! It must never arm anything unless the whole spec parsed and validated: a typo in one
//! entry leaves the registry untouched.

use crate::action::Action;
use crate::error::FaultError;
use crate::freq::Freq;
use crate::registry::{parse_key, FaultRegistry};

/// Environment variable holding the start-up fault spec.
pub const ENV_VAR: &str = "TRIBUTARY_FAULTS";
/// Environment variable holding the optional PRNG seed.
pub const SEED_ENV_VAR: &str = "TRIBUTARY_FAULTS_SEED";

/// One parsed entry of an env spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvPoint {
    /// `name` or `name:target`.
    pub key: String,
    /// Frequency string (`":::"` when not given).
    pub freq: String,
    /// Action name (validated).
    pub action: String,
    /// Integer argument (`sleep(N)`).
    pub iarg: i64,
    /// String argument (every other action's `(text)`).
    pub sarg: String,
}

fn parse_entry(entry: &str) -> Result<EnvPoint, FaultError> {
    let (key, rhs) = entry.split_once('=').ok_or_else(|| {
        FaultError::invalid(format!(
            "fault spec entry {entry:?}: expected point[:target]=action[(arg)][@freq]"
        ))
    })?;
    let (name, target) = parse_key(key)?;
    let rhs = rhs.trim();
    let action_end = rhs.find(['(', '@']).unwrap_or(rhs.len());
    let action_text = rhs[..action_end].trim();
    let action: Action = action_text.parse()?;
    let mut rest = &rhs[action_end..];
    let mut arg: Option<&str> = None;
    if let Some(after_paren) = rest.strip_prefix('(') {
        // The argument runs to the LAST ')' so that it may contain '(' / '@'.
        let close = after_paren.rfind(')').ok_or_else(|| {
            FaultError::invalid(format!("fault spec entry {entry:?}: missing ')'"))
        })?;
        arg = Some(&after_paren[..close]);
        rest = after_paren[close + 1..].trim();
    }
    let freq = if rest.is_empty() {
        ":::".to_string()
    } else if let Some(f) = rest.strip_prefix('@') {
        Freq::parse(f)?;
        f.trim().to_string()
    } else {
        return Err(FaultError::invalid(format!(
            "fault spec entry {entry:?}: unexpected {rest:?} after the action"
        )));
    };
    let (iarg, sarg) = match (action, arg) {
        (Action::Sleep, Some(a)) => {
            let a = a.trim();
            let secs: i64 = a.parse().map_err(|_| {
                FaultError::invalid(format!(
                    "fault spec entry {entry:?}: sleep({a}) needs whole seconds"
                ))
            })?;
            (secs, String::new())
        }
        (Action::Sleep, None) => {
            return Err(FaultError::invalid(format!(
                "fault spec entry {entry:?}: sleep needs a duration, e.g. sleep(5)"
            )))
        }
        (_, Some(a)) => (0, a.to_string()),
        (_, None) => (0, String::new()),
    };
    action.validate_args(iarg, &sarg)?;
    let key = match target {
        Some(t) => format!("{name}:{t}"),
        None => name.to_string(),
    };
    Ok(EnvPoint {
        key,
        freq,
        action: action.as_str().to_string(),
        iarg,
        sarg,
    })
}

/// Parses a whole spec (entries separated by `;`, blank entries ignored) without
/// arming anything.
pub fn parse_env_spec(spec: &str) -> Result<Vec<EnvPoint>, FaultError> {
    spec.split(';')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(parse_entry)
        .collect()
}

impl FaultRegistry {
    /// Parses `spec`; if every entry is valid, enables injection (when the spec is not
    /// empty) and arms the points. Returns the number of points armed.
    pub fn load_env_spec(&self, spec: &str) -> Result<usize, FaultError> {
        let points = parse_env_spec(spec)?;
        if points.is_empty() {
            return Ok(0);
        }
        self.enable();
        for p in &points {
            self.add(&p.key, &p.freq, &p.action, p.iarg, &p.sarg, false)?;
        }
        tracing::info!(
            count = points.len(),
            "fault points armed from the environment"
        );
        Ok(points.len())
    }

    /// Reads [`SEED_ENV_VAR`] and [`ENV_VAR`] and arms what they say
    /// (see [`FaultRegistry::load_env_spec`]). An unset or empty variable arms nothing
    /// and leaves injection as it was.
    pub fn load_from_env(&self) -> Result<usize, FaultError> {
        if let Ok(seed) = std::env::var(SEED_ENV_VAR) {
            let seed = seed.trim();
            if !seed.is_empty() {
                let v: u64 = seed.parse().map_err(|_| {
                    FaultError::invalid(format!("{SEED_ENV_VAR}={seed:?} is not a u64"))
                })?;
                self.set_seed(v);
            }
        }
        match std::env::var(ENV_VAR) {
            Ok(spec) => self.load_env_spec(&spec),
            Err(std::env::VarError::NotPresent) => Ok(0),
            Err(std::env::VarError::NotUnicode(_)) => {
                Err(FaultError::invalid(format!("{ENV_VAR} is not valid UTF-8")))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let pts =
            parse_env_spec("fj/x=abort;fj/y:idx01=sleep(5);fj/z=wait;fj/w=return(boom)@1:1::")
                .unwrap();
        assert_eq!(pts.len(), 4);
        assert_eq!(pts[0].key, "fj/x");
        assert_eq!(pts[0].action, "abort");
        assert_eq!(pts[1].key, "fj/y:idx01");
        assert_eq!((pts[1].action.as_str(), pts[1].iarg), ("sleep", 5));
        assert_eq!(pts[2].action, "wait");
        assert_eq!(pts[2].freq, ":::");
        assert_eq!(pts[3].sarg, "boom");
        assert_eq!(pts[3].freq, "1:1::");
    }

    #[test]
    fn argument_may_contain_parens_and_at() {
        let pts = parse_env_spec(" fj/a = ECHO(x (y) @z) @3:8:2: ; ;").unwrap();
        assert_eq!(pts.len(), 1);
        assert_eq!(pts[0].action, "echo");
        assert_eq!(pts[0].sarg, "x (y) @z");
        assert_eq!(pts[0].freq, "3:8:2:");
    }

    #[test]
    fn rejects_bad_entries() {
        for bad in [
            "fj/a",
            "fj/a=explode",
            "fj/a=sleep",
            "fj/a=sleep(x)",
            "fj/a=sleep(-1)",
            "fj/a=echo(x",
            "fj/a=echo(x)junk",
            "fj/a=wait@5:1::",
            "fj/a=wait@:::2",
            "=wait",
            "fj/a:=wait",
            "fj/a=notify",
        ] {
            assert!(
                matches!(parse_env_spec(bad), Err(FaultError::InvalidArgument(_))),
                "{bad:?} should be rejected"
            );
        }
    }

    #[test]
    fn a_bad_entry_arms_nothing() {
        let r = FaultRegistry::new();
        assert!(r.load_env_spec("fj/ok=echo(1);fj/bad=nope").is_err());
        assert_eq!(r.armed_count(), 0);
        assert!(!r.is_enabled());
        assert_eq!(r.load_env_spec("  "), Ok(0));
        assert!(!r.is_enabled());
        assert_eq!(r.load_env_spec("fj/ok=echo(1);fj/t:idx01=sleep(0)"), Ok(2));
        assert!(r.is_enabled());
        assert_eq!(r.armed_count(), 2);
    }
}
