//! Python's `float`: `repr()`, the JSON spellings of NaN/±∞, and the
//! `format()` specs the reports use (`g`, `f`, `%`), and `float(str)`.

use crate::py::text::number_text;

/// Python `repr(float)` (shortest round-trip digits; scientific notation when
/// the decimal exponent is outside [-4, 16)), with the JSON spellings `NaN`,
/// `Infinity`, `-Infinity` for non-finite values.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned();
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if f == 0.0 {
        return format!("{sign}0.0");
    }
    let (digits, point) = shortest_digits(f.abs());
    let n = digits.len() as i32;
    let exp = point - 1;
    let body = if (-4..16).contains(&exp) {
        if point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else if point >= n {
            format!("{digits}{}.0", "0".repeat((point - n) as usize))
        } else {
            let (int, frac) = digits.split_at(point as usize);
            format!("{int}.{frac}")
        }
    } else {
        let (first, rest) = digits.split_at(1);
        let dot = if rest.is_empty() { "" } else { "." };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{first}{dot}{rest}e{esign}{:02}", exp.abs())
    };
    format!("{sign}{body}")
}

/// Shortest round-trip significant digits of a positive finite `f` (from
/// ryu) and the position of the decimal point relative to them:
/// `f = 0.DIGITS × 10^point`.
fn shortest_digits(f: f64) -> (String, i32) {
    let mut buf = ryu::Buffer::new();
    let text = buf.format_finite(f);
    let (mantissa, exp) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (text, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{int}{frac}");
    let trimmed = all.trim_start_matches('0');
    let lead = (all.len() - trimmed.len()) as i32;
    let digits = trimmed.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    (digits.to_owned(), int.len() as i32 - lead + exp)
}

/// Python's `repr(f)` (and `str(f)`): [`float_repr`] with `nan`, `inf` and
/// `-inf` for the non-finite values.
pub fn repr(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        float_repr(f)
    }
}

/// The sign Python's `format()` writes: `-` for a negative number (`-0.0`
/// included), `+` for any other when `plus`; never one for a NaN unless
/// `plus` (CPython drops the sign bit of a NaN, which Rust's `0.0 / 0.0`
/// sets on x86).
fn sign(x: f64, plus: bool) -> &'static str {
    if x.is_sign_negative() && !x.is_nan() {
        "-"
    } else if plus {
        "+"
    } else {
        ""
    }
}

/// Python's `nan`/`inf` spelling in `format()`, unsigned.
fn nonfinite(x: f64) -> Option<&'static str> {
    if x.is_nan() {
        Some("nan")
    } else if x.is_infinite() {
        Some("inf")
    } else {
        None
    }
}

/// What Python's `format(x, spec)` prints for a non-finite `x` without a
/// `+`: `nan`, `inf` or `-inf`; `None` for a finite `x`.
pub fn nonfinite_word(x: f64) -> Option<&'static str> {
    match nonfinite(x) {
        Some("inf") if x < 0.0 => Some("-inf"),
        word => word,
    }
}

/// Python's `format(x, ".{precision}g")` (`"+.{precision}g"` when `plus`):
/// `precision` significant digits (0 counts as 1), trailing zeros dropped,
/// exponent form when the exponent after rounding is below -4 or at least
/// `precision`.
pub fn format_g(x: f64, precision: usize, plus: bool) -> String {
    let sign = sign(x, plus);
    if let Some(word) = nonfinite(x) {
        return format!("{sign}{word}");
    }
    let a = x.abs();
    if a == 0.0 {
        return format!("{sign}0");
    }
    let p = precision.max(1);
    // Rounding to p significant digits first decides the exponent (9.999995
    // becomes 10.0000 at six digits, exponent 1), as Python's formatter does;
    // Rust's `{:e}` rounds the exact binary value half to even, as CPython.
    let sci = format!("{:.*e}", p - 1, a);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{}e{esign}{:02}", strip_zeros(mantissa), exp.abs());
    }
    let decimals = usize::try_from(p as i32 - 1 - exp).unwrap_or(0);
    format!("{sign}{}", strip_zeros(&format!("{a:.decimals$}")))
}

/// Python's `format(x, "g")`: [`format_g`] with six digits.
pub fn g(x: f64) -> String {
    format_g(x, 6, false)
}

/// `g`'s rule for trailing zeros: those after a decimal point go, and the
/// point with them when nothing follows it.
fn strip_zeros(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text.to_owned()
    }
}

/// Python's `format(x, ".{decimals}f")` (`"+.{decimals}f"` when `plus`):
/// the exact binary value rounded half to even, as CPython does.
pub fn fixed(x: f64, decimals: usize, plus: bool) -> String {
    let sign = sign(x, plus);
    match nonfinite(x) {
        Some(word) => format!("{sign}{word}"),
        None => format!("{sign}{:.decimals$}", x.abs()),
    }
}

/// Python's `format(x, ".{decimals}%")` (`"+.{decimals}%"` when `plus`):
/// `x * 100` (one float multiplication, as CPython) in [`fixed`] form, then `%`.
pub fn percent(x: f64, decimals: usize, plus: bool) -> String {
    format!("{}%", fixed(x * 100.0, decimals, plus))
}

/// Python's `float(s)` of a string: surrounding whitespace as
/// [`number_text`] strips it, a sign, `inf`/`infinity`/`nan` in any case, or
/// a decimal with optional exponent where single underscores may join
/// digits; Unicode decimal digits read as digits. `None` where Python raises.
pub fn float_of_str(s: &str) -> Option<f64> {
    let text = number_text(s)?;
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text.as_str()),
    };
    let magnitude = match body.to_ascii_lowercase().as_str() {
        "inf" | "infinity" => f64::INFINITY,
        "nan" => f64::NAN,
        _ => decimal(body)?,
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// `digits[.digits]`, `.digits` or `digits.`, then `e[sign]digits`.
fn decimal(body: &str) -> Option<f64> {
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let int = digit_part(int)?;
    let frac = digit_part(frac)?;
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut clean = format!(
        "{}.{}",
        if int.is_empty() { "0" } else { &int },
        if frac.is_empty() { "0" } else { &frac }
    );
    if let Some(exp) = exponent {
        let (sign, digits) = match exp.as_bytes().first() {
            Some(b'-') => ("-", &exp[1..]),
            Some(b'+') => ("", &exp[1..]),
            _ => ("", exp),
        };
        let digits = digit_part(digits).filter(|d| !d.is_empty())?;
        clean.push('e');
        clean.push_str(sign);
        clean.push_str(&digits);
    }
    clean.parse().ok()
}

/// A run of ASCII digits where a single `_` may sit between two digits;
/// returned without the underscores (empty input gives an empty run).
fn digit_part(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = String::with_capacity(b.len());
    for (i, &c) in b.iter().enumerate() {
        if c.is_ascii_digit() {
            out.push(c as char);
        } else if c == b'_'
            && i > 0
            && b[i - 1].is_ascii_digit()
            && b.get(i + 1).is_some_and(u8::is_ascii_digit)
        {
            continue;
        } else {
            return None;
        }
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn float_repr_matches_python() {
        // Expected strings printed by CPython 3.11 `repr(float)`.
        #[rustfmt::skip]
        let cases: &[(f64, &str)] = &[
            (5.0, "5.0"), (1000000000000000.0, "1000000000000000.0"), (1e16, "1e+16"),
            (1.2345678901234568e17, "1.2345678901234568e+17"),
            (123456789012345680.0, "1.2345678901234568e+17"), (1e-5, "1e-05"), (1.5e-7, "1.5e-07"),
            (1e-7, "1e-07"), (-0.0, "-0.0"), (0.0, "0.0"), (0.1, "0.1"), (1e22, "1e+22"),
            (0.0001, "0.0001"), (0.00001, "1e-05"), (2.5e-05, "2.5e-05"),
            (1.7976931348623157e308, "1.7976931348623157e+308"), (5e-324, "5e-324"),
            (9999999999999998.0, "9999999999999998.0"), (0.3, "0.3"),
            (2.0 / 3.0, "0.6666666666666666"), (-1.5, "-1.5"), (100.0, "100.0"), (1e100, "1e+100"),
            (12345.678, "12345.678"), (f64::NAN, "NaN"), (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for (f, want) in cases {
            assert_eq!(float_repr(*f), *want, "repr of {f:e}");
        }
    }
}
