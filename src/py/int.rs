//! Python's `int`: an integer of any size, and the `int()` conversion.
//!
//! Values within i128 (every real timestamp, count and sum) are held and
//! added in machine arithmetic; only a value past it (a float such as `1e308`
//! read with `int()`, a sum of several such) takes the arbitrary-precision
//! path.
use std::cmp::Ordering;
use std::fmt;

use num_bigint::BigInt;
use num_traits::{FromPrimitive, ToPrimitive, Zero};
use serde_json::Value;

use crate::py::json as pyjson;
use crate::py::text::{number_text, repr_str};

/// A Python integer. `Big` only ever holds a value outside i128, so each
/// value has one representation and comparisons can rely on it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Int {
    Small(i128),
    Big(BigInt),
}

/// A running sum of Python integers, exact at any size: terms that fit an
/// i64 add into a plain i128 (which 2^64 such terms cannot overflow), any
/// other term into an [`Int`] beside it. Integer addition is associative,
/// so the total is exactly the left-to-right sum of the same terms.
#[derive(Debug, Clone, Default)]
pub struct IntSum {
    small: i128,
    rest: Option<Int>,
}

impl IntSum {
    /// Adds a term: an i64, or (`Err`) an integer of any size.
    #[inline]
    pub fn take(&mut self, term: Result<i64, Int>) {
        match term {
            Ok(v) => self.small += i128::from(v),
            Err(big) => {
                let rest = self.rest.take().unwrap_or_default();
                self.rest = Some(rest.add(&big));
            }
        }
    }

    /// The sum of every term taken.
    pub fn total(&self) -> Int {
        let small = Int::Small(self.small);
        match &self.rest {
            Some(rest) => small.add(rest),
            None => small,
        }
    }
}

impl Default for Int {
    fn default() -> Self {
        Int::Small(0)
    }
}

impl From<i64> for Int {
    fn from(i: i64) -> Self {
        Int::Small(i128::from(i))
    }
}

impl From<u64> for Int {
    fn from(u: u64) -> Self {
        Int::Small(i128::from(u))
    }
}

impl From<i128> for Int {
    fn from(i: i128) -> Self {
        Int::Small(i)
    }
}

impl From<BigInt> for Int {
    fn from(b: BigInt) -> Self {
        match b.to_i128() {
            Some(i) => Int::Small(i),
            None => Int::Big(b),
        }
    }
}

impl Int {
    fn big(&self) -> BigInt {
        match self {
            Int::Small(i) => BigInt::from(*i),
            Int::Big(b) => b.clone(),
        }
    }

    /// [`Int::from_f64`] where the integer is an i64 (every count and
    /// timestamp); `None` for NaN, infinities and anything past i64. The
    /// hardware conversion truncates toward zero itself: no `trunc` call,
    /// no 128-bit conversion in software; NaN fails the comparison.
    #[inline]
    pub fn i64_of_f64(f: f64) -> Option<i64> {
        (f.abs() < 9_223_372_036_854_775_808.0).then_some(f as i64)
    }

    /// Python's `int(f)` of a float: truncated toward zero, exactly (a float
    /// past 2^127 is an integer already and converts without loss). `None`
    /// for NaN and infinities, which Python refuses.
    pub fn from_f64(f: f64) -> Option<Int> {
        if let Some(v) = Int::i64_of_f64(f) {
            return Some(Int::Small(i128::from(v)));
        }
        if !f.is_finite() {
            return None;
        }
        let t = f.trunc();
        // 2^127 is exactly representable; anything below it fits an i128.
        if t.abs() < 170_141_183_460_469_231_731_687_303_715_884_105_728.0 {
            Some(Int::Small(t as i128))
        } else {
            BigInt::from_f64(t).map(Int::from)
        }
    }

    /// The value of a JSON integer literal (an optional minus and digits).
    pub fn parse_literal(text: &str) -> Option<Int> {
        let digits = text.strip_prefix('-').unwrap_or(text);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        if digits.len() <= 38 {
            return text.parse::<i128>().ok().map(Int::Small);
        }
        text.parse::<BigInt>().ok().map(Int::from)
    }

    /// The value as an i128, saturating past it.
    pub fn saturating_i128(&self) -> i128 {
        match self {
            Int::Small(i) => *i,
            Int::Big(_) if self.is_negative() => i128::MIN,
            Int::Big(_) => i128::MAX,
        }
    }

    /// The value as an i64, when it fits.
    pub fn to_i64(&self) -> Option<i64> {
        match self {
            Int::Small(i) => i64::try_from(*i).ok(),
            Int::Big(_) => None,
        }
    }

    /// Python's `float(i)`: the nearest float; `None` where Python raises
    /// `OverflowError: int too large to convert to float`.
    pub fn to_f64(&self) -> Option<f64> {
        let f = match self {
            Int::Small(i) => *i as f64,
            Int::Big(b) => b.to_f64()?,
        };
        f.is_finite().then_some(f)
    }

    /// Python's `self / d` (true division of integers): the exact quotient
    /// rounded once to the nearest float, not `float(self) / d`. `None` for
    /// a zero divisor or a quotient past the floats' range.
    pub fn true_div(&self, d: u64) -> Option<f64> {
        if d == 0 {
            return None;
        }
        // Both exact as floats: one IEEE division rounds the exact quotient.
        if let (Int::Small(n), true) = (self, d <= 1 << 53) {
            if n.unsigned_abs() <= 1 << 53 {
                return Some(*n as f64 / d as f64);
            }
        }
        let n = self.big();
        let negative = n < BigInt::zero();
        let mut num = n.magnitude().clone();
        let mut den = num_bigint::BigUint::from(d);
        // Scale so the quotient has 55 or 56 bits, then fold the remainder
        // into its lowest bit (sticky): converting that to a float rounds
        // as the exact quotient would.
        let shift = 55 + den.bits() as i64 - num.bits() as i64;
        if shift > 0 {
            num <<= shift as usize;
        } else {
            den <<= (-shift) as usize;
        }
        let (q, r) = (&num / &den, &num % &den);
        let q = q.to_u64()? | u64::from(!r.is_zero());
        let f = (q as f64) * 2f64.powi(-(shift as i32));
        let f = if negative { -f } else { f };
        f.is_finite().then_some(f)
    }

    /// `self + other`, exactly.
    pub fn add(&self, other: &Int) -> Int {
        if let (Int::Small(a), Int::Small(b)) = (self, other) {
            if let Some(s) = a.checked_add(*b) {
                return Int::Small(s);
            }
        }
        Int::from(self.big() + other.big())
    }

    /// `self - other`, exactly.
    pub fn sub(&self, other: &Int) -> Int {
        if let (Int::Small(a), Int::Small(b)) = (self, other) {
            if let Some(s) = a.checked_sub(*b) {
                return Int::Small(s);
            }
        }
        Int::from(self.big() - other.big())
    }

    pub fn is_negative(&self) -> bool {
        match self {
            Int::Small(i) => *i < 0,
            Int::Big(b) => b < &BigInt::zero(),
        }
    }

    /// The value as a JSON value: a JSON number where serde_json holds it
    /// exactly, otherwise `pyjson`'s exact-integer form, which prints as
    /// the digits.
    pub fn to_json(&self) -> Value {
        match self {
            Int::Small(i) => match (i64::try_from(*i), u64::try_from(*i)) {
                (Ok(s), _) => Value::from(s),
                (_, Ok(u)) => Value::from(u),
                _ => pyjson::big_int_value(&self.to_string()),
            },
            Int::Big(_) => pyjson::big_int_value(&self.to_string()),
        }
    }
}

impl Ord for Int {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Int::Small(a), Int::Small(b)) => a.cmp(b),
            // A `Big` lies outside i128: its sign says on which side.
            (Int::Small(_), Int::Big(b)) => {
                if b.is_zero() || b > &BigInt::zero() {
                    Ordering::Less
                } else {
                    Ordering::Greater
                }
            }
            (Int::Big(_), Int::Small(_)) => other.cmp(self).reverse(),
            (Int::Big(a), Int::Big(b)) => a.cmp(b),
        }
    }
}

impl PartialOrd for Int {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Int {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Int::Small(i) => write!(f, "{i}"),
            Int::Big(b) => write!(f, "{b}"),
        }
    }
}

/// Python's default limit on the digits `int()` converts from a string.
const MAX_STR_DIGITS: usize = 4300;

/// Python's `int(s)` of a string (base 10): surrounding whitespace as
/// [`number_text`] strips it, a sign, any Unicode decimal digits, single
/// underscores between digits; past 4300 digits Python's limit error.
pub fn int_of_str(s: &str) -> Result<Int, String> {
    let invalid = || format!("invalid literal for int() with base 10: {}", repr_str(s));
    let t = number_text(s).ok_or_else(invalid)?;
    let (negative, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t.as_str()),
    };
    let mut ascii = String::with_capacity(body.len() + 1);
    if negative {
        ascii.push('-');
    }
    let mut last_underscore = true; // no leading underscore
    let mut digits = 0usize;
    for c in body.chars() {
        if c == '_' {
            if last_underscore {
                return Err(invalid());
            }
            last_underscore = true;
            continue;
        }
        if !c.is_ascii_digit() {
            return Err(invalid());
        }
        ascii.push(c);
        digits += 1;
        last_underscore = false;
    }
    if digits == 0 || last_underscore {
        return Err(invalid());
    }
    if digits > MAX_STR_DIGITS {
        return Err(format!(
            "Exceeds the limit ({MAX_STR_DIGITS} digits) for integer string conversion: \
             value has {digits} digits; use sys.set_int_max_str_digits() to increase the limit"
        ));
    }
    Int::parse_literal(&ascii).ok_or_else(invalid)
}

/// [`int_of_str`] for callers that do i128 arithmetic: `None` where Python
/// raises and where the value lies outside i128.
pub fn parse_int(s: &str) -> Option<i128> {
    match int_of_str(s) {
        Ok(Int::Small(i)) => Some(i),
        _ => None,
    }
}

/// Python's `int(v or 0)` of a decoded JSON value, as the reference applies
/// it to a request's `output_tokens` (latency_report's tokens per chunk):
/// falsy values are 0, numbers and strings convert, anything else is the
/// reference's error (its CLI prints it and exits 1).
pub fn int_call(v: &Value) -> Result<Int, String> {
    match v {
        Value::Null => Ok(Int::default()),
        Value::Bool(b) => Ok(Int::from(i64::from(*b))),
        Value::Number(_) => Ok(int_value(v)),
        Value::String(s) => {
            if let Some(i) = pyjson::big_int(v) {
                return Ok(i);
            }
            match pyjson::sentinel_f64(s) {
                Some(f) if f.is_nan() => Err("cannot convert float NaN to integer".into()),
                Some(_) => Err("cannot convert float infinity to integer".into()),
                None if s.is_empty() => Ok(Int::default()),
                None => int_of_str(s),
            }
        }
        Value::Array(a) if a.is_empty() => Ok(Int::default()),
        Value::Object(m) if m.is_empty() => Ok(Int::default()),
        Value::Array(_) => Err(not_a_number("list")),
        Value::Object(_) => Err(not_a_number("dict")),
    }
}

fn not_a_number(kind: &str) -> String {
    format!("int() argument must be a string, a bytes-like object or a real number, not '{kind}'")
}

/// docs/artifact.md §6: `int_value`, exactly: integers as they are, finite floats
/// truncated toward zero, anything else (booleans included) 0.
pub fn int_value(v: &Value) -> Int {
    if let Some(i) = pyjson::big_int(v) {
        return i;
    }
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Int::from(i)
            } else if let Some(u) = n.as_u64() {
                Int::from(u)
            } else {
                n.as_f64().and_then(Int::from_f64).unwrap_or_default()
            }
        }
        _ => Int::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An [`IntSum`] totals exactly what adding the same terms one by one
    /// with [`Int::add`] gives: i64 terms at both edges (their i128 sum
    /// leaves i64), huge terms of both signs between them, in any order.
    #[test]
    #[allow(clippy::unwrap_used)]
    fn a_running_sum_equals_the_sum_of_its_terms() {
        let huge = Int::parse_literal("123456789012345678901234567890123456789012").unwrap();
        let terms: Vec<Result<i64, Int>> = vec![
            Ok(i64::MAX),
            Ok(i64::MAX),
            Err(huge.clone()),
            Ok(i64::MIN),
            Ok(-5),
            Err(Int::from(0i64).sub(&huge)),
            Err(Int::from(3i64)),
            Ok(i64::MAX),
            Err(huge.add(&huge)),
        ];
        for take in [terms.len(), 1, 2, 3, 5] {
            let mut sum = IntSum::default();
            let mut want = Int::default();
            for t in terms.iter().take(take) {
                sum.take(t.clone());
                want = want.add(&match t {
                    Ok(v) => Int::from(*v),
                    Err(big) => big.clone(),
                });
            }
            assert_eq!(sum.total(), want, "first {take} terms");
        }
        assert_eq!(IntSum::default().total(), Int::default());
    }

    fn big(s: &str) -> Int {
        Int::parse_literal(s).expect("literal")
    }

    /// Values Python gives (checked with CPython 3.11).
    #[test]
    fn sums_and_differences_are_exact_past_64_bits() {
        let two63 = big("9223372036854775808");
        assert_eq!(
            two63.add(&Int::from(756i64)).to_string(),
            "9223372036854776564"
        );
        let e30 = big("1000000000000000000000000000000");
        assert_eq!(
            e30.sub(&Int::from(1i64)).to_string(),
            "999999999999999999999999999999"
        );
        // int(1e308) is the float's exact value.
        let f = Int::from_f64(1e308).expect("finite");
        assert!(f.to_string().starts_with("100000000000000001097906362944045541740492309677311846336810682903157585404911491537163328978494688899061249669721172515611590283743140088328307009198146046031271664502933027185697489699588559043338384466165001178426897626212945177628091195786707458122783970171784415105291802893207873272974885715430223118336"));
        assert_eq!(f.to_string().len(), 309);
        let twice = f.add(&f);
        assert!(twice > f && f > e30 && e30 > two63);
        assert_eq!(twice.to_f64(), None, "float(2e308) overflows in Python");
        assert_eq!(f.to_f64(), Some(1e308));
        assert!(Int::from_f64(-1e308).expect("finite") < Int::from(i64::MIN));
        assert_eq!(Int::from_f64(-2.9), Some(Int::from(-2i64)));
        assert_eq!(Int::from_f64(f64::NAN), None);
        assert_eq!(Int::from_f64(f64::INFINITY), None);
        assert_eq!(Int::from_f64(-0.0), Some(Int::from(0i64)));
        // Either side of 2^63, where the conversion changes path.
        let below = 9_223_372_036_854_774_784.0; // the float before 2^63
        let p63 = 2f64.powi(63);
        assert_eq!(Int::from_f64(below), Some(Int::from(i64::MAX - 1023)));
        assert_eq!(Int::from_f64(-below), Some(Int::from(i64::MIN + 1024)));
        assert_eq!(Int::from_f64(-p63), Some(Int::from(i64::MIN)));
        assert_eq!(
            Int::from_f64(p63),
            Some(Int::from(i128::from(i64::MAX) + 1))
        );
    }

    /// Python's `(10**30 + 304) / 320` is 3.125e+27; `float(n) / 320` is not.
    #[test]
    fn true_division_rounds_the_exact_quotient_once() {
        let n = big("1000000000000000000000000000304");
        assert_eq!(n.true_div(320), Some(3.125e27));
        assert_eq!(Int::from(7i64).true_div(2), Some(3.5));
        assert_eq!(
            big("-9223372036854775809").true_div(3),
            Some(-3.0744573456182584e18)
        );
        assert_eq!(Int::from(1i64).true_div(0), None);
    }

    #[test]
    fn int_call_follows_python() {
        let ok = |v: Value| int_call(&v).map(|i| i.to_string());
        assert_eq!(ok(json!(" 1_2 ")), Ok("12".into()));
        assert_eq!(ok(json!("\u{661}\u{662}")), Ok("12".into()));
        assert_eq!(ok(json!("-7")), Ok("-7".into()));
        assert_eq!(ok(json!(true)), Ok("1".into()));
        assert_eq!(ok(json!(12.7)), Ok("12".into()));
        assert_eq!(ok(json!("")), Ok("0".into()));
        assert_eq!(ok(json!([])), Ok("0".into()));
        assert_eq!(
            ok(json!("abc")),
            Err("invalid literal for int() with base 10: 'abc'".into())
        );
        for bad in ["1__2", "_1", "1_", "+", " ", "1.0", "0x10"] {
            assert!(ok(json!(bad)).is_err(), "{bad}");
        }
        assert_eq!(
            ok(json!([1])),
            Err(
                "int() argument must be a string, a bytes-like object or a real number, not 'list'"
                    .into()
            )
        );
        assert_eq!(
            ok(Value::String(pyjson::NAN.into())),
            Err("cannot convert float NaN to integer".into())
        );
        assert_eq!(
            ok(Value::String(pyjson::NEG_INF.into())),
            Err("cannot convert float infinity to integer".into())
        );
    }

    #[test]
    fn int_of_str_matches_cpython() {
        // Generated once with CPython 3.11.7 (python3 on the build machine) and pasted.
        // (s, str(int(s)) or the ValueError's message)
        #[rustfmt::skip]
        let cases: &[(&str, Result<&str, &str>)] = &[
            ("1", Ok("1")),
            ("-7", Ok("-7")),
            (" 1_000 ", Ok("1000")),
            ("\u{661}\u{662}\u{663}", Ok("123")),
            ("\u{ff11}\u{ff12}", Ok("12")),
            ("1_2", Ok("12")),
            ("1__2", Err("invalid literal for int() with base 10: '1__2'")),
            ("_1", Err("invalid literal for int() with base 10: '_1'")),
            ("1_", Err("invalid literal for int() with base 10: '1_'")),
            ("+", Err("invalid literal for int() with base 10: '+'")),
            ("", Err("invalid literal for int() with base 10: ''")),
            (" ", Err("invalid literal for int() with base 10: ' '")),
            ("1.5", Err("invalid literal for int() with base 10: '1.5'")),
            (".5", Err("invalid literal for int() with base 10: '.5'")),
            ("5.", Err("invalid literal for int() with base 10: '5.'")),
            ("1e3", Err("invalid literal for int() with base 10: '1e3'")),
            ("1E-2", Err("invalid literal for int() with base 10: '1E-2'")),
            ("1_0.5", Err("invalid literal for int() with base 10: '1_0.5'")),
            ("1._5", Err("invalid literal for int() with base 10: '1._5'")),
            ("inf", Err("invalid literal for int() with base 10: 'inf'")),
            ("-Infinity", Err("invalid literal for int() with base 10: '-Infinity'")),
            ("nAn", Err("invalid literal for int() with base 10: 'nAn'")),
            ("+nan", Err("invalid literal for int() with base 10: '+nan'")),
            ("in_f", Err("invalid literal for int() with base 10: 'in_f'")),
            ("0x10", Err("invalid literal for int() with base 10: '0x10'")),
            ("1\u{1c}", Err("invalid literal for int() with base 10: '1\\x1c'")),
            ("\u{1c}1", Err("invalid literal for int() with base 10: '\\x1c1'")),
            ("1\u{1f}", Err("invalid literal for int() with base 10: '1\\x1f'")),
            ("1\u{85}", Ok("1")),
            ("\u{85}1", Ok("1")),
            ("1\u{3000}", Ok("1")),
            ("\u{3000}1", Ok("1")),
            ("1\u{a0}", Ok("1")),
            ("1\u{b}", Ok("1")),
            ("\u{9}1\u{a}", Ok("1")),
            ("- 1", Err("invalid literal for int() with base 10: '- 1'")),
            ("1 2", Err("invalid literal for int() with base 10: '1 2'")),
            ("\u{661}.\u{662}", Err("invalid literal for int() with base 10: '\u{661}.\u{662}'")),
            ("1e\u{663}", Err("invalid literal for int() with base 10: '1e\u{663}'")),
            ("12345678901234567890123456789012345678901234567890", Ok("12345678901234567890123456789012345678901234567890")),
            ("-99999999999999999999999999999999999999999", Ok("-99999999999999999999999999999999999999999")),
            ("abc", Err("invalid literal for int() with base 10: 'abc'")),
            ("\u{661}_\u{662}", Ok("12")),
            ("\u{2028} 1", Ok("1")),
            (" 1e400 ", Err("invalid literal for int() with base 10: ' 1e400 '")),
            ("\u{b2}", Err("invalid literal for int() with base 10: '\u{b2}'")),
        ];
        for &(s, want) in cases {
            let got = int_of_str(s).map(|i| i.to_string());
            assert_eq!(got.as_deref().map_err(String::as_str), want, "int({s:?})");
        }
        assert_eq!(parse_int(" \u{661}2 "), Some(12));
        assert_eq!(parse_int("1\u{1c}"), None);
        let past_i128 = "1".repeat(40);
        assert_eq!(parse_int(&past_i128), None);
        assert_eq!(int_of_str(&past_i128).map(|i| i.to_string()), Ok(past_i128));
        assert!(int_of_str(&"9".repeat(4301))
            .is_err_and(|e| e.starts_with("Exceeds the limit (4300 digits)")));
    }
}
