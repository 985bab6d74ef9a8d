//! Trigger windows (`freq` strings) and the seeded PRNG behind probabilistic points.
//!
//! Owns the MatrixOne `start:end:skip:prob` grammar and the decision "does hit number
//! `n` fire". It must never touch the registry, take locks or read the clock: the result
//! depends only on the hit number and the point's own PRNG state, so runs are repeatable.

use crate::error::FaultError;

/// A parsed trigger window: a point fires on hit `n` (1-based) when
/// `start <= n <= end`, `(n - start) % skip == 0` and a uniform draw in `[0,1)` is `< prob`.
#[derive(Debug, Clone, PartialEq)]
pub struct Freq {
    /// First hit that may fire (default 1).
    pub start: u64,
    /// Last hit that may fire (default `u64::MAX`).
    pub end: u64,
    /// Fire every `skip`-th hit of the window (default 1, never 0).
    pub skip: u64,
    /// Probability in `(0, 1]` (default 1.0).
    pub prob: f64,
}

impl Default for Freq {
    fn default() -> Self {
        Freq {
            start: 1,
            end: u64::MAX,
            skip: 1,
            prob: 1.0,
        }
    }
}

fn parse_count(field: &str, what: &str, default: u64, text: &str) -> Result<u64, FaultError> {
    let field = field.trim();
    if field.is_empty() {
        return Ok(default);
    }
    let value: i128 = field.parse().map_err(|_| {
        FaultError::invalid(format!("freq {text:?}: {what} {field:?} is not an integer"))
    })?;
    if value < 0 {
        return Err(FaultError::invalid(format!(
            "freq {text:?}: {what} must not be negative (got {value})"
        )));
    }
    u64::try_from(value)
        .map_err(|_| FaultError::invalid(format!("freq {text:?}: {what} {value} is too large")))
}

impl Freq {
    /// Parses `start:end:skip:prob`; every field may be empty (defaults `1:MAX:1:1.0`),
    /// and trailing fields may be omitted. The empty string means "every hit".
    ///
    /// Errors: non-numeric fields, negative counts, `start > end`, `skip == 0`,
    /// more than four fields, or a probability outside `(0, 1]`.
    pub fn parse(text: &str) -> Result<Freq, FaultError> {
        let fields: Vec<&str> = text.split(':').collect();
        if fields.len() > 4 {
            return Err(FaultError::invalid(format!(
                "freq {text:?}: expected start:end:skip:prob"
            )));
        }
        let field = |i: usize| fields.get(i).copied().unwrap_or("");
        let start = parse_count(field(0), "start", 1, text)?;
        let end = parse_count(field(1), "end", u64::MAX, text)?;
        let skip = parse_count(field(2), "skip", 1, text)?;
        if start > end {
            return Err(FaultError::invalid(format!(
                "freq {text:?}: start {start} is after end {end}"
            )));
        }
        if skip == 0 {
            return Err(FaultError::invalid(format!(
                "freq {text:?}: skip must be at least 1"
            )));
        }
        let prob_text = field(3).trim();
        let prob = if prob_text.is_empty() {
            1.0
        } else {
            let p: f64 = prob_text.parse().map_err(|_| {
                FaultError::invalid(format!(
                    "freq {text:?}: probability {prob_text:?} is not a number"
                ))
            })?;
            // NaN fails both comparisons and is rejected here too.
            if !(p > 0.0 && p <= 1.0) {
                return Err(FaultError::invalid(format!(
                    "freq {text:?}: probability must be in (0, 1], got {prob_text}"
                )));
            }
            p
        };
        Ok(Freq {
            start,
            end,
            skip,
            prob,
        })
    }

    /// True when hit number `n` lies in the window (ignoring the probability).
    pub fn in_window(&self, n: u64) -> bool {
        n >= self.start && n <= self.end && (n - self.start).is_multiple_of(self.skip)
    }

    /// Decides whether hit `n` fires, drawing from `rng` only when the hit is in the
    /// window and the probability is below 1 (so deterministic points never consume draws).
    pub fn fires(&self, n: u64, rng: &mut SplitMix64) -> bool {
        if !self.in_window(n) {
            return false;
        }
        if self.prob >= 1.0 {
            return true;
        }
        rng.next_f64() < self.prob
    }
}

/// SplitMix64: a tiny, fast, well-distributed PRNG; plenty for fault probabilities.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded from a point key and a global seed. The same pair always
    /// yields the same sequence.
    pub fn for_point(key: &str, global_seed: u64) -> Self {
        // FNV-1a of the key, mixed with the global seed.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in key.as_bytes() {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        SplitMix64 {
            state: h ^ global_seed.wrapping_mul(0x9e37_79b9_7f4a_7c15),
        }
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform draw in `[0, 1)` with 53 bits of precision.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fired(freq: &str, hits: u64) -> Vec<u64> {
        let f = Freq::parse(freq).unwrap();
        let mut rng = SplitMix64::for_point("p", 0);
        (1..=hits).filter(|n| f.fires(*n, &mut rng)).collect()
    }

    #[test]
    fn defaults_fire_every_hit() {
        assert_eq!(Freq::parse(":::").unwrap(), Freq::default());
        assert_eq!(Freq::parse("").unwrap(), Freq::default());
        assert_eq!(fired(":::", 5), vec![1, 2, 3, 4, 5]);
    }

    #[test]
    fn first_hit_only() {
        assert_eq!(fired("1:1:1:", 5), vec![1]);
        assert_eq!(fired("1:1::", 5), vec![1]);
    }

    #[test]
    fn skip_window() {
        assert_eq!(fired("3:8:2:", 12), vec![3, 5, 7]);
        assert_eq!(fired(":5::", 9), vec![1, 2, 3, 4, 5]);
        assert_eq!(fired("4:::", 6), vec![4, 5, 6]);
    }

    #[test]
    fn probability_is_repeatable_and_roughly_right() {
        let a = fired("::: 0.5", 1000);
        let b = fired(":::0.5", 1000);
        assert_eq!(a, b, "same key + seed must give the same sequence");
        assert!(a.len() > 400 && a.len() < 600, "got {}", a.len());
        let f = Freq::parse(":::0.5").unwrap();
        let mut other = SplitMix64::for_point("p", 7);
        let c: Vec<u64> = (1..=1000).filter(|n| f.fires(*n, &mut other)).collect();
        assert_ne!(a, c, "a different global seed must change the sequence");
    }

    #[test]
    fn rejects_bad_input() {
        for bad in [
            "x:::",
            "1:y::",
            "::z:",
            ":::abc",
            "5:3::",
            "::0:",
            ":::0",
            ":::1.5",
            ":::-0.1",
            ":::NaN",
            "-1:::",
            ":-4::",
            "1:2:3:0.5:9",
            "::-2:",
        ] {
            match Freq::parse(bad) {
                Err(FaultError::InvalidArgument(_)) => {}
                other => panic!("{bad:?} should be rejected, got {other:?}"),
            }
        }
        assert_eq!(Freq::parse(":::1").unwrap().prob, 1.0);
        assert_eq!(Freq::parse(":::0.25").unwrap().prob, 0.25);
    }
}
